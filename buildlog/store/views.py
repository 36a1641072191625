"""What the store's commands show, as plain data: rows as dicts, search, and statistics.

Pure functions over Stored rows, so the commands stay thin and the tests need no terminal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from buildlog.store.records import Stored


def row_dict(row: Stored, full: bool = False) -> dict[str, Any]:
    """A row for JSON output; `full` adds the proof lines and failure lines."""
    data: dict[str, Any] = {
        "id": row.id, "fingerprint": row.fingerprint, "cause": row.cause, "title": row.title, "seen": row.seen,
        "first_seen": row.first_seen, "last_seen": row.last_seen, "fix": row.fix, "ticket": row.ticket,
        "source": row.source,
    }  # fmt: skip
    if full:
        data.update(outcome=row.outcome, key_lines=list(row.key_lines), failure_lines=list(row.failure), log_bytes=row.log_size)
    return data


def search(rows: Sequence[Stored], text: str) -> list[Stored]:
    """Rows where every word of `text` occurs (any case) in the title, cause, fix, ticket, source or lines."""
    words = text.lower().split()
    if not words:
        return []
    hits = []
    for row in rows:
        haystack = "\n".join([row.title, row.cause, row.fix, row.ticket, row.source, *row.key_lines, *row.failure]).lower()
        if all(w in haystack for w in words):
            hits.append(row)
    return hits


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
        return {
            "incidents": self.incidents, "sightings": self.sightings, "with_fix": self.with_fix,
            "first_seen": self.first_seen, "last_seen": self.last_seen,
            "by_cause": {c: dict(n) for c, n in self.by_cause.items()},
        }  # fmt: skip


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
