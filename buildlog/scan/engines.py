"""Finding the anchors in a chunk: hyperscan where it is installed (a dependency on the machines
its wheels cover), a plain standard-library search otherwise.

Both engines answer the same question the same way: where, in a chunk of whole lines, does each
anchor occur (the position of its last byte), leaving out anchors the scanner no longer wants.
The scanner then works in lines; since both engines are exact, they select the same lines.

* `HyperscanEngine` matches every anchor in one pass at memory speed. Compiling the database
  takes longer than scanning a small log, so the compiled form is kept in the user's own cache
  folder (created private, 0700), keyed by a hash of the anchors and the hyperscan version and
  checked against that hash when read back.
* `PlainEngine` runs `bytes.find` once per anchor: slower on big logs, and only used where
  hyperscan has no wheel or when asked for.

An anchor that starts with a newline only counts at the start of a line; chunks always start at
a line start (see ingest.reader), so both engines can tell without looking back.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol

ENGINES = ("auto", "hyperscan", "plain")
CACHE_MIN_ANCHORS = 16  # small anchor sets (tests) compile in no time; only big ones are cached

Occurrence = tuple[int, int]  # (position of the anchor's last byte in the chunk, anchor index)


class Anchor(NamedTuple):
    """A literal as the engines see it: the bytes to find, and whether it must start a line."""

    text: bytes
    line_start: bool

    @classmethod
    def parse(cls, raw: bytes) -> Anchor:
        """`\\n+ ` is `+ ` at the start of a line; no other newline may appear in an anchor."""
        if not raw.strip(b"\n"):
            raise ValueError(f"empty anchor {raw!r}")
        if b"\n" in raw.lstrip(b"\n") or raw.startswith(b"\n\n"):
            raise ValueError(f"an anchor may only start with a newline: {raw!r}")
        return cls(raw[1:], True) if raw.startswith(b"\n") else cls(raw, False)


class Engine(Protocol):
    """What the scanner asks of an engine."""

    name: str

    def find(self, chunk: bytes, start: int, skip: frozenset[int]) -> list[Occurrence]:
        """Every occurrence at or after `start` (a line start) of the anchors not in `skip`, sorted."""
        ...


class PlainEngine:
    """`bytes.find` per anchor: exact, simple, and one pass over the chunk per anchor."""

    name = "plain"

    def __init__(self, anchors: Sequence[Anchor]) -> None:
        self.anchors = tuple(anchors)
        self._needles = [b"\n" + a.text if a.line_start else a.text for a in self.anchors]

    def find(self, chunk: bytes, start: int, skip: frozenset[int]) -> list[Occurrence]:
        out: list[Occurrence] = []
        find = chunk.find
        for index, needle in enumerate(self._needles):
            if index in skip:
                continue
            anchor = self.anchors[index]
            if anchor.line_start and chunk.startswith(anchor.text, start):  # no newline before the first line
                out.append((start + len(anchor.text) - 1, index))
            pos = find(needle, start)
            while pos >= 0:
                out.append((pos + len(needle) - 1, index))
                pos = find(needle, pos + 1)
        out.sort()
        return out


# ------------------------------------------------------------------------------------------
# Hyperscan engine


class HyperscanEngine:
    """Every anchor in one hyperscan pass, plus a second pass only where a budgeted anchor needs it.

    The budgeted (`volatile`) anchors are the ones that occur on every compile line: reporting
    each of their matches to Python would cost more than the scan. In the main database they
    report at most their first match per chunk (HS_FLAG_SINGLEMATCH), which tells whether they
    occur at all; only when a budgeted anchor that is still wanted does occur is the chunk scanned
    again for all its matches, by a small database of just those anchors. Once their budgets are
    spent, a chunk costs one pass. The main database is kept in `cache` when one is given.
    """

    name = "hyperscan"

    def __init__(
        self, anchors: Sequence[Anchor], volatile: frozenset[int] = frozenset(), cache: Path | None = None
    ) -> None:
        import hyperscan

        self._hs = hyperscan
        self.anchors = tuple(anchors)
        self._volatile = frozenset(volatile)
        everything = list(range(len(self.anchors)))
        self._main = _hyperscan_database(hyperscan, self.anchors, everything, cache=cache, single=self._volatile)
        self._full: dict[frozenset[int], Any] = {}

    def find(self, chunk: bytes, start: int, skip: frozenset[int]) -> list[Occurrence]:
        out: list[Occurrence] = []
        wanted: set[int] = set()  # budgeted anchors still wanted that occur in this chunk
        volatile = self._volatile

        def on_match(index: int, _from: int, to: int, _flags: int, _context: object) -> None:
            if index not in volatile:
                out.append((start + to - 1, index))
            elif index not in skip:
                wanted.add(index)

        def on_full_match(index: int, _from: int, to: int, _flags: int, _context: object) -> None:
            out.append((start + to - 1, index))

        data = memoryview(chunk)[start:] if start else chunk
        self._main.scan(data, match_event_handler=on_match)
        if wanted:
            self._full_database(frozenset(wanted)).scan(data, match_event_handler=on_full_match)
        out.sort()
        return out

    def _full_database(self, indices: frozenset[int]) -> Any:
        if indices not in self._full:
            self._full[indices] = _hyperscan_database(self._hs, self.anchors, sorted(indices), cache=None)
        return self._full[indices]


def _hyperscan_database(
    hs: Any, anchors: Sequence[Anchor], keep: list[int], cache: Path | None, single: frozenset[int] = frozenset()
) -> Any:
    """Compile (or load from the private cache folder) a block-mode database of the kept anchors.

    Anchors in `single` report only their first match in each scan.
    """
    patterns = [_hs_pattern(anchors[i]) for i in keep]
    flags = [
        (hs.HS_FLAG_MULTILINE if anchors[i].line_start else 0) | (hs.HS_FLAG_SINGLEMATCH if i in single else 0)
        for i in keep
    ]
    key = hashlib.sha256(b"\0".join([hs.__version__.encode(), *patterns, repr((keep, flags)).encode()])).hexdigest()
    folder = private_folder(cache) if cache is not None and len(keep) >= CACHE_MIN_ANCHORS else None
    path = folder / f"hs-{key[:24]}.db" if folder is not None else None
    body = _read_cached(path, key) if path is not None else None
    if body is not None:
        try:
            database = hs.loadb(body, hs.HS_MODE_BLOCK)
            database.scratch = hs.Scratch(database)
            return database
        except hs.error:
            pass
    database = hs.Database(mode=hs.HS_MODE_BLOCK)
    database.compile(expressions=patterns, ids=keep, elements=len(keep), flags=flags)
    if path is not None:
        _write_cached(path, key, hs.dumpb(database))
    return database


def held_texts(texts: Sequence[bytes], name: str, cache: Path | None = None) -> Callable[[bytes], set[int]]:
    """Which of `texts` one line holds (their indices): one hyperscan scan of it, or `in` for each."""
    if name == "hyperscan" and texts:
        import hyperscan as hs

        every = list(range(len(texts)))
        database = _hyperscan_database(hs, [Anchor(t, False) for t in texts], every, cache, single=frozenset(every))

        def held(line: bytes) -> set[int]:
            found: set[int] = set()
            database.scan(line, match_event_handler=lambda index, *_: found.add(index))
            return found

        return held
    return lambda line: {i for i, t in enumerate(texts) if t in line}


def _hs_pattern(anchor: Anchor) -> bytes:
    """A literal as a hyperscan regex: every byte escaped; `^` (multi-line) for line-start anchors."""
    body = b"".join(b"\\x%02x" % byte for byte in anchor.text)
    return b"^" + body if anchor.line_start else body


# ------------------------------------------------------------------------------------------
# Choice and the compiled-database cache


def hyperscan_available() -> bool:
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return False
    return True


def make_engine(
    anchors: Sequence[Anchor], name: str = "auto", volatile: frozenset[int] = frozenset(), cache: Path | None = None
) -> Engine:
    """The engine named: hyperscan, plain, or auto (hyperscan where it is installed and runs).

    `volatile` are the anchors that may be left out of a search (the budgeted ones); `cache` is a
    private folder for hyperscan's compiled database, or None to compile every time.
    """
    if name not in ENGINES:
        raise ValueError(f"unknown scan engine {name!r} (one of {', '.join(ENGINES)})")
    if name == "hyperscan":
        return HyperscanEngine(anchors, volatile, cache)
    if name == "auto" and hyperscan_available():
        try:
            return HyperscanEngine(anchors, volatile, cache)
        except Exception:  # noqa: BLE001, S110 - e.g. a CPU hyperscan cannot run on: the fallback selects the same lines
            pass
    return PlainEngine(anchors)


def private_folder(path: Path) -> Path | None:
    """`path`, created if need be, when it is a folder only this user can write; else None."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.stat()
        if info.st_uid != os.getuid() or info.st_mode & 0o022:
            return None
        return path
    except (OSError, AttributeError):  # AttributeError: no getuid (Windows): no cache there
        return None


def _read_cached(path: Path, key: str) -> bytes | None:
    """The cached bytes when the file starts with its own key's hash of what follows."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head, _, body = data.partition(b"\n")
    if head != hashlib.sha256(key.encode() + body).hexdigest().encode():
        return None
    return body


def _write_cached(path: Path, key: str, body: bytes) -> None:
    try:
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(hashlib.sha256(key.encode() + body).hexdigest().encode() + b"\n" + body)
        os.replace(tmp, path)
    except OSError:
        pass
