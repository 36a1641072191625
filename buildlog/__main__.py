"""Allows `python -m buildlog`."""

from buildlog.cli import run

run()
