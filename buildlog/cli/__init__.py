"""Command line: each command reads its input, analyses, renders and exits with a named code."""

import gc

from buildlog.cli import develop, doctor, explain, reference, scan, store  # noqa: F401  (registers the commands)
from buildlog.cli import run as _run_command  # noqa: F401  (`buildlog run`; the name `run` is the console script)
from buildlog.cli.base import main

__all__ = ["main", "run"]


def run() -> None:
    """The console script: the command group, then a quick way out.

    At exit the interpreter walks every object still alive looking for reference cycles; once
    pydantic and lark have built their tables, that walk costs about as much as explaining a
    small log. Nothing alive at exit needs it (inputs and the store are closed by then), so the
    survivors are frozen out of the collector before the interpreter shuts down.
    """
    try:
        main()
    finally:
        gc.freeze()
