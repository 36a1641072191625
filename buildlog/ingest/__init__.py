"""Ingest: bytes in, chunks and cleaned lines out, with the original line numbers kept."""
