"""What the store's commands show: rows as dicts, search, statistics, and the tables and lines
the command line prints.

Functions over Stored rows that return data or renderables and print nothing, so the commands in
cli/store.py stay a few lines each.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from buildlog.report.schema import Similar
from buildlog.store.records import Stored


def row_dict(row: Stored, full: bool = False) -> dict[str, Any]:
    """A row for JSON output; `full` adds the proof lines and failure lines."""
    names = ("id", "fingerprint", "cause", "title", "seen", "first_seen", "last_seen", "fix", "ticket", "source")
    data: dict[str, Any] = {name: getattr(row, name) for name in names}
    if full:
        data.update(
            outcome=row.outcome, key_lines=list(row.key_lines), failure_lines=list(row.failure), log_bytes=row.log_size
        )
    return data


@dataclass
class Stats:
    """Totals of a store and per cause: incidents, sightings, how many have a fix."""

    incidents: int = 0
    sightings: int = 0
    with_fix: int = 0
    first_seen: str = ""
    last_seen: str = ""
    by_cause: dict[str, Counter[str]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """For `corpus stats --format json`."""
        return {**asdict(self), "by_cause": {c: dict(n) for c, n in self.by_cause.items()}}


def stats(rows: Sequence[Stored]) -> Stats:
    """Count a store's rows; causes ordered by sightings, most first."""
    out = Stats(incidents=len(rows), sightings=sum(r.seen for r in rows), with_fix=sum(1 for r in rows if r.fix))
    if rows:
        out.first_seen = min(r.first_seen for r in rows)[:10]
        out.last_seen = max(r.last_seen for r in rows)[:10]
    per: dict[str, Counter[str]] = {}
    for row in rows:
        counter = per.setdefault(row.cause, Counter())
        counter.update(incidents=1, sightings=row.seen, with_fix=1 if row.fix else 0)
    out.by_cause = dict(sorted(per.items(), key=lambda kv: (-kv[1]["sightings"], kv[0])))
    return out


def rows_table(rows: Sequence[Stored]) -> Any:
    """`corpus list` and `corpus search` as a table: the number and fingerprint to pass to `show`."""
    from rich.table import Table

    table = Table("#", "fingerprint", "seen", "last seen", "cause", "title", "fix", box=None, header_style="bold")
    for r in rows:
        table.add_row(
            str(r.id), r.fingerprint[:8], str(r.seen), r.last_seen[:10], r.cause, r.title, "yes" if r.fix else ""
        )
    return table


def show_lines(row: Stored) -> list[str]:
    """`corpus show` as plain lines: identity, sightings, fix, ticket, proof lines."""
    out = [f"#{row.id} {row.fingerprint}  {row.cause}", row.title]
    out.append(
        f"seen {row.seen} times, first {row.first_seen[:10]}, last {row.last_seen[:10]}; from {row.source or '?'}"
    )
    out += [f"{label}: {value}" for label, value in (("fix", row.fix), ("ticket", row.ticket)) if value]
    if row.key_lines:
        out += ["key lines:", *(f"  {line}" for line in row.key_lines)]
    return out


def stats_view(result: Stats, where: str) -> tuple[list[str], Any]:
    """`corpus stats` as summary lines and a per-cause table (None when the store is empty)."""
    lines = [
        f"{where}: {_count(result.incidents, 'incident')}, seen {_count(result.sightings, 'time')}, {result.with_fix} with a fix"
    ]
    if not result.incidents:
        return lines, None
    lines.append(f"first seen {result.first_seen}, last seen {result.last_seen}")
    from rich.table import Table

    table = Table("cause", "incidents", "seen", "with fix", box=None, header_style="bold")
    for cause, n in result.by_cause.items():
        table.add_row(cause, str(n["incidents"]), str(n["sightings"]), str(n["with_fix"]))
    return lines, table


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def similar_view(found: Sequence[Similar]) -> Any:
    """`buildlog similar` as a table: how alike, the cause, and the past failure with its fix and origin.

    Title, fix and origin share one cell so that a long fix wraps under its title instead of
    squeezing every column.
    """
    from rich.table import Table
    from rich.text import Text

    from buildlog.render.common import similar_note

    table = Table("similarity", "cause", "past failure", box=None, header_style="bold")
    for s in found:
        cell = Text(s.title)
        if s.fix:
            cell.append(f"\nfixed by: {s.fix}", style="green")
        cell.append(f"\n{similar_note(s).split(' · ', 1)[1]}", style="dim")  # the first part is the score column
        table.add_row("same" if s.exact else f"{s.score:.0%}", Text(s.cause, style="magenta"), cell)
    return table
