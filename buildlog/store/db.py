"""The store of past failures: one SQLite file, safe to share between processes.

WAL mode lets readers go on while one process writes; every write is one `BEGIN IMMEDIATE`
transaction (taking the write lock up front, so two writers queue on the busy timeout instead
of failing on a lock upgrade), and a process killed mid-write leaves only its uncommitted
transaction behind, which SQLite discards. A file is recognised as a store by its
application_id; anything else — random bytes, a text file, another program's database — is
refused and never written to.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from buildlog.errors import BuildlogError
from buildlog.store.records import Entry, Stored

APPLICATION_ID = 0x424C4C47  # "BLLG"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 30_000

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE incidents (
    id INTEGER PRIMARY KEY,
    fingerprint TEXT NOT NULL UNIQUE,
    shape TEXT NOT NULL,
    cause TEXT NOT NULL,
    title TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    outcome TEXT NOT NULL DEFAULT 'failure',
    key_lines TEXT NOT NULL DEFAULT '[]',
    failure TEXT NOT NULL DEFAULT '[]',
    counts TEXT NOT NULL DEFAULT '{}',
    fix TEXT NOT NULL DEFAULT '',
    ticket TEXT NOT NULL DEFAULT '',
    log BLOB NOT NULL,
    log_size INTEGER NOT NULL DEFAULT 0,
    seen INTEGER NOT NULL DEFAULT 1,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL
);
CREATE INDEX incidents_shape ON incidents (shape);
"""
_COLUMNS = (
    "id, fingerprint, shape, cause, title, source, outcome, key_lines, failure, counts, fix, ticket, seen, "
    "first_seen, last_seen, log_size"
)


