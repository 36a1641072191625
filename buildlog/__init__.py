"""buildlog: explains failed GPU builds from their logs, offline."""

__version__ = "0.1.0"
