"""What every command shares: the group, exit codes, friendly errors and console helpers.

Only the cli package prints and exits. Problems with the user's input are BuildlogError: a
one-line message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

import click

from buildlog import __version__
from buildlog.errors import BuildlogError

EXIT_OK = 0
EXIT_FAILURES_FOUND = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

F = TypeVar("F", bound=Callable[..., Any])


def friendly(func: F) -> F:
    """Turn BuildlogError into a message and exit code 2; keep tracebacks for real bugs only on request."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except BuildlogError as exc:
            click.echo(f"buildlog: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        except BrokenPipeError:
            sys.stderr.close()
            sys.exit(EXIT_OK)
        except KeyboardInterrupt:
            click.echo("buildlog: interrupted", err=True)
            sys.exit(130)
        except Exception as exc:  # a bug in buildlog, not in the input: say so in one line
            if os.environ.get("BUILDLOG_DEBUG"):
                raise
            click.echo(
                f"buildlog: internal error: {type(exc).__name__}: {exc} (BUILDLOG_DEBUG=1 shows the traceback)",
                err=True,
            )
            sys.exit(EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="buildlog")
def main() -> None:
    """Explain failed GPU builds from their logs, offline.

    Give it the output of a failed `pip install flash-attn` (or xformers, apex, vllm, a torch
    cpp_extension build, a bare nvcc compile) and it says what went wrong, the lines that prove
    it, and the fix with this log's versions filled in.

    \b
    Examples:
      buildlog explain build.log
      pip install flash-attn 2>&1 | buildlog explain -
      buildlog explain ci-log.txt.gz --format markdown > ticket.md
      buildlog explain build.log --format json | jq '.root_causes[0].id'
    """


FORMATS = click.Choice(["terminal", "markdown", "json"])


def _emit(report: Any, fmt: str, color: bool | None, width: int | None) -> None:
    if fmt == "json":
        from buildlog.render.jsonout import render_json

        sys.stdout.write(render_json(report))
    elif fmt == "markdown":
        from buildlog.render.markdown import render_markdown

        sys.stdout.write(render_markdown(report))
    else:
        from buildlog.render.terminal import render_terminal

        render_terminal(report, _console(color, width))


def _console(color: bool | None, width: int | None) -> Any:
    from rich.console import Console

    no_color = color is False or (color is None and "NO_COLOR" in os.environ)
    if width is None and not sys.stdout.isatty():
        width = 100
    return Console(
        force_terminal=True if color else None, no_color=no_color, width=width, highlight=False, soft_wrap=False
    )


STORE_HELP = "The store file (default: $BUILDLOG_STORE, else store.sqlite in the user's data directory)."
LISTING = click.Choice(["table", "json"])


def store_option(func: F) -> F:
    """--store PATH, the same on every command that reads or writes the store."""
    return click.option("--store", default=None, metavar="PATH", help=STORE_HELP)(func)  # type: ignore[return-value]


def _store(store: str | None, create: bool = False) -> Any:
    """The opened store, or None when there is none yet (only `corpus add` and `import` create one)."""
    from buildlog.store.db import Store
    from buildlog.store.paths import store_path

    return Store.open(store_path(store), create=create)


def _where(store: str | None) -> str:
    """The store's path as the messages name it."""
    from buildlog.store.paths import store_path

    return str(store_path(store))


def _show(renderable: Any) -> None:
    """Print a table without the padding rich puts at the end of each line (pasted output stays clean)."""
    console = _console(None, None)
    with console.capture() as captured:
        console.print(renderable)
    sys.stdout.write("\n".join(line.rstrip() for line in captured.get().split("\n")))


def _json(data: Any) -> None:
    """JSON for scripts: indented, non-ASCII kept readable."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
