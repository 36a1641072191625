"""What every command shares: the group, exit codes, friendly errors and console helpers.

Only the cli package prints and exits. Problems with the user's input are BuildlogError: a
one-line message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import codecs
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


def recall_store(option: str | None) -> Any:
    """The store for "seen before": its path, or None when no file is there, since then there is
    nothing to open (and the database module is not loaded for nothing); a URL as it is."""
    where = store_file(option)
    if isinstance(where, str):
        return where
    try:
        os.stat(where)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return where


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
    safe_streams()


FORMAT_NAMES = ["terminal", "markdown", "json", "github", "junit", "html", "gitlab"]
FORMATS = click.Choice(FORMAT_NAMES)
FORMAT_HELP = (
    "terminal: a report for people; markdown: paste into a ticket; json: for machines (see `buildlog schema`); "
    "github: annotations and the job summary in GitHub Actions; junit: a JUnit XML test report (GitLab's test panel); "
    "html: a self-contained page with the timeline drawn; "
    "gitlab: the terminal report in GitLab's collapsible sections (the default when $GITLAB_CI is true)."
)

# What a console that cannot show a character gets instead: the report's marks have ASCII
# stand-ins, anything else becomes "?". A cp1252 or C-locale console then gets a readable report
# rather than a UnicodeEncodeError.
FALLBACKS = {
    "✗": "x", "✓": "v", "·": "-", "│": "|", "—": "-", "–": "-", "…": "...", "→": "->", "←": "<-", "’": "'",
    "‘": "'", "“": '"', "”": '"', "•": "*", "─": "-", "━": "-", "×": "x", "≥": ">=", "≤": "<=", "█": "#",
}  # fmt: skip


def _fallback(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    return "".join(FALLBACKS.get(ch, "?") for ch in text), error.end


codecs.register_error("buildlog-fallback", _fallback)


def safe_streams() -> None:
    """Let stdout and stderr carry any text whatever the console's encoding (ASCII stand-ins)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None:
            continue
        try:
            reconfigure(errors="buildlog-fallback")
        except (ValueError, OSError, TypeError):  # a closed or exotic stream: leave it be
            pass


def _columns() -> int | None:
    """$COLUMNS when it is a usable width (40 to 400)."""
    try:
        value = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return None
    return value if 40 <= value <= 400 else None


def render_reports(
    reports: list[Any], fmt: str, color: bool | None = False, width: int | None = None, now: int | None = None
) -> str:
    """The reports as text in one format (several logs: one after the other, or one document).

    `now`: the time GitLab's section markers carry (default: the clock's)."""
    if fmt == "gitlab":
        import io
        import time

        from buildlog.render.gitlab import render_gitlab

        # GitLab's job log shows colours though it is no terminal: on unless --no-color or NO_COLOR
        color = color if color is not None else "NO_COLOR" not in os.environ
        console = _console(color, width or (_columns() or 100), file=io.StringIO())
        return render_gitlab(reports, console, int(time.time()) if now is None else now)
    if fmt == "json":
        from buildlog.render.jsonout import render_json

        if len(reports) == 1:
            return render_json(reports[0])
        return "[\n" + ",\n".join(render_json(r).rstrip("\n") for r in reports) + "\n]\n"
    if fmt == "github":
        from buildlog.render.github import render_github

        return render_github(reports)
    if fmt == "html":
        from buildlog.render.html import render_html

        return render_html(reports)
    if fmt == "junit":
        from buildlog.render.junit import render_junit

        return render_junit(reports)
    if fmt == "markdown":
        from buildlog.render.markdown import render_markdown

        return "\n".join(render_markdown(r) for r in reports)
    import io

    console = _console(color, width or 100, file=io.StringIO())
    _terminal(reports, console)
    return console.file.getvalue()


def _terminal(reports: list[Any], console: Any) -> None:
    from buildlog.render.terminal import render_terminal

    for n, report in enumerate(reports):
        if n:
            console.file.write("\n")
        render_terminal(report, console)


def _emit(report: Any, fmt: str, color: bool | None, width: int | None) -> None:
    """Print one report, or a list of reports, on stdout in the chosen format."""
    reports = report if isinstance(report, list) else [report]
    if fmt != "terminal":  # colour and width matter to gitlab's alone
        sys.stdout.write(render_reports(reports, fmt, color, width))
        return
    _terminal(reports, _console(color, width))


def _console(color: bool | None, width: int | None, file: Any = None) -> Any:
    from rich.console import Console

    no_color = color is False or (color is None and "NO_COLOR" in os.environ)
    if width is None and not sys.stdout.isatty():
        width = _columns() or 100
    return Console(
        file=file, force_terminal=True if color else None, no_color=no_color, width=width, highlight=False,
        soft_wrap=False,
    )  # fmt: skip