class Store:
    """An opened store; use `Store.open`, and close it (or use it as a context manager)."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn

    @classmethod
    def open(cls, path: Path, create: bool = False) -> Store | None:
        """Open the store at `path`; None when there is none yet and `create` is False.

        Only `corpus add` and `corpus import` create a store, so explaining a log never leaves a
        file behind.
        """
        if path.is_dir():
            raise BuildlogError(f"{path}: is a directory; a store is a file (use --store PATH/store.sqlite)")
        if not path.exists() and not create:
            return None
        if create:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise BuildlogError(f"{path}: cannot create the store's folder ({exc.strerror or exc})") from None
        mode = "rwc" if create else "rw"
        try:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode={mode}", uri=True, isolation_level=None)
        except sqlite3.Error as exc:
            raise BuildlogError(f"{path}: cannot open the store ({exc})") from None
        store = cls(path, conn)
        try:
            with store._errors():
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                # In WAL mode NORMAL survives a killed process; only a power cut may lose the last commits.
                conn.execute("PRAGMA synchronous = NORMAL")
                if not store._recognise(initialise=create):
                    conn.close()
                    return None
        except BaseException:
            conn.close()
            raise
        return store

    def close(self) -> None:
        """Release the file (readers and writers of other processes never wait on a closed store)."""
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """SQLite's errors as one-line messages that name the file."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise BuildlogError(
                    f"{self.path}: the store is busy (another buildlog is writing); try again"
                ) from None
            raise BuildlogError(f"{self.path}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            raise BuildlogError(f"{self.path}: not a readable buildlog store ({exc}); left untouched") from None

    def _recognise(self, initialise: bool) -> bool:
        """True for a buildlog store; initialise an empty database when asked; refuse anything else.

        Reading the application id and the table list writes nothing, so a foreign file is left
        exactly as it was.
        """
        if self._is_ours():
            return True
        if not initialise:
            return False  # an empty database: no store yet
        self.conn.execute("PRAGMA journal_mode = WAL")
        with self.transaction():
            if self._is_ours():  # another process initialised it while we waited for the lock
                return True
            for statement in filter(str.strip, _SCHEMA.split(";")):
                self.conn.execute(statement)
            self.conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        return True

    def _is_ours(self) -> bool:
        (app_id,) = self.conn.execute("PRAGMA application_id").fetchone()
        tables = [r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        if app_id == APPLICATION_ID:
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            version = int(row[0]) if row and str(row[0]).isdigit() else 0
            if version > SCHEMA_VERSION:
                raise BuildlogError(
                    f"{self.path}: this store was written by a newer buildlog (schema {version}); upgrade buildlog"
                )
            if version < 1:
                raise BuildlogError(f"{self.path}: the store's meta table is damaged (no schema version)")
            return True
        if app_id != 0 or tables:
            named = ", ".join(sorted(tables)[:5]) or f"application id {app_id:#x}"
            raise BuildlogError(
                f"{self.path}: an SQLite database of another program ({named}), not a buildlog store; left untouched"
            )
        return False

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: the write lock is taken at BEGIN, and any error rolls it back."""
        with self._errors():
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def add(self, entry: Entry, now: str) -> tuple[Stored, bool]:
        """Record one sighting: a new row, or one more on the row with the same fingerprint.

        A repeat keeps the first log and the fix already known unless a new fix is given.
        Returns the row and whether it is new.
        """
        with self.transaction():
            known = self._by_fingerprint(entry.fingerprint)
            if known is None:
                self._insert(entry, 1, now, now)
            else:
                self.conn.execute(
                    "UPDATE incidents SET seen = seen + 1, last_seen = max(last_seen, ?), "
                    "fix = CASE WHEN ? != '' THEN ? ELSE fix END, ticket = CASE WHEN ? != '' THEN ? ELSE ticket END "
                    "WHERE id = ?",
                    (now, entry.fix, entry.fix, entry.ticket, entry.ticket, known.id),
                )  # fmt: skip
            row = self._by_fingerprint(entry.fingerprint)
        assert row is not None
        return row, known is None

    def merge(self, items: list[tuple[Entry, int, str, str]]) -> tuple[int, int]:
        """Import (entry, seen, first, last) sightings in one transaction; returns (new, known).

        Merging is idempotent: counts take the larger value and dates widen, so importing the
        same shared folder twice changes nothing.
        """
        new = 0
        with self.transaction():
            for entry, seen, first, last in items:
                known = self._by_fingerprint(entry.fingerprint)
                if known is None:
                    self._insert(entry, seen, first, last)
                    new += 1
                    continue
                self.conn.execute(
                    "UPDATE incidents SET seen = max(seen, ?), first_seen = min(first_seen, ?), "
                    "last_seen = max(last_seen, ?), fix = CASE WHEN fix = '' THEN ? ELSE fix END, "
                    "ticket = CASE WHEN ticket = '' THEN ? ELSE ticket END WHERE id = ?",
                    (seen, first, last, entry.fix, entry.ticket, known.id),
                )  # fmt: skip
        return new, len(items) - new

    def _insert(self, entry: Entry, seen: int, first: str, last: str) -> None:
        data = entry.log.encode("utf-8")
        self.conn.execute(
            "INSERT INTO incidents (fingerprint, shape, cause, title, source, outcome, key_lines, failure, counts, "
            "fix, ticket, log, log_size, seen, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                entry.fingerprint, entry.shape, entry.cause, entry.title, entry.source, entry.outcome,
                json.dumps(list(entry.key_lines)), json.dumps(list(entry.failure)),
                json.dumps(dict(sorted(entry.counts.items()))), entry.fix, entry.ticket,
                gzip.compress(data, mtime=0), len(data), seen, first, last,
            ),
        )  # fmt: skip

    def _by_fingerprint(self, fingerprint: str) -> Stored | None:
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM incidents WHERE fingerprint = ?", (fingerprint,)).fetchone()
        return _stored(row) if row else None

    def incidents(self, cause: str | None = None) -> list[Stored]:
        """Every row, most recently seen first (optionally only one cause)."""
        query = f"SELECT {_COLUMNS} FROM incidents"
        args: tuple[str, ...] = ()
        if cause:
            query, args = query + " WHERE cause = ?", (cause,)
        with self._errors():
            rows = self.conn.execute(query + " ORDER BY last_seen DESC, id DESC", args).fetchall()
        return [_stored(r) for r in rows]

    def find(self, ref: str) -> Stored:
        """A row by its number (`3`, `#3`) or a fingerprint prefix of at least 4 characters."""
        ref = ref.strip().lstrip("#").lower()
        with self._errors():
            if ref.isdigit():
                row = self.conn.execute(f"SELECT {_COLUMNS} FROM incidents WHERE id = ?", (int(ref),)).fetchone()
                if row:
                    return _stored(row)
            if len(ref) >= 4 and all(c in "0123456789abcdef" for c in ref):
                rows = self.conn.execute(
                    f"SELECT {_COLUMNS} FROM incidents WHERE fingerprint LIKE ?", (ref + "%",)
                ).fetchall()
                if len(rows) == 1:
                    return _stored(rows[0])
                if len(rows) > 1:
                    raise BuildlogError(f"{ref}: matches {len(rows)} incidents; give more of the fingerprint")
        raise BuildlogError(f"{ref}: no such incident in {self.path} (see `buildlog corpus list`)")

    def log_text(self, incident: Stored) -> str:
        """The redacted log kept for an incident."""
        with self._errors():
            (blob,) = self.conn.execute("SELECT log FROM incidents WHERE id = ?", (incident.id,)).fetchone()
        return gzip.decompress(blob).decode("utf-8")


def _stored(row: tuple) -> Stored:  # type: ignore[type-arg]
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
    return Stored(
        id=id_, fingerprint=fp, shape=shape, cause=cause, title=title, source=source, outcome=outcome,
        key_lines=tuple(json.loads(key_lines)), failure=tuple(json.loads(failure)), counts=json.loads(counts),
        fix=fix, ticket=ticket, seen=seen, first_seen=first, last_seen=last, log_size=size,
    )  # fmt: skip
