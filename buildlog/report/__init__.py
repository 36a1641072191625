"""Assemble: the Report from what the earlier stages found, and its published schema."""