def output_spec(ctx: Any, param: Any, values: tuple[str, ...]) -> list[tuple[str, str]]:
    """--output FORMAT:FILE values as (format, file), checked."""
    specs = []
    for value in values:
        fmt, sep, path = value.partition(":")
        if not sep or not path:
            raise click.BadParameter(f"{value!r}: expected FORMAT:FILE, e.g. json:report.json", ctx, param)
        if fmt not in FORMAT_NAMES:
            raise click.BadParameter(
                f"{value!r}: unknown format {fmt!r} (formats: {', '.join(FORMAT_NAMES)})", ctx, param
            )
        specs.append((fmt, path))
    return specs


def output_options(func: F) -> F:
    """--output FORMAT:FILE (repeatable) and --quiet, the same on every command that reports."""
    func = click.option("-q", "--quiet", is_flag=True, help="Print nothing on stdout (reports still go to --output files; errors to stderr).")(func)  # fmt: skip
    return click.option(  # type: ignore[return-value]
        "-o", "--output", "outputs", multiple=True, metavar="FORMAT:FILE", callback=output_spec,
        help=f"Also write the report to FILE in FORMAT ({', '.join(FORMAT_NAMES)}); repeatable, e.g. -o json:report.json -o markdown:report.md.",
    )(func)  # fmt: skip


def github_summary(reports: list[Any], fmt: str, outputs: list[tuple[str, str]]) -> None:
    """In GitHub Actions ($GITHUB_STEP_SUMMARY set), the github format also appends the job summary."""
    path = os.environ.get("GITHUB_STEP_SUMMARY", "")
    if not path or (fmt != "github" and all(f != "github" for f, _ in outputs)):
        return
    from buildlog.render.github import step_summary

    try:
        with open(path, "a", encoding="utf-8") as out:
            out.write(step_summary(reports) + "\n")
    except OSError as exc:
        raise BuildlogError(f"$GITHUB_STEP_SUMMARY={path}: cannot append the summary ({exc.strerror or exc})") from None


def write_outputs(reports: list[Any], outputs: list[tuple[str, str]]) -> None:
    """Write each --output file (UTF-8; a terminal report without colour)."""
    for fmt, path in outputs:
        text = render_reports(reports, fmt)
        try:
            with open(path, "w", encoding="utf-8", newline="\n") as out:
                out.write(text)
        except OSError as exc:
            raise BuildlogError(f"{path}: cannot write the {fmt} report ({exc.strerror or exc})") from None


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


def _prepared(redact_paths: bool, rules: tuple[str, ...], store: Any, recall: Any = None) -> tuple[Any, Any, Any]:
    """This run's knowledge, "seen before" (from `store`, unless it is False) and pipeline options."""
    from buildlog.pipeline import Options

    chosen = settings()
    knowledge = knowledge_with(chosen, rules)
    if recall is None and store is not False:
        from buildlog.store.similar import PastFailures

        recall = PastFailures(recall_store(store or chosen.store))
    options = Options(
        redact_paths=redact_paths or chosen.redact_paths, engine=chosen.engine, cache=chosen.cache,
        progress=sys.stderr.isatty(),
    )  # fmt: skip
    return knowledge, recall, options


def _note(recall: Any) -> None:
    note = getattr(recall, "note", "")
    if note:
        click.echo(f"buildlog: {note}", err=True)


def analyse_log(log: str, rules: tuple[str, ...] = (), recall: Any = None) -> Any:
    """Open one log and run the pipeline over it with this run's settings (`recall`: for seen-before)."""
    from buildlog.ingest.reader import open_source
    from buildlog.pipeline import trace

    knowledge, recall, options = _prepared(False, rules, None, recall)
    if log == "-" and _stdin_waits():
        click.echo(STDIN_HINT, err=True)
    source = open_source(log)
    with source.stream:
        analysis = trace(source, knowledge, recall, options)
    _note(recall)
    return analysis


def _stdin_waits() -> bool:
    """Standard input is a terminal: reading `-` would wait for the user to type."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


STDIN_HINT = (
    "buildlog: reading a log from the terminal: paste it, then press Ctrl-D (Ctrl-Z Enter on Windows); "
    "or pipe a build into it: pip install ... 2>&1 | buildlog explain -"
)


def analyse_logs(
    logs: tuple[str, ...],
    redact_paths: bool = False,
    rules: tuple[str, ...] = (),
    store: Any = None,
    quiet: bool = False,
) -> list[Any]:
    """Every log the paths hold (a zip archive: each of its logs), analysed in order."""
    from buildlog import analyses as each_log

    knowledge, recall, options = _prepared(redact_paths, rules, store)
    if "-" in logs and not quiet and _stdin_waits():
        click.echo(STDIN_HINT, err=True)
    analyses = list(each_log(logs, knowledge, recall, options))
    if not quiet:
        _note(recall)
    return analyses


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
