"""Commands that read one log: explain, facts, similar."""

from __future__ import annotations

import io
import os
import sys
from typing import Any

import click

from buildlog.cli.base import (
    EXIT_FAILURES_FOUND,
    EXIT_OK,
    FORMAT_HELP,
    FORMATS,
    LISTING,
    _console,
    _emit,
    _json,
    _show,
    analyse_log,
    analyse_logs,
    friendly,
    github_summary,
    main,
    output_options,
    recall_store,
    rules_option,
    store_option,
    write_outputs,
)  # fmt: skip
from buildlog.errors import BuildlogError


@main.command()
@click.argument("logs", metavar="[LOG]...", nargs=-1)
@click.option("--url", "urls", multiple=True, metavar="URL",
              help="Download a log and explain it (https; http only to localhost); repeatable. Read after the LOGs.")  # fmt: skip
@click.option("--download-limit", type=click.IntRange(1, 4096), default=64, show_default=True, metavar="MIB",
              help="The most a --url download may be, in MiB.")  # fmt: skip
@click.option("--download-timeout", type=click.FloatRange(0.1, 3600), default=30.0, show_default=True, metavar="SECONDS",
              help="The longest wait for a --url server to connect or send (the whole download: ten times that).")  # fmt: skip
@click.option("-f", "--format", "fmt", type=FORMATS, default=None, help=f"{FORMAT_HELP} [default: terminal]")
@click.option(
    "--color/--no-color",
    default=None,
    help="Force colour on or off (default: only on a terminal; NO_COLOR is honoured).",
)
@click.option(
    "--width", type=click.IntRange(40, 400), default=None, help="Terminal report width (default: the terminal's)."
)
@click.option("--fail", is_flag=True, help="Exit with code 1 when the log shows a failed build (for CI scripts).")
@click.option(
    "--redact-paths",
    is_flag=True,
    help="Also mask user names, home directories and host names (secrets are always masked).",
)
@click.option("--store", default=None, metavar="PATH",
              help="Store of past failures for 'Seen before' (default: $BUILDLOG_STORE, else the user data directory's; see `buildlog corpus`).")  # fmt: skip
@click.option("--no-seen-before", is_flag=True, help="Leave out past failures like this one.")
@output_options
@rules_option
@friendly
def explain(
    logs: tuple[str, ...], urls: tuple[str, ...], download_limit: int, download_timeout: float, fmt: str | None,
    color: bool | None, width: int | None, fail: bool, redact_paths: bool, store: str | None, no_seen_before: bool,
    outputs: list[tuple[str, str]], quiet: bool, rules: tuple[str, ...],
) -> None:  # fmt: skip
    """Explain build logs: root causes, evidence lines and the fix.

    Each LOG is a file, plain or compressed (.gz, .xz, .bz2, .zst), a .zip archive (every log in it,
    as in a GitHub Actions log download), or - for standard input. --url URL downloads one (https,
    at most --download-limit MiB, credentials and query values never shown). A whole terminal session or CI
    log works too: each attempt is told apart, and the change that resolved each problem is named.
    Past failures like this one, from your store (`buildlog corpus`) and the bundled corpus, are
    shown under "Seen before". Exit code 0 means the logs were analysed, whatever they show (1 with
    --fail when a build failed); 2 means one could not be read.

    \b
    Examples:
      buildlog explain build.log
      pip install -v flash-attn --no-build-isolation 2>&1 | tee build.log | buildlog explain -
      buildlog explain ci.log.gz --format markdown --redact-paths > ticket.md
      buildlog explain build.log --format json | jq -r '.root_causes[].id'
      buildlog explain build.log --rules team-rules/
      buildlog explain logs_1234.zip -o json:report.json -o markdown:report.md
      buildlog explain --url https://ci.example/job/123/consoleText
    """
    from buildlog.cli.settings import default_format

    fmt = fmt or default_format(os.environ)
    if not logs and not urls:
        raise BuildlogError("give a LOG (a file, an archive, or - for stdin) or --url URL")
    inputs = (*_not_urls(logs), *(_download(u, download_limit, download_timeout) for u in urls))
    reports = [  # only the reports: each log's events are let go before anything is rendered
        a.report
        for a in analyse_logs(
            inputs, redact_paths=redact_paths, rules=rules, store=False if no_seen_before else store, quiet=quiet
        )
    ]
    write_outputs(reports, outputs)
    github_summary(reports, fmt, outputs)
    if not quiet:
        _emit(reports, fmt, color, width)
    failed = any(r.status == "failure" for r in reports)
    sys.exit(EXIT_FAILURES_FOUND if fail and failed else EXIT_OK)


