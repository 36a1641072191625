"""The store of past failures: `corpus ...`. The work is in buildlog/store; these commands read
options, call it and print."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from buildlog.cli.base import (
    LISTING,
    _json,
    _show,
    _store,
    _where,
    friendly,
    knowledge_with,
    main,
    settings,
    store_option,
)  # fmt: skip
from buildlog.errors import BuildlogError


@main.group()
def corpus() -> None:
    """Remember failures and their fixes in a store, and share it through git.

    The store is one SQLite file, by default in your data directory
    (~/.local/share/buildlog/store.sqlite on Linux); --store PATH or BUILDLOG_STORE choose another,
    or a team's shared store on PostgreSQL (--store postgresql://USER@HOST/DB). Secrets are masked
    before anything is stored (and user names, homes and hosts too in a shared store and in an
    export). `buildlog explain` then shows matching past failures under "Seen before".

    \b
    Examples:
      buildlog corpus add build.log --fix "export CUDA_HOME=/usr/local/cuda-12.8" --ticket https://jira/BUILD-12
      buildlog corpus list
      buildlog corpus search flash-attn cuda
      buildlog corpus export team-failures/ && git -C team-failures add .
      buildlog corpus import team-failures/
      buildlog corpus list --store postgresql://buildlog@db.internal/buildlog
    """


@corpus.command("add")
@click.argument("log", metavar="LOG")
@click.option(
    "--cause",
    default=None,
    help="The cause id, when the analysis got it wrong or could not tell (see `buildlog causes`).",
)
@click.option("--fix", default="", help="What resolved it; shown to whoever meets this failure next.")
@click.option("--ticket", default="", metavar="URL", help="Where it was discussed (issue, ticket, chat thread).")
@click.option("--title", default=None, help="A title of your own (default: the line that proves the cause).")
@click.option(
    "--redact-paths",
    is_flag=True,
    help="Also mask user names, home directories and host names (secrets are always masked; paths are "
    "always masked in a shared store).",
)
@store_option
@friendly
def corpus_add(
    log: str, cause: str | None, fix: str, ticket: str, title: str | None, redact_paths: bool, store: str | None
) -> None:
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
    from buildlog.store.intake import check_cause, entry_from_file
    from buildlog.store.records import now_stamp

    chosen = settings()
    knowledge = knowledge_with(chosen)
    if cause is not None:
        check_cause(cause, knowledge)
    _close(_store(store))  # a foreign --store fails before the analysis, not after
    name, entry = entry_from_file(
        log, knowledge, cause=cause, title=title, fix=fix, ticket=ticket,
        redact_paths=redact_paths or chosen.redact_paths or _shared(store),
    )  # fmt: skip
    with _store(store, create=True) as opened:
        row, new = opened.add(entry, now_stamp())
    verb = "added" if new else f"seen again ({row.seen} times since {row.first_seen[:10]})"
    click.echo(f"{verb}: #{row.id} {row.fingerprint[:8]} {row.cause}: {row.title}")
    if entry.kept and new:
        click.echo(f"buildlog: {entry.kept}", err=True)


def _shared(store: str | None) -> bool:
    """A team's store (a database server): what is added to it also has paths masked."""
    from buildlog.cli.base import store_file
    from buildlog.store.backend import is_url

    return is_url(store_file(store))


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
    """Find remembered failures whose title, cause, fix, ticket, source or lines have every word.

    A word matches the start of a word in the store (`psut` finds psutil), any case; the search
    runs on the store's own full-text index (SQLite FTS5, PostgreSQL tsvector).

    \b
    Examples:
      buildlog corpus search psutil
      buildlog corpus search CUDA_HOME nvcc --format json
    """
    _listing(store, fmt, lambda opened: opened.search(" ".join(words)))


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

    What is written has secrets and also user names, home folders and host names masked.

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
        done = export_store(opened, Path(folder))
    click.echo(f"exported {len(done.written)} incidents to {folder}")
    for skipped in done.skipped:
        click.echo(f"buildlog: skipped {skipped}", err=True)


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
    chosen = settings()
    redact = redact_paths or chosen.redact_paths or _shared(store)
    found = read_cases(Path(folder), knowledge_with(chosen), redact_paths=redact)
    with _store(store, create=True) as opened:
        new, known = opened.merge(found.items)
    unread = [s for s in found.skipped if " (" in s]
    quiet = len(found.skipped) - len(unread)
    skipped = f", {quiet} without a failure skipped" if quiet else ""
    click.echo(f"imported {new} new, {known} already known{skipped}")
    for case in unread:
        click.echo(f"buildlog: skipped {case}", err=True)
