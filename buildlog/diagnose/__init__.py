"""Diagnose: rules (data) first, cross-fact checks, and the classifier for what no rule explains."""
