"""Command line: each command reads its input, analyses, renders and exits with a named code."""

import gc

# The cycle collector runs after this many new objects (Python's default is 700). Start-up (the
# imports, the knowledge) builds a few hundred thousand objects that live for the whole run, and
# the analysis makes no cycles worth collecting: with the collector off a 10 MB log peaks at the
# same memory and runs 10-15% faster, while at 700 it walks those objects again and again. The
# threshold stays finite so that an input which did make cycles is still collected. Set before the
# commands are imported, since importing them is most of start-up.
COLLECT_AFTER = 100_000
gc.set_threshold(COLLECT_AFTER, *gc.get_threshold()[1:])

from buildlog.cli import develop, doctor, explain, reference, scan, store  # noqa: E402, F401  (registers the commands)
from buildlog.cli import run as _run_command  # noqa: E402, F401  (`buildlog run`; the name `run` is the console script)
from buildlog.cli.base import main  # noqa: E402

__all__ = ["main", "run"]


def run() -> None:
    """The console script: the command group, then a quick way out.

    At exit the interpreter walks every object still alive looking for reference cycles; once
    lark and the knowledge have built their tables, that walk costs a twentieth of explaining a
    small log. Nothing alive at exit needs it (inputs and the store are closed by then), so the
    survivors are frozen out of the collector before the interpreter shuts down.
    """
    try:
        main()
    finally:
        gc.freeze()
