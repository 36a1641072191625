"""The SQLite store: one file, safe to share between processes on one machine (the default).

WAL mode lets readers go on while one process writes; every write is one `BEGIN IMMEDIATE`
transaction (taking the write lock up front, so two writers queue on the busy timeout instead
of failing on a lock upgrade), so a repeat's count goes up atomically, and a process killed
mid-write leaves only its uncommitted transaction behind, which SQLite discards. A file is
recognised as a store by its application_id; anything else — random bytes, a text file, another
program's database — is refused and never written to. `corpus search` uses an FTS5 index.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from buildlog.errors import BuildlogError
from buildlog.store import backend
from buildlog.store.backend import MAX_SEEN, SCHEMA_VERSION, document
from buildlog.store.records import Stored

APPLICATION_ID = 0x424C4C47  # "BLLG"
BUSY_TIMEOUT_MS = 30_000

_SCHEMA_1 = backend.schema_1("", "INTEGER", "BLOB", "INTEGER")
# 2: a full-text index (rowid = incidents.id), and every row masked again (done on open).
_SCHEMA_2 = "CREATE VIRTUAL TABLE incidents_fts USING fts5(words)"


class Store(backend.Store):
    """An opened SQLite store; use `Store.open`, and close it (or use it as a context manager)."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = str(path)
        self.conn = conn

    @classmethod
    def open(cls, path: Path, create: bool = False) -> Store | None:
        """Open the store at `path`; None when there is none yet and `create` is False.

        Only `corpus add` and `corpus import` create a store, so explaining a log never leaves a
        file behind.
        """
        try:
            if path.is_dir():
                raise BuildlogError(f"{path}: is a directory; a store is a file (use --store PATH/store.sqlite)")
            if not path.exists() and not create:
                return None
            if path.exists() and not path.is_file():
                raise BuildlogError(f"{path}: not a regular file; a store is a SQLite file")
        except OSError as exc:  # a folder on the way one may not look into
            raise BuildlogError(f"{path}: cannot open the store ({exc.strerror or exc})") from None
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
                store._upgrade()
        except BaseException:
            conn.close()
            raise
        return store

    def close(self) -> None:
        """Release the file (readers and writers of other processes never wait on a closed store)."""
        self.conn.close()

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
            if "readonly" in str(exc):
                raise BuildlogError(f"{self.path}: the store is read-only here ({exc})") from None
            raise BuildlogError(f"{self.path}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            raise BuildlogError(f"{self.path}: not a readable buildlog store ({exc}); left untouched") from None
        except OverflowError:
            raise BuildlogError(f"{self.path}: a count is too large to store (at most {MAX_SEEN})") from None

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
            for statement in _SCHEMA_1:
                self.conn.execute(statement)
            self.conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
            self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        return True

    def _is_ours(self) -> bool:
        (app_id,) = self.conn.execute("PRAGMA application_id").fetchone()
        tables = [r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        if app_id == APPLICATION_ID:
            version = self._version()
            self._refuse_newer(version)
            if version < 1:
                raise BuildlogError(f"{self.path}: the store's meta table is damaged (no schema version)")
            return True
        if app_id != 0 or tables:
            named = ", ".join(sorted(tables)[:5]) or f"application id {app_id:#x}"
            raise BuildlogError(
                f"{self.path}: an SQLite database of another program ({named}), not a buildlog store; left untouched"
            )
        return False

    def _upgrade(self) -> None:
        """Run the migrations this store lacks, and mask it again under a newer secret rule set."""
        if self._current():
            return
        with self.transaction():  # re-read under the write lock: another process may have done it
            self._migrate({2: [_SCHEMA_2]})
            self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _index(self, id_: int) -> None:
        self.conn.execute("DELETE FROM incidents_fts WHERE rowid = ?", (id_,))
        row = self.conn.execute(
            "SELECT title, cause, fix, ticket, source, key_lines, failure FROM incidents WHERE id = ?", (id_,)
        ).fetchone()
        if row:
            self.conn.execute("INSERT INTO incidents_fts (rowid, words) VALUES (?, ?)", (id_, document(*row)))

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

    def _upsert(self, sql: str, args: tuple[Any, ...], fingerprint: str) -> tuple[Stored, bool]:
        # Under the write lock, so nothing comes between the look and the write.
        known = self.conn.execute("SELECT id FROM incidents WHERE fingerprint = ?", (fingerprint,)).fetchone()
        cursor = self.conn.execute(sql, args)
        id_ = known[0] if known else int(cursor.lastrowid or 0)
        self._index(id_)
        (row,) = self._select("WHERE id = ?", (id_,))
        return row, known is None

    def _match(self, words: list[str]) -> tuple[str, tuple[Any, ...]]:
        query = " AND ".join(f'"{w}"*' for w in words)
        return "WHERE id IN (SELECT rowid FROM incidents_fts WHERE incidents_fts MATCH ?)", (query,)
