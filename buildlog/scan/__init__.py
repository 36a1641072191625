"""Scan: one fast pass over the raw bytes that picks the lines worth parsing."""
