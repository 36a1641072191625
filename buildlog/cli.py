"""Command line: each command reads its input, analyses, renders and exits with a named code.

Only this module prints and exits. Problems with the user's input are BuildlogError: a one-line
message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

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


# Registered last: the store's commands look up this module's helpers when they run.
from buildlog.store.commands import corpus, similar  # noqa: E402

main.add_command(corpus)
main.add_command(similar)