def _not_urls(logs: tuple[str, ...]) -> tuple[str, ...]:
    """The LOG arguments; one that is a URL, not a file, is told to come with --url."""
    from buildlog.ingest.reader import URL, shown_url

    for log in logs:
        if URL.match(log) and not os.path.exists(log):
            raise BuildlogError(f"{shown_url(log)} is a URL: give it as --url to download it (https, at most 64 MiB), "
                                "or save the log first and give the file")  # fmt: skip
    return logs


def _download(url: str, limit_mib: int, timeout: float) -> Any:
    """A downloaded log as a named stream, unpacked later like a file (by its first bytes)."""
    from buildlog.cli.fetch import MIB, fetch

    found = fetch(url, limit_mib * MIB, timeout)
    stream = io.BytesIO(found.data)
    stream.name = found.shown  # type: ignore[attr-defined]  # the report's source: the URL, masked
    return stream


@main.command()
@click.argument("log", metavar="LOG")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@rules_option
@friendly
def facts(log: str, fmt: str, rules: tuple[str, ...]) -> None:
    """Print the environment fingerprint a log states: nvcc, torch and its CUDA, driver, GPUs, gcc, ...

    Each value comes with the line that states it (the last statement wins, or the build's own
    line where the log states a fact two ways; such contradictions are listed below the table).
    """
    report = analyse_log(log, rules=rules).report
    if fmt == "json":
        sys.stdout.write(report.facts.model_dump_json(indent=2, exclude_defaults=True) + "\n")
        return
    from rich.table import Table

    table = Table("fact", "value", "line", box=None, header_style="bold")
    for name, value in report.facts:
        pairs = (
            value.items()
            if isinstance(value, dict)
            else ((name, v) for v in (value if isinstance(value, list) else [value]))
        )
        for label, v in pairs:
            if v is not None:
                table.add_row(label, v.value, str(v.line))
    if not table.row_count:
        click.echo("The log states no facts about its environment.")
        return
    console = _console(None, None)
    console.print(table)
    from buildlog.render.common import contradiction_lines

    for line in contradiction_lines(report):
        console.print(f"! {line}", markup=False, highlight=False)


@main.command()
@click.argument("log", metavar="LOG")
@click.option("-f", "--format", "fmt", type=LISTING, default="table", show_default=True)
@click.option("--limit", type=click.IntRange(1, 50), default=3, show_default=True, help="At most this many.")
@click.option("--min-score", type=click.FloatRange(0.0, 1.0), default=None, help="Similarity threshold (default 0.5).")
@store_option
@rules_option
@friendly
def similar(log: str, fmt: str, limit: int, min_score: float | None, store: str | None, rules: tuple[str, ...]) -> None:
    """List past failures like this log, from your store and the bundled corpus, with their fixes.

    Similarity is TF-IDF cosine over the failure lines. A past failure with the very same lines is
    shown first as a repeat ("seen N times").

    \b
    Examples:
      buildlog similar build.log
      buildlog similar build.log --format json --limit 10 --min-score 0.2
    """
    from buildlog.store.similar import THRESHOLD, PastFailures
    from buildlog.store.views import similar_view

    recall = PastFailures(recall_store(store), THRESHOLD if min_score is None else min_score, limit)
    analysis = analyse_log(log, rules=rules, recall=recall)
    found = analysis.report.similar
    if fmt == "json":
        _json([s.model_dump() for s in found])
    elif not found:
        click.echo("No similar past failure.")
    else:
        _show(similar_view(found))
