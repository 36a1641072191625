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
            if _debug():
                raise
            click.echo(
                f"buildlog: internal error: {type(exc).__name__}: {exc} (BUILDLOG_DEBUG=1 shows the traceback)",
                err=True,
            )
            sys.exit(EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]


def _debug() -> bool:
    from buildlog.cli.settings import flag

    try:
        return flag(os.environ, "BUILDLOG_DEBUG")
    except BuildlogError:
        return False


def settings() -> Any:
    """This run's checked settings (environment and config file)."""
    from pathlib import Path

    from buildlog.cli.settings import read_settings

    try:
        cwd = Path.cwd()
    except OSError:  # the current folder was removed: no config to find
        cwd = Path("/")
    return read_settings(os.environ, cwd)


def store_file(option: str | None) -> Any:
    """The store's path: --store, else $BUILDLOG_STORE, else the user data folder's."""
    from buildlog.store.paths import store_path

    return store_path(option, os.environ)


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


STORE_HELP = "The store: a SQLite file or a postgresql://USER@HOST/DB URL (default: $BUILDLOG_STORE, else store.sqlite in the user's data directory)."
LISTING = click.Choice(["table", "json"])


def store_option(func: F) -> F:
    """--store PATH, the same on every command that reads or writes the store."""
    return click.option("--store", default=None, metavar="PATH", help=STORE_HELP)(func)  # type: ignore[return-value]


def _store(store: str | None, create: bool = False) -> Any:
    """The opened store, or None when there is none yet (only `corpus add` and `import` create one)."""
    from buildlog.store.backend import open_store

    return open_store(store_file(store), create=create)


def _where(store: str | None) -> str:
    """The store's path as the messages name it (a URL without its password)."""
    from buildlog.store.backend import is_url

    where = store_file(store)
    if is_url(where):
        from buildlog.store.pg import safe_url

        return safe_url(str(where))
    return str(where)


def rules_option(func: F) -> F:
    """--rules DIR (repeatable): rule files or folders added to the bundled rules."""
    return click.option(  # type: ignore[return-value]
        "--rules", "rules", multiple=True, metavar="DIR",
        help="A folder (or file) of your own rules to add to the bundled ones; repeatable. Also $BUILDLOG_RULES and [tool.buildlog] rules.",
    )(func)  # fmt: skip


def analyse_log(
    log: str, redact_paths: bool = False, rules: tuple[str, ...] = (), store: Any = None, recall: Any = None
) -> Any:
    """Open a log and run the pipeline over it with this run's settings (`store`: for seen-before)."""
    from buildlog.ingest.reader import open_source
    from buildlog.pipeline import Options, trace

    chosen = settings()
    knowledge = knowledge_with(chosen, rules)
    if recall is None and store is not False:
        from buildlog.store.similar import PastFailures

        recall = PastFailures(store_file(store or chosen.store))
    options = Options(
        redact_paths=redact_paths or chosen.redact_paths, engine=chosen.engine, cache=chosen.cache,
        progress=sys.stderr.isatty(),
    )  # fmt: skip
    source = open_source(log)
    with source.stream:
        analysis = trace(source, knowledge, recall, options)
    note = getattr(recall, "note", "")
    if note:
        click.echo(f"buildlog: {note}", err=True)
    return analysis


def knowledge_with(chosen: Any, rules: tuple[str, ...] = ()) -> Any:
    from buildlog.cli.settings import knowledge_for

    return knowledge_for(chosen, rules)


def _show(renderable: Any) -> None:
    """Print a table without the padding rich puts at the end of each line (pasted output stays clean)."""
    console = _console(None, None)
    with console.capture() as captured:
        console.print(renderable)
    sys.stdout.write("\n".join(line.rstrip() for line in captured.get().split("\n")))


def _json(data: Any) -> None:
    """JSON for scripts: indented, non-ASCII kept readable."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
