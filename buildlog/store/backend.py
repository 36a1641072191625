"""One interface for the store of past failures, whatever database keeps it.

`open_store(location)` picks the backend: a `postgresql://` (or `postgres://`) URL is a shared
PostgreSQL store (store/pg.py), anything else a path to a SQLite file (store/db.py). Both keep
the same rows, run the same versioned migrations on open, count a repeat with one atomic
statement, and search with their own full-text index over the same words (`search_words`), so
every command behaves the same on either.

What is written is masked first (intake builds masked entries); on open a store whose rows were
masked by an older rule set (or never) is masked again (`remask`), so no secret stays behind
from an older buildlog.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from buildlog.errors import BuildlogError
from buildlog.store.records import Entry, Stored

URL_SCHEMES = ("postgresql://", "postgres://")
MAX_SEEN = 2**62  # counts stay far below what either database's 64-bit integers hold

_WORD = re.compile(r"[a-z0-9]+")


def is_url(location: str | Path) -> bool:
    """True for a database URL (scheme://...), which is never a file path."""
    return isinstance(location, str) and "://" in location


def open_store(location: str | Path, create: bool = False) -> Store | None:
    """The store at `location` (a path or a postgresql:// URL); None when there is none yet."""
    if is_url(location):
        text = str(location)
        if not text.startswith(URL_SCHEMES):
            scheme = text.split("://", 1)[0]
            raise BuildlogError(
                f"{scheme}://...: not a store buildlog can use (a SQLite file path, or postgresql://USER@HOST/DB)"
            )
        from buildlog.store.pg import PostgresStore

        return PostgresStore.open(text, create=create)
    from buildlog.store.db import Store as SQLiteStore

    return SQLiteStore.open(Path(location), create=create)


def search_words(text: str) -> list[str]:
    """The words the full-text index keeps and a query looks for: runs of lower-case letters and digits."""
    return _WORD.findall(text.lower())


def document(title: str, cause: str, fix: str, ticket: str, source: str, key_lines: str, failure: str) -> str:
    """The indexed text of a row (key_lines and failure as stored, JSON)."""
    return " ".join(search_words(" ".join((title, cause, fix, ticket, source, key_lines, failure))))


def mask_digest() -> str:
    """Names the secret rule set in use: a store masked under another one is masked again on open."""
    import hashlib

    from buildlog.knowledge.artefact import bundled

    data = json.dumps(bundled().data["secrets"], sort_keys=True).encode("utf-8")
    return hashlib.sha256(data).hexdigest()[:16]


def the_mask(paths: bool) -> Callable[[str], str]:
    from buildlog.knowledge.artefact import bundled

    return bundled().mask(paths)


def pack_log(text: str) -> tuple[bytes, int]:
    data = text.encode("utf-8")
    return gzip.compress(data, mtime=0), len(data)


def unpack_log(blob: bytes | memoryview | None, where: str) -> str:
    """A stored log, or a clear error when its bytes are damaged."""
    try:
        return gzip.decompress(bytes(blob or b"")).decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise BuildlogError(f"{where}: the stored log is damaged ({exc}); the rest of the incident is intact") from None


def _json(text: Any, default: Any) -> Any:
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return default
    return value if isinstance(value, type(default)) else default


def stored(row: Sequence[Any]) -> Stored:
    """A row as read (in COLUMNS order); a field with bad JSON reads as empty rather than failing every command."""
    (
        id_,
        fp,
        shape,
        cause,
        title,
        source,
        outcome,
        key_lines,
        failure,
        counts,
        fix,
        ticket,
        seen,
        first,
        last,
        size,
    ) = row
    keys = _json(key_lines, [])
    lines = _json(failure, [])
    numbers = _json(counts, {})
    return Stored(
        id=int(id_), fingerprint=fp, shape=shape, cause=cause, title=title, source=source, outcome=outcome,
        key_lines=tuple(str(k) for k in keys), failure=tuple(str(f) for f in lines),
        counts={str(k): v for k, v in numbers.items() if isinstance(v, int)},
        fix=fix, ticket=ticket, seen=int(seen), first_seen=first, last_seen=last, log_size=int(size or 0),
    )  # fmt: skip


COLUMNS = (
    "id, fingerprint, shape, cause, title, source, outcome, key_lines, failure, counts, fix, ticket, seen, "
    "first_seen, last_seen, log_size"
)


def entry_values(entry: Entry) -> dict[str, Any]:
    """An entry's column values, JSON-encoded as stored."""
    key_lines, failure = json.dumps(list(entry.key_lines)), json.dumps(list(entry.failure))
    blob, size = pack_log(entry.log)
    return {
        "fingerprint": entry.fingerprint, "shape": entry.shape, "cause": entry.cause, "title": entry.title,
        "source": entry.source, "outcome": entry.outcome, "key_lines": key_lines, "failure": failure,
        "counts": json.dumps(dict(sorted(entry.counts.items()))), "fix": entry.fix, "ticket": entry.ticket,
        "log": blob, "log_size": size,
        "words": document(entry.title, entry.cause, entry.fix, entry.ticket, entry.source, key_lines, failure),
    }  # fmt: skip


def remasked(row: dict[str, Any], mask: Callable[[str], str]) -> dict[str, Any] | None:
    """The row's text fields masked again, with its fingerprint recomputed; None when nothing changes.

    `row` holds title, source, fix, ticket, key_lines, failure (JSON), cause and log (the blob).
    """
    from buildlog.learn.features import fingerprint

    changed: dict[str, Any] = {}
    for name in ("title", "source", "fix", "ticket"):
        value = mask(row[name] or "")
        if value != row[name]:
            changed[name] = value
    for name in ("key_lines", "failure"):
        items = [str(x) for x in _json(row[name], [])]
        masked = [mask(x) for x in items]
        if masked != items:
            changed[name] = json.dumps(masked)
            if name == "failure":
                changed["fingerprint"] = fingerprint(masked, row["cause"])
                changed["shape"] = fingerprint(masked)
    try:
        text = gzip.decompress(bytes(row["log"] or b"")).decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError):
        text = None  # a damaged log stays as it is; reading it says so
    if text is not None:
        masked_log = mask(text)
        if masked_log != text:
            changed["log"], changed["log_size"] = pack_log(masked_log)
    return changed or None


