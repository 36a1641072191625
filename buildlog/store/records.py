"""The records the store keeps: an Entry is what one log contributes, a Stored row is what is kept.

Kept apart from the SQLite code so that building an entry from a log, exporting and comparing
never need a database, and the database code never needs the analysis pipeline.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone


@dataclass(frozen=True)
class Failure:
    """A failure's identity and label, and its similarity features (its failure lines' token counts).

    `fingerprint` covers the failure lines and the cause (the dedupe key); `shape` covers the
    lines alone, so the same failure is recognised even when someone relabelled its cause.
    """

    fingerprint: str
    shape: str
    cause: str
    title: str
    source: str
    outcome: str
    key_lines: tuple[str, ...]
    failure: tuple[str, ...]
    counts: Mapping[str, int] = field(repr=False)


@dataclass(frozen=True)
class Entry(Failure):
    """One failure as a log shows it, with the redacted log to keep."""

    log: str
    fix: str = ""
    ticket: str = ""
    kept: str = ""  # when the log is only kept in part: what was kept, for the message


@dataclass(frozen=True)
class Stored(Failure):
    """A row of the store: an entry without its log text, plus how often and when it was seen."""

    id: int
    fix: str
    ticket: str
    seen: int
    first_seen: str
    last_seen: str
    log_size: int

    @property
    def slug(self) -> str:
        """A stable file name for export: readable words from the title and the fingerprint."""
        return f"{slugify(self.title)}-{self.fingerprint[:8]}"


def slugify(text: str, limit: int = 48) -> str:
    """Lower-case words joined by '-', cut at a word boundary (the corpus naming rule)."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    out = ""
    for word in words:
        candidate = f"{out}-{word}" if out else word
        if len(candidate) > limit:
            break
        out = candidate
    return out or "incident"


def now_stamp() -> str:
    """The current time as stored: UTC, ISO 8601, to the second (sorts as text)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
