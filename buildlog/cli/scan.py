"""`buildlog scan PATH...`: explain a fleet of logs on all cores. The work is in store/fleet.py."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from buildlog.cli.base import _json, _show, _store, _where, friendly, main, settings, store_option
from buildlog.errors import BuildlogError


@main.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("-j", "--jobs", type=click.IntRange(0, 512), default=0, show_default="all cores",
              help="Worker processes (0: one per core).")  # fmt: skip
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Write one JSON line per log here (- for standard output; the summary then goes to stderr).")  # fmt: skip
@click.option("--add", is_flag=True, help="Put every failure into the store (see `buildlog corpus`).")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="The summary as tables, or as one JSON object.")  # fmt: skip
@click.option(
    "--progress/--no-progress", default=None, help="A progress bar on stderr (default: when it is a terminal)."
)
@click.option("--top", type=click.IntRange(1, 100), default=10, show_default=True, help="How many failures to list.")
@store_option
@friendly
def scan(
    paths: tuple[str, ...], jobs: int, output: str | None, add: bool, fmt: str, progress: bool | None, top: int,
    store: str | None,
) -> None:  # fmt: skip
    """Explain many logs at once: files, folders, globs and zip archives, on every core.

    Each log is explained as `buildlog explain` would; a log that cannot be read is reported and
    skipped, and the rest go on. At the end a summary: logs by outcome, causes by count, the
    failures seen most (with their fix), and the logs that could not be read.

    \b
    Examples:
      buildlog scan ci-logs/ --output results.jsonl
      buildlog scan 'runs/**/*.log.gz' nightly.zip --jobs 8
      buildlog scan ci-logs/ --add --store postgresql://buildlog@db.internal/buildlog
    """
    from buildlog.store import fleet

    chosen = settings()
    redact = chosen.redact_paths
    items, problems = fleet.collect(paths)
    if not items and not problems:
        raise BuildlogError("no logs found in " + ", ".join(paths))
    jobs = jobs or os.cpu_count() or 1
    opened = None
    if add:
        opened = _store(store, create=True)
        redact = redact or opened.shared
    out = _open_output(output)
    summary = fleet.summarise(problems)
    for line in problems:
        _write_line(out, line)
    started = time.perf_counter()
    added = 0
    show_bar = progress if progress is not None else sys.stderr.isatty()
    try:
        with _bar(show_bar, len(items), forced=progress is True) as advance:
            for outcome in fleet.run(
                items, jobs, add=add, redact_paths=redact, engine=chosen.engine, cache=chosen.cache
            ):
                summary.count(outcome.line)
                if outcome.entry is not None and opened is not None:
                    from buildlog.store.exchange import now_stamp

                    row, _ = opened.add(outcome.entry, now_stamp())
                    outcome.line["stored"] = row.id
                    added += 1
                _write_line(out, outcome.line)
                advance()
    finally:
        if opened is not None:
            opened.close()
        if out not in (None, sys.stdout):
            out.close()
    wall = time.perf_counter() - started
    _report(summary, fmt, wall, jobs, top, added, _where(store) if add else "", to_stderr=output == "-")


def _open_output(output: str | None) -> Any:
    if output is None:
        return None
    if output == "-":
        return sys.stdout
    try:
        return open(output, "w", encoding="utf-8")  # noqa: SIM115 - closed at the end of the scan
    except OSError as exc:
        raise BuildlogError(f"{output}: cannot write ({exc.strerror or exc})") from None


def _write_line(out: Any, line: dict[str, Any]) -> None:
    if out is not None:
        out.write(json.dumps(line, ensure_ascii=False) + "\n")


@contextmanager
def _bar(on: bool, total: int, forced: bool = False) -> Iterator[Callable[[], None]]:
    """A rich progress bar on stderr, or nothing; `with _bar(on, total) as advance: advance()`."""
    if not on:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=Console(stderr=True, force_terminal=True if forced else None), transient=True,
    ) as progress:  # fmt: skip
        task = progress.add_task("scan", total=total)
        yield lambda: progress.advance(task)


def _report(summary: Any, fmt: str, wall: float, jobs: int, top: int, added: int, where: str, to_stderr: bool) -> None:
    speed = {
        "seconds": round(wall, 3), "jobs": jobs,
        "logs_per_second": round(summary.logs / wall, 2) if wall > 0 else None,
        "mb_per_second": round(summary.bytes / 1e6 / wall, 2) if wall > 0 else None,
    }  # fmt: skip
    if fmt == "json":
        data = {**summary.as_dict(), **speed, "added": added}
        if to_stderr:
            click.echo(json.dumps(data, indent=2, ensure_ascii=False), err=True)
        else:
            _json(data)
        return
    from rich.table import Table

    status = ", ".join(f"{n} {s}" for s, n in summary.by_status.most_common())
    lines = [
        f"{summary.logs} logs ({status or 'none'}) in {wall:.1f} s on {jobs} processes, "
        f"{summary.bytes / 1e6:.1f} MB, {speed['logs_per_second'] or 0:g} logs/s"
    ]
    if added:
        lines.append(f"{added} failures added to {where}")
    tables = []
    if summary.by_cause:
        causes = Table("cause", "logs", box=None, header_style="bold", title="Causes", title_justify="left")
        for cause, n in summary.by_cause.most_common():
            causes.add_row(cause, str(n))
        tables.append(causes)
    if summary.failures:
        failures = Table("fingerprint", "logs", "cause", "fix", box=None, header_style="bold",
                         title="Failures seen most", title_justify="left")  # fmt: skip
        for fp, info in summary.top(top):
            fix = (info["fix"] or "").strip().splitlines()
            failures.add_row(fp[:8], str(info["count"]), info["cause"] or "unknown", fix[0] if fix else "")
        tables.append(failures)
    if summary.unreadable:
        bad = Table("log", "why", box=None, header_style="bold", title="Could not be read", title_justify="left")
        for line in summary.unreadable:
            bad.add_row(line["log"], line["error"])
        tables.append(bad)
    if to_stderr:
        from rich.console import Console

        console = Console(stderr=True, width=100)
        console.print("\n".join(lines))
        for table in tables:
            console.print(table)
        return
    click.echo("\n".join(lines))
    for table in tables:
        click.echo()
        _show(table)
        click.echo()
