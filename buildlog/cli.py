"""Command line: each command reads its input, analyses, renders and exits with a named code.

Only this module prints and exits. Problems with the user's input are BuildlogError: a one-line
message on stderr and exit code 2, never a traceback.
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
            click.echo(f"buildlog: internal error: {type(exc).__name__}: {exc} (BUILDLOG_DEBUG=1 shows the traceback)", err=True)
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


@main.command()
@click.argument("log", metavar="LOG")
@click.option("-f", "--format", "fmt", type=FORMATS, default="terminal", show_default=True,
              help="terminal: a report for people; markdown: paste into a ticket; json: for machines (see `buildlog schema`).")  # fmt: skip
@click.option("--color/--no-color", default=None, help="Force colour on or off (default: only on a terminal; NO_COLOR is honoured).")
@click.option("--width", type=click.IntRange(40, 400), default=None, help="Terminal report width (default: the terminal's).")
@click.option("--fail", is_flag=True, help="Exit with code 1 when the log shows a failed build (for CI scripts).")
@click.option("--redact-paths", is_flag=True, help="Also mask user names, home directories and host names (secrets are always masked).")
@click.option("--store", default=None, metavar="PATH",
              help="Store of past failures for 'Seen before' (default: $BUILDLOG_STORE, else the user data directory's; see `buildlog corpus`).")  # fmt: skip
@friendly
def explain(log: str, fmt: str, color: bool | None, width: int | None, fail: bool, redact_paths: bool, store: str | None) -> None:
    """Explain one build log: root causes, evidence lines and the fix.

    LOG is a file (plain or .gz) or - for standard input. Exit code 0 means the log was analysed,
    whatever it shows; 2 means it could not be read. Past failures like this one, from your
    store (`buildlog corpus`) and the bundled corpus, are shown under "Seen before".
    """
    from buildlog.analyze import run
    from buildlog.ingest.reader import iter_chunks, open_source
    from buildlog.store.paths import store_path
    from buildlog.store.similar import seen_before

    source = open_source(log)
    with source.stream:
        analysis = run(source.name, iter_chunks(source.stream), redact_paths=redact_paths)
    report = analysis.report.model_copy(update={"similar": seen_before(analysis, store_path(store))})
    _emit(report, fmt, color, width)
    sys.exit(EXIT_FAILURES_FOUND if fail and report.status == "failure" else EXIT_OK)


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


@main.command()
@friendly
def schema() -> None:
    """Print the JSON schema of `explain --format json`."""
    from buildlog.render.jsonout import json_schema

    sys.stdout.write(json_schema())


@main.command()
@friendly
def causes() -> None:
    """List the root-cause ids buildlog can report."""
    from buildlog.diagnose.rules import cause_ids

    for cid, title in cause_ids().items():
        click.echo(f"{cid:32} {title}")


@main.command()
@click.option("--cause", "cause", default=None, help="Only the rules for this cause id.")
@friendly
def rules(cause: str | None) -> None:
    """List the detection rules: id, role or cause, title."""
    from buildlog.diagnose.rules import load_rules

    for rule in load_rules():
        if cause and rule.cause != cause:
            continue
        click.echo(f"{rule.id:34} {rule.cause or rule.role:30} {rule.title}")


@main.command("eval")
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False, path_type=str))
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--engine", type=click.Choice(["both", "rules", "model"]), default="both", show_default=True,
              help="both: rules, then the classifier where no rule fires; rules: rules alone; "
                   "model: the classifier alone, by 5-fold cross-validation (needs scikit-learn).")  # fmt: skip
@friendly
def eval_cmd(folder: str, fmt: str, engine: str) -> None:
    """Measure buildlog on a folder of cases (a log beside a .toml sidecar; see corpus/README.md).

    Prints per-cause precision and recall, the confusion of primary causes, and every miss with
    the lines it chose. Exit code 1 when any case misses.

    \b
    Examples:
      buildlog eval corpus/cases
      buildlog eval corpus/cases --engine model
      buildlog eval my-team-store/ --format json
    """
    from pathlib import Path

    from buildlog.analyze import run
    from buildlog.evaluate import evaluate, evaluate_model
    from buildlog.render.evaluation import render_eval_json, render_eval_text
    from buildlog.store.cases import iter_cases

    cases = list(iter_cases(Path(folder)))
    if engine == "model":
        result = evaluate_model(cases)
    else:
        use_model = engine == "both"
        result = evaluate(cases, lambda case: run(case.slug, [case.read_bytes()], use_model=use_model).report)
    title = f"engine {engine}: "
    sys.stdout.write(render_eval_json(result) if fmt == "json" else render_eval_text(result, title))
    sys.exit(EXIT_FAILURES_FOUND if result.misses else EXIT_OK)


@main.command()
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False, path_type=str))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Where to write the model (default: the package's own model.json).")  # fmt: skip
@friendly
def train(folder: str, output: str | None) -> None:
    """Train the classifier on a folder of cases and export it for use without scikit-learn.

    Run it after adding cases to corpus/: the tests check that the bundled model was trained on
    the corpus as it is.
    """
    from pathlib import Path

    from buildlog.training import train as fit_corpus
    from buildlog.training import write_model
    from buildlog.resources import knowledge_file
    from buildlog.store.cases import iter_cases

    data = fit_corpus(list(iter_cases(Path(folder))))
    target = Path(output) if output else Path(str(knowledge_file("model.json")))
    write_model(data, target)
    click.echo(f"trained on {len(data['classes'])} causes, {len(data['coef'])} features -> {target}")


@main.command()
@click.argument("log", metavar="LOG")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@friendly
def facts(log: str, fmt: str) -> None:
    """Print the environment fingerprint a log states: nvcc, torch and its CUDA, driver, GPUs, gcc, ...

    Each value comes with the line that states it (the last statement wins).
    """
    from buildlog.analyze import analyze
    from buildlog.ingest.reader import open_source

    report = analyze(open_source(log))
    if fmt == "json":
        sys.stdout.write(report.facts.model_dump_json(indent=2, exclude_defaults=True) + "\n")
        return
    from rich.table import Table

    table = Table("fact", "value", "line", box=None, header_style="bold")
    for name, value in report.facts:
        values = value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]
        for v in values:
            if v is not None:
                table.add_row(name, v.value, str(v.line))
    if not table.row_count:
        click.echo("The log states no facts about its environment.")
        return
    _console(None, None).print(table)


# The store of past failures: `corpus ...` and `similar`. The work is in buildlog/store; these
# commands only read options, call it and print.

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


@main.group()
def corpus() -> None:
    """Remember failures and their fixes in a store, and share it through git.

    The store is one SQLite file, by default in your data directory
    (~/.local/share/buildlog/store.sqlite on Linux); --store PATH or BUILDLOG_STORE choose another.
    Logs are redacted before they are stored. `buildlog explain` then shows matching past failures
    under "Seen before".

    \b
    Examples:
      buildlog corpus add build.log --fix "export CUDA_HOME=/usr/local/cuda-12.8" --ticket https://jira/BUILD-12
      buildlog corpus list
      buildlog corpus search flash-attn cuda
      buildlog corpus export team-failures/ && git -C team-failures add .
      buildlog corpus import team-failures/
    """


@corpus.command("add")
@click.argument("log", metavar="LOG")
@click.option("--cause", default=None, help="The cause id, when the analysis got it wrong or could not tell (see `buildlog causes`).")
@click.option("--fix", default="", help="What resolved it; shown to whoever meets this failure next.")
@click.option("--ticket", default="", metavar="URL", help="Where it was discussed (issue, ticket, chat thread).")
@click.option("--title", default=None, help="A title of your own (default: the line that proves the cause).")
@click.option("--redact-paths", is_flag=True, help="Also mask user names, home directories and host names (secrets are always masked).")
@store_option
@friendly
def corpus_add(log: str, cause: str | None, fix: str, ticket: str, title: str | None, redact_paths: bool, store: str | None) -> None:
    """Analyse a failed build log and remember it, with the fix that worked.

    The same failure again (same failure lines and cause, with temp paths, hashes and numbers
    masked) is counted, not stored twice; a new --fix replaces the one kept.

    \b
    Examples:
      buildlog corpus add build.log
      buildlog corpus add build.log --fix "pip install psutil, then rerun" --ticket https://github.com/org/repo/issues/7
      buildlog corpus add ci.log.gz --cause compiler_oom --redact-paths
      pip install flash-attn 2>&1 | buildlog corpus add -
    """
    from buildlog.store.exchange import now_stamp
    from buildlog.store.intake import check_cause, entry_from_bytes, read_log

    if cause is not None:
        check_cause(cause)
    _close(_store(store))  # a foreign --store fails before the analysis, not after
    name, data = read_log(log)
    entry = entry_from_bytes(name, data, cause=cause, title=title, fix=fix, ticket=ticket, redact_paths=redact_paths)
    with _store(store, create=True) as opened:
        row, new = opened.add(entry, now_stamp())
    verb = "added" if new else f"seen again ({row.seen} times since {row.first_seen[:10]})"
    click.echo(f"{verb}: #{row.id} {row.fingerprint[:8]} {row.cause}: {row.title}")


def _close(opened: Any) -> None:
    """Close a store that may not exist (None)."""
    if opened is not None:
        opened.close()


@corpus.command("list")
@click.option("--cause", default=None, help="Only incidents of this cause id.")
@click.option("-f", "--format", "fmt", type=LISTING, default="table", show_default=True)
@store_option
@friendly
def corpus_list(cause: str | None, fmt: str, store: str | None) -> None:
    """List remembered failures, most recently seen first.

    \b
    Examples:
      buildlog corpus list
      buildlog corpus list --cause cuda_version_mismatch --format json
    """
    _listing(store, fmt, lambda opened: opened.incidents(cause))


@corpus.command("search")
@click.argument("words", nargs=-1, required=True)
@click.option("-f", "--format", "fmt", type=LISTING, default="table", show_default=True)
@store_option
@friendly
def corpus_search(words: tuple[str, ...], fmt: str, store: str | None) -> None:
    """Find remembered failures whose title, cause, fix, ticket or lines contain every word.

    \b
    Examples:
      buildlog corpus search psutil
      buildlog corpus search CUDA_HOME nvcc --format json
    """
    from buildlog.store.views import search

    _listing(store, fmt, lambda opened: search(opened.incidents(), " ".join(words)))


def _listing(store: str | None, fmt: str, select: Callable[[Any], list[Any]]) -> None:
    """Print the rows `select` picks from the store; no store yet is an empty listing, not an error."""
    from buildlog.store.views import row_dict, rows_table

    opened = _store(store)
    rows = [] if opened is None else select(opened)
    _close(opened)
    if fmt == "json":
        _json([row_dict(r) for r in rows])
    elif opened is None:
        click.echo(f"No store at {_where(store)} yet. Add a failure with: buildlog corpus add build.log")
    elif not rows:
        click.echo("Nothing stored matches.")
    else:
        _show(rows_table(rows))


@corpus.command("show")
@click.argument("ref", metavar="ID")
@click.option("--log", "with_log", is_flag=True, help="Print the stored (redacted) log instead.")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@store_option
@friendly
def corpus_show(ref: str, with_log: bool, fmt: str, store: str | None) -> None:
    """Show one remembered failure: its cause, proof lines, fix, ticket and sightings.

    ID is the number `corpus list` shows (3 or #3) or the start of its fingerprint (a1b2c3d4),
    which is the same in every copy of a shared store.

    \b
    Examples:
      buildlog corpus show 3
      buildlog corpus show a1b2c3d4 --log > old-build.log
    """
    from buildlog.store.views import row_dict, show_lines

    opened = _store(store)
    if opened is None:
        raise BuildlogError(f"no store at {_where(store)} yet; add a failure with `buildlog corpus add LOG`")
    with opened:
        row = opened.find(ref)
        log = opened.log_text(row) if with_log else ""
    if with_log:
        sys.stdout.write(log)
    elif fmt == "json":
        _json(row_dict(row, full=True))
    else:
        click.echo("\n".join(show_lines(row)))


@corpus.command("stats")
@click.option("-f", "--format", "fmt", type=LISTING, default="table", show_default=True)
@store_option
@friendly
def corpus_stats(fmt: str, store: str | None) -> None:
    """Count what the store holds: incidents, sightings, fixes known, per cause.

    \b
    Example:
      buildlog corpus stats
    """
    from buildlog.store.views import stats, stats_view

    opened = _store(store)
    result = stats([] if opened is None else opened.incidents())
    _close(opened)
    if fmt == "json":
        _json({"store": _where(store), **result.as_dict()})
        return
    lines, table = stats_view(result, _where(store))
    click.echo("\n".join(lines))
    if table is not None:
        _show(table)


@corpus.command("export")
@click.argument("folder", metavar="DIR")
@store_option
@friendly
def corpus_export(folder: str, store: str | None) -> None:
    """Write the store as a folder of cases (<slug>.log + <slug>.toml), to commit and share.

    The folder is in the corpus's format: `buildlog eval DIR` measures buildlog on it, and
    `buildlog corpus import DIR` reads it into another store. Exporting again updates it.

    \b
    Examples:
      buildlog corpus export team-failures/
      buildlog eval team-failures/
    """
    from pathlib import Path

    from buildlog.store.exchange import export_store

    opened = _store(store)
    if opened is None:
        raise BuildlogError(f"no store at {_where(store)} yet; nothing to export")
    with opened:
        written = export_store(opened, Path(folder))
    click.echo(f"exported {len(written)} incidents to {folder}")


@corpus.command("import")
@click.argument("folder", metavar="DIR")
@click.option("--redact-paths", is_flag=True, help="Also mask user names, home directories and host names.")
@store_option
@friendly
def corpus_import(folder: str, redact_paths: bool, store: str | None) -> None:
    """Read a folder of cases (an export, or the repository's corpus/cases) into the store.

    All or nothing: every case is checked before one transaction writes them. Importing the same
    folder twice changes nothing; a failure already known keeps the larger count and its own fix.

    \b
    Examples:
      buildlog corpus import team-failures/
      buildlog corpus import corpus/cases
    """
    from pathlib import Path

    from buildlog.store.exchange import read_cases

    _close(_store(store))
    found = read_cases(Path(folder), redact_paths=redact_paths)
    with _store(store, create=True) as opened:
        new, known = opened.merge(found.items)
    skipped = f", {len(found.skipped)} without a failure skipped" if found.skipped else ""
    click.echo(f"imported {new} new, {known} already known{skipped}")


@main.command()
@click.argument("log", metavar="LOG")
@click.option("-f", "--format", "fmt", type=LISTING, default="table", show_default=True)
@click.option("--limit", type=click.IntRange(1, 50), default=3, show_default=True, help="At most this many.")
@click.option("--min-score", type=click.FloatRange(0.0, 1.0), default=None, help="Similarity threshold (default 0.5).")
@store_option
@friendly
def similar(log: str, fmt: str, limit: int, min_score: float | None, store: str | None) -> None:
    """List past failures like this log, from your store and the bundled corpus, with their fixes.

    Similarity is TF-IDF cosine over the failure lines. A past failure with the very same lines is
    shown first as a repeat ("seen N times").

    \b
    Examples:
      buildlog similar build.log
      buildlog similar build.log --format json --limit 10 --min-score 0.2
    """
    from buildlog.analyze import run
    from buildlog.ingest.reader import iter_chunks, open_source
    from buildlog.store.paths import store_path
    from buildlog.store.similar import THRESHOLD, seen_before
    from buildlog.store.views import similar_view

    source = open_source(log)
    with source.stream:
        analysis = run(source.name, iter_chunks(source.stream))
    found = seen_before(analysis, store_path(store), THRESHOLD if min_score is None else min_score, limit)
    if fmt == "json":
        _json([s.model_dump() for s in found])
    elif not found:
        click.echo("No similar past failure.")
    else:
        _show(similar_view(found))
