"""The user's cache folder: compiled scan databases, parsed knowledge files, and proof that the
knowledge files validated.

Everything here is an optimisation that can vanish at any time: a missing, unreadable or
read-only cache only costs the next run the work it would have saved.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

CACHE_ENV = "BUILDLOG_CACHE_DIR"
CACHE_KEEP = 8  # entries of each kind; older ones are for inputs that have changed since


def cache_dir() -> Path:
    """$BUILDLOG_CACHE_DIR, else $XDG_CACHE_HOME/buildlog, else ~/.cache/buildlog."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "buildlog"


def digest(parts: Iterable[bytes]) -> str:
    """A short, unambiguous hash of several byte strings."""
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "little") + part)
    return h.hexdigest()[:24]


def write_cache(path: Path, data: bytes) -> None:
    """Best effort, atomic, and keeps only the newest few entries of the same kind."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        kind = path.name.split("-", 1)[0] + "-"
        siblings = sorted(path.parent.glob(kind + "*"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in siblings[CACHE_KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def validated(kind: str, texts: Iterable[str]) -> tuple[bool, Path]:
    """Whether these knowledge texts already passed full validation (and where to record it)."""
    path = cache_dir() / f"{kind}-{digest(t.encode('utf-8') for t in texts)}.ok"
    try:
        return path.is_file(), path
    except OSError:
        return False, path


def remembered(kind: str, source: bytes, build: Callable[[], T]) -> T:
    """`build()`, kept on disk (marshal) under a hash of the `source` it derives from.

    For plain data (dicts, lists, strings, numbers) that is slow to derive and quick to load:
    parsing the knowledge files with a pure-Python TOML parser costs more than explaining a small
    log. Data marshal cannot store (dates, objects) is simply not kept.
    """
    version = f"{sys.version_info[0]}.{sys.version_info[1]}/{marshal.version}".encode()
    path = cache_dir() / f"{kind}-{digest([version, source])}.marshal"
    try:
        return marshal.loads(path.read_bytes())  # type: ignore[no-any-return]
    except (OSError, ValueError, EOFError, TypeError):
        pass
    value = build()
    try:
        data = marshal.dumps(value)  # type: ignore[arg-type]
    except ValueError:
        return value
    write_cache(path, data)
    return value
