"""Allows `python -m buildlog`."""

from buildlog.cli import main

main()
