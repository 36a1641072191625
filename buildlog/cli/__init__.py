"""Command line: each command reads its input, analyses, renders and exits with a named code."""

from buildlog.cli import develop, explain, store  # noqa: F401  (registers the commands)
from buildlog.cli.base import main

__all__ = ["main"]