class Store(ABC):
    """An opened store; close it (or use it as a context manager)."""

    location: str
    shared: bool = False  # a team's store (a server): what goes in also has paths masked

    @property
    def path(self) -> str:
        """Where the store is, as messages name it (a URL without its password)."""
        return self.location

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def add(self, entry: Entry, now: str) -> tuple[Stored, bool]:
        """Record one sighting atomically: a new row, or one more on the row with the same fingerprint.

        A repeat keeps the first log and the fix already known unless a new fix is given.
        Returns the row and whether it is new.
        """

    @abstractmethod
    def merge(self, items: Iterable[tuple[Entry, int, str, str]]) -> tuple[int, int]:
        """Import (entry, seen, first, last) sightings in one transaction; returns (new, known).

        Idempotent: counts take the larger value and dates widen.
        """

    @abstractmethod
    def incidents(self, cause: str | None = None) -> list[Stored]:
        """Every row, most recently seen first (optionally only one cause)."""

    @abstractmethod
    def search(self, text: str) -> list[Stored]:
        """Rows whose indexed words start with every word of `text`, most recently seen first."""

    @abstractmethod
    def _row_by_id(self, id_: int) -> Stored | None: ...

    @abstractmethod
    def _rows_by_prefix(self, prefix: str) -> list[Stored]: ...

    @abstractmethod
    def _log_blob(self, id_: int) -> bytes | None: ...

    def find(self, ref: str) -> Stored:
        """A row by its number (`3`, `#3`) or a fingerprint prefix of at least 4 characters."""
        ref = ref.strip().lstrip("#").lower()
        if ref.isdigit() and len(ref) < 19:
            row = self._row_by_id(int(ref))
            if row:
                return row
        if len(ref) >= 4 and all(c in "0123456789abcdef" for c in ref):
            rows = self._rows_by_prefix(ref)
            if len(rows) == 1:
                return rows[0]
            if len(rows) > 1:
                raise BuildlogError(f"{ref}: matches {len(rows)} incidents; give more of the fingerprint")
        raise BuildlogError(f"{ref}: no such incident in {self.path} (see `buildlog corpus list`)")

    def log_text(self, incident: Stored) -> str:
        """The masked log kept for an incident."""
        return unpack_log(self._log_blob(incident.id), f"{self.path} #{incident.id}")
