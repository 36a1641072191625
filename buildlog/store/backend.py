"""One interface for the store of past failures, whatever database keeps it.

`open_store(location)` picks the backend: a `postgresql://` (or `postgres://`) URL is a shared
PostgreSQL store (store/pg.py), anything else a path to a SQLite file (store/db.py). Both keep
the same rows, run the same versioned migrations on open, count a repeat with one atomic
statement, and search with their own full-text index over the same words (`search_words`), so
every command behaves the same on either.

What is written is masked first (intake builds masked entries); on open a store whose rows were
masked by an older rule set (or never) is masked again (`Store._migrate`), so no secret stays behind
from an older buildlog.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import fields
from pathlib import Path
from typing import Any

from buildlog.errors import BuildlogError
from buildlog.store.records import Entry, Stored

URL_SCHEMES = ("postgresql://", "postgres://")
MAX_SEEN = 2**62  # counts stay far below what either database's 64-bit integers hold
SCHEMA_VERSION = 2  # of both backends' tables

_WORD = re.compile(r"[a-z0-9]+")


def schema_1(prefix: str, key: str, blob: str, integer: str) -> list[str]:
    """Version 1 of the tables, in a backend's names and types (`key`: the type of its row id)."""
    return [
        f"CREATE TABLE {prefix}meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        f"""CREATE TABLE {prefix}incidents (
    id {key} PRIMARY KEY,
    fingerprint TEXT NOT NULL UNIQUE,
    shape TEXT NOT NULL,
    cause TEXT NOT NULL,
    title TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    outcome TEXT NOT NULL DEFAULT 'failure',
    key_lines TEXT NOT NULL DEFAULT '[]',
    failure TEXT NOT NULL DEFAULT '[]',
    counts TEXT NOT NULL DEFAULT '{{}}',
    fix TEXT NOT NULL DEFAULT '',
    ticket TEXT NOT NULL DEFAULT '',
    log {blob} NOT NULL,
    log_size {integer} NOT NULL DEFAULT 0,
    seen {integer} NOT NULL DEFAULT 1,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL
)""",
        f"CREATE INDEX {prefix}incidents_shape ON {prefix}incidents (shape)",
    ]


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
    """The bundled secret mask (with `paths`, also user names, home folders and host names)."""
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


NAMES = tuple(f.name for f in fields(Stored))  # the columns a row is read with, in Stored's order
COLUMNS = ", ".join(NAMES)
TEXTS = ("title", "source", "fix", "ticket")  # the free-text columns, masked as they are


def stored(row: Sequence[Any]) -> Stored:
    """A row as read (in COLUMNS order); a field with bad JSON reads as empty rather than failing every command."""
    data = dict(zip(NAMES, row, strict=True))
    numbers = _json(data["counts"], {})
    data.update(
        id=int(data["id"]), seen=int(data["seen"]), log_size=int(data["log_size"] or 0),
        key_lines=tuple(str(k) for k in _json(data["key_lines"], [])),
        failure=tuple(str(f) for f in _json(data["failure"], [])),
        counts={str(k): v for k, v in numbers.items() if isinstance(v, int)},
    )  # fmt: skip
    return Stored(**data)


def entry_values(entry: Entry) -> dict[str, Any]:
    """An entry's column values, JSON-encoded as stored."""
    blob, size = pack_log(entry.log)
    return {
        **{name: getattr(entry, name) for name in ("fingerprint", "shape", "cause", "outcome", *TEXTS)},
        "key_lines": json.dumps(list(entry.key_lines)), "failure": json.dumps(list(entry.failure)),
        "counts": json.dumps(dict(sorted(entry.counts.items()))), "log": blob, "log_size": size,
    }  # fmt: skip


def remasked(row: dict[str, Any], mask: Callable[[str], str]) -> dict[str, Any]:
    """The row's text fields masked again, with its fingerprint recomputed; empty when nothing changes.

    `row` holds the TEXTS, key_lines, failure (JSON), cause and log (the blob).
    """
    from buildlog.learn.features import fingerprint

    changed: dict[str, Any] = {}
    for name in TEXTS:
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
        text: str | None = unpack_log(row["log"], "")
    except BuildlogError:
        text = None  # a damaged log stays as it is; reading it says so
    if text is not None:
        masked_log = mask(text)
        if masked_log != text:
            changed["log"], changed["log_size"] = pack_log(masked_log)
    return changed


# What a sighting does to the row of the same failure ({least}/{greatest}: the backend's own functions).
# `add` counts one more; a repeat keeps the first log and the fix known unless a new one is given.
ON_ADD = (
    f"seen = {{least}}(t.seen + 1, {MAX_SEEN}), last_seen = {{greatest}}(t.last_seen, excluded.last_seen), "
    "fix = CASE WHEN excluded.fix <> '' THEN excluded.fix ELSE t.fix END, "
    "ticket = CASE WHEN excluded.ticket <> '' THEN excluded.ticket ELSE t.ticket END"
)
# `merge` (an import) is idempotent: counts take the larger value, dates widen, a fix known stays.
ON_MERGE = (
    "seen = {greatest}(t.seen, excluded.seen), first_seen = {least}(t.first_seen, excluded.first_seen), "
    "last_seen = {greatest}(t.last_seen, excluded.last_seen), "
    "fix = CASE WHEN t.fix = '' THEN excluded.fix ELSE t.fix END, "
    "ticket = CASE WHEN t.ticket = '' THEN excluded.ticket ELSE t.ticket END"
)


class Store(ABC):
    """An opened store; close it (or use it as a context manager).

    The queries are written once, here, with `?` for parameters; a backend supplies its tables,
    its upsert, its full-text match and how its errors read.
    """

    path: str  # where the store is, as messages name it (a URL without its password)
    conn: Any
    shared: bool = False  # a team's store (a server): what goes in also has paths masked
    table = "incidents"
    meta = "meta"
    functions = {"least": "min", "greatest": "max"}
    lock_rows = ""  # what a SELECT adds to lock the rows it reads for the transaction

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def _errors(self) -> AbstractContextManager[None]:
        """The database's errors as one-line messages that name the store."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Any]:
        """One write transaction; any error rolls it back."""

    @abstractmethod
    def _upsert(self, sql: str, args: tuple[Any, ...], fingerprint: str) -> tuple[Stored, bool]:
        """Run an INSERT ... ON CONFLICT of the row with `fingerprint`: the row, and whether it is new."""

    @abstractmethod
    def _match(self, words: list[str]) -> tuple[str, tuple[Any, ...]]:
        """The WHERE clause (and its arguments) of rows whose indexed words start with every word."""

    def _execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        return self.conn.execute(sql, args)

    def _index(self, id_: int) -> None:  # noqa: B027 - most backends need nothing here
        """(Re)write the full-text row of one incident, where the index is not kept by the database itself."""

    def _refuse_newer(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise BuildlogError(
                f"{self.path}: this store was written by a newer buildlog (schema {version}, this one "
                f"knows {SCHEMA_VERSION}); upgrade buildlog"
            )  # fmt: skip

    def _meta(self, key: str) -> str | None:
        row = self._execute(f"SELECT value FROM {self.meta} WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self._execute(
            f"INSERT INTO {self.meta} VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def _version(self) -> int:
        value = self._meta("schema_version")
        return int(value) if value and value.isdigit() else 0

    def _current(self) -> bool:
        """Migrated, and masked under the secret rule set in use."""
        return self._version() == SCHEMA_VERSION and self._meta("mask") == mask_digest()

    def _migrate(self, migrations: dict[int, Sequence[str]]) -> None:
        """Under the write lock: run the migrations this store lacks, and mask it again under a newer
        secret rule set (a row that, masked, is the same failure as another is counted there)."""
        for step in range(self._version() + 1, SCHEMA_VERSION + 1):
            for statement in migrations[step]:
                self.conn.execute(statement)
            self._set_meta("schema_version", str(step))
        digest = mask_digest()
        if self._meta("mask") == digest:
            return
        mask = the_mask(self.shared)
        names = ("id", *TEXTS, "key_lines", "failure", "cause", "log", "seen")
        for values in self._execute(f"SELECT {', '.join(names)} FROM {self.table}{self.lock_rows}").fetchall():
            row = dict(zip(names, values, strict=True))
            changed = remasked(row, mask)
            fp, same = changed.get("fingerprint"), f"SELECT id FROM {self.table} WHERE fingerprint = ? AND id != ?"
            other = self._execute(same, (fp, row["id"])).fetchone() if fp else None
            if other:
                self._execute(f"UPDATE {self.table} SET seen = seen + ? WHERE id = ?", (row["seen"], other[0]))
                self._execute(f"DELETE FROM {self.table} WHERE id = ?", (row["id"],))
            elif changed:
                sets = ", ".join(f"{k} = ?" for k in changed)
                self._execute(f"UPDATE {self.table} SET {sets} WHERE id = ?", (*changed.values(), row["id"]))
            self._index(row["id"])
        self._set_meta("mask", digest)

    def _sighting(self, entry: Entry, seen: int, first: str, last: str, on_conflict: str) -> tuple[Stored, bool]:
        values = {**entry_values(entry), "seen": seen, "first_seen": first, "last_seen": last}
        sql = (
            f"INSERT INTO {self.table} AS t ({', '.join(values)}) VALUES ({', '.join('?' * len(values))}) "
            f"ON CONFLICT (fingerprint) DO UPDATE SET {on_conflict.format(**self.functions)}"
        )
        return self._upsert(sql, tuple(values.values()), entry.fingerprint)

    def add(self, entry: Entry, now: str) -> tuple[Stored, bool]:
        """Record one sighting atomically: a new row, or one more on the row with the same fingerprint
        (see ON_ADD). Returns the row and whether it is new."""
        with self.transaction():
            return self._sighting(entry, 1, now, now, ON_ADD)

    def merge(self, items: Iterable[tuple[Entry, int, str, str]]) -> tuple[int, int]:
        """Import (entry, seen, first, last) sightings in one transaction (see ON_MERGE); returns (new, known)."""
        new = total = 0
        with self.transaction():
            for entry, seen, first, last in items:
                total += 1
                new += self._sighting(entry, max(1, min(int(seen), MAX_SEEN)), first, last, ON_MERGE)[1]
        return new, total - new

    def _select(self, where: str = "", args: tuple[Any, ...] = ()) -> list[Stored]:
        with self._errors():
            rows = self._execute(
                f"SELECT {COLUMNS} FROM {self.table} {where} ORDER BY last_seen DESC, id DESC", args
            ).fetchall()
        return [stored(r) for r in rows]

    def incidents(self, cause: str | None = None) -> list[Stored]:
        """Every row, most recently seen first (optionally only one cause)."""
        return self._select("WHERE cause = ?", (cause,)) if cause else self._select()

    def search(self, text: str) -> list[Stored]:
        """Rows whose indexed words start with every word of `text`, most recently seen first."""
        words = search_words(text)
        return self._select(*self._match(words)) if words else []

    def find(self, ref: str) -> Stored:
        """A row by its number (`3`, `#3`) or a fingerprint prefix of at least 4 characters."""
        ref = ref.strip().lstrip("#").lower()
        if ref.isdigit() and len(ref) < 19:
            rows = self._select("WHERE id = ?", (int(ref),))
            if rows:
                return rows[0]
        if len(ref) >= 4 and all(c in "0123456789abcdef" for c in ref):
            rows = self._select("WHERE fingerprint LIKE ?", (ref + "%",))
            if len(rows) == 1:
                return rows[0]
            if len(rows) > 1:
                raise BuildlogError(f"{ref}: matches {len(rows)} incidents; give more of the fingerprint")
        raise BuildlogError(f"{ref}: no such incident in {self.path} (see `buildlog corpus list`)")

    def log_text(self, incident: Stored) -> str:
        """The masked log kept for an incident."""
        with self._errors():
            row = self._execute(f"SELECT log FROM {self.table} WHERE id = ?", (incident.id,)).fetchone()
        return unpack_log(row[0] if row else None, f"{self.path} #{incident.id}")
