"""Stores of past failures: the on-disk case format and the SQLite store."""
