"""Explaining a fleet of logs: find them (files, folders, globs, zip archives), analyse them on
all cores, and sum up what was found.

The analysis is a pure function from a log's bytes to a Report, so each log is one independent
task: `analyse_one` runs in a worker process and returns a plain result (the JSON line) and,
when asked, the store entry; the caller writes the store from one connection. A log that cannot
be read is a result with an error, never a stopped run.
"""

from __future__ import annotations

import glob
import gzip
import io
import os
import time
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from buildlog.errors import BuildlogError
from buildlog.store.records import Entry

# In folders and archives these are logs; a file named on the command line is read whatever its name.
LOG_SUFFIXES = (".log", ".txt", ".out", ".gz", ".log.gz", ".txt.gz")
_MAGIC_ZIP = b"PK\x03\x04"


@dataclass(frozen=True)
class Item:
    """One log to explain: a file, or a member of a zip archive."""

    name: str
    path: str
    member: str = ""


@dataclass(frozen=True)
class Outcome:
    """What one log gave: its JSON line, and its store entry when one was asked for and there is one."""

    line: dict[str, Any]
    entry: Entry | None = None


def _is_log(name: str) -> bool:
    return name.lower().endswith(LOG_SUFFIXES)


def _is_zip(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == _MAGIC_ZIP
    except OSError:
        return False


def collect(paths: Sequence[str]) -> tuple[list[Item], list[dict[str, Any]]]:
    """The logs the paths name, in order and once each, and the paths that name nothing readable.

    A folder gives its log files (searched recursively, links not followed), a glob its matches,
    a zip archive its log members.
    """
    items: list[Item] = []
    problems: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()

    def add(item: Item) -> None:
        key = (item.path, item.member)
        if key not in seen:
            seen.add(key)
            items.append(item)

    for given in paths:
        matches = sorted(glob.glob(given, recursive=True)) if glob.has_magic(given) else [given]
        if not matches:
            problems.append({"log": given, "error": "no file matches"})
        for path in matches:
            try:
                if os.path.isdir(path):
                    for found in _walk(Path(path)):
                        (_zip_members(found, add, problems) if _is_zip(found) else add(Item(found, found)))
                elif not os.path.exists(path):
                    problems.append({"log": path, "error": "no such file"})
                elif _is_zip(path):
                    _zip_members(path, add, problems)
                else:
                    add(Item(path, path))
            except OSError as exc:
                problems.append({"log": path, "error": f"cannot read ({exc.strerror or exc})"})
    return items, problems


def _walk(folder: Path) -> Iterator[str]:
    for root, dirs, files in os.walk(folder):  # os.walk does not follow links to folders
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            if (_is_log(name) or name.lower().endswith(".zip")) and not os.path.islink(path):
                yield path


def _zip_members(path: str, add: Any, problems: list[dict[str, Any]]) -> None:
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.is_dir() and _is_log(info.filename):
                    add(Item(f"{path}:{info.filename}", path, info.filename))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        problems.append({"log": path, "error": f"not a readable zip archive ({exc})"})


def read_item(item: Item, limit: int | None = None) -> bytes:
    """The bytes of one log, bounded (a zip member or a gzip file that unpacks too far is refused)."""
    from buildlog.store import intake

    limit = intake.MAX_LOG_BYTES if limit is None else limit
    if not item.member:
        return intake.read_log(item.path, limit)[1]
    try:
        with zipfile.ZipFile(item.path) as archive, archive.open(item.member) as member:
            data = member.read(limit + 1)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise BuildlogError(f"{item.name}: cannot read ({exc})") from None
    if data[:2] == b"\x1f\x8b" and len(data) <= limit:
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as unpacked:
                data = unpacked.read(limit + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise BuildlogError(f"{item.name}: not a readable gzip file ({exc})") from None
    if len(data) > limit:
        raise BuildlogError(f"{item.name}: over {limit // (1024 * 1024)} MiB")
    return data


def analyse_one(
    item: Item, add: bool = False, redact_paths: bool = False, engine: str = "auto", cache: Path | None = None
) -> Outcome:
    """Explain one log: its JSON line (and entry, with `add`); an unreadable log is an error line."""
    from buildlog.knowledge.artefact import bundled
    from buildlog.learn.features import fingerprint
    from buildlog.store.intake import analyse_data, entry_from

    started, cpu = time.perf_counter(), time.process_time()
    knowledge = bundled()
    try:
        data = read_item(item)
        analysis = analyse_data(data, knowledge, redact_paths=redact_paths, engine=engine, cache=cache)
        entry = None
        report = analysis.report
        if add and report.status not in ("empty", "success"):
            entry = entry_from(item.name, data, analysis, knowledge, redact_paths=redact_paths)
    except BuildlogError as exc:
        return Outcome({"log": item.name, "error": str(exc)})
    except (MemoryError, RecursionError) as exc:
        return Outcome({"log": item.name, "error": f"too large or too deep to analyse ({type(exc).__name__})"})
    top = report.root_causes[0] if report.root_causes else None
    cause = top.id if top else None
    lines = list(analysis.failure)
    line = {
        "log": item.name, "status": report.status, "cause": cause, "title": top.title if top else None,
        "confidence": top.confidence if top else None, "fix": top.fix if top else "",
        "fingerprint": fingerprint(lines, cause or "unknown") if lines else None,
        "evidence": [e.model_dump() for e in top.evidence[:3]] if top else [],
        "lines": report.lines, "bytes": len(data), "seconds": round(time.perf_counter() - started, 4),
        "cpu_seconds": round(time.process_time() - cpu, 4),
    }  # fmt: skip
    return Outcome(line, entry)


def _work(args: tuple[Item, bool, bool, str, Path | None]) -> Outcome:
    return analyse_one(*args)


def run(
    items: Sequence[Item], jobs: int, add: bool = False, redact_paths: bool = False, engine: str = "auto",
    cache: Path | None = None,
) -> Iterator[Outcome]:  # fmt: skip
    """Every item's outcome, as they finish (in any order), on `jobs` processes."""
    tasks = [(item, add, redact_paths, engine, cache) for item in items]
    if jobs <= 1 or len(items) <= 1:
        yield from map(_work, tasks)
        return
    import multiprocessing

    from buildlog.knowledge.artefact import bundled

    bundled()  # loaded once here, so forked workers start with it
    chunk = max(1, min(16, len(tasks) // (jobs * 8)))
    with multiprocessing.Pool(jobs) as pool:
        yield from pool.imap_unordered(_work, tasks, chunksize=chunk)


@dataclass
class Summary:
    """What a scan found: logs by status, causes by count, the most frequent failures, the unreadable."""

    logs: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    by_cause: Counter[str] = field(default_factory=Counter)
    failures: dict[str, dict[str, Any]] = field(default_factory=dict)
    unreadable: list[dict[str, Any]] = field(default_factory=list)
    lines: int = 0
    bytes: int = 0
    cpu_seconds: float = 0.0

    def count(self, line: dict[str, Any]) -> None:
        self.logs += 1
        if "error" in line:
            self.unreadable.append(line)
            self.by_status["unreadable"] += 1
            return
        self.by_status[line["status"]] += 1
        self.lines += line["lines"]
        self.bytes += line["bytes"]
        self.cpu_seconds += line["cpu_seconds"]
        if line["cause"]:
            self.by_cause[line["cause"]] += 1
        if line["fingerprint"] and line["status"] != "success":
            known = self.failures.setdefault(
                line["fingerprint"], {"count": 0, "cause": line["cause"], "title": line["title"], "fix": line["fix"]}
            )
            known["count"] += 1

    def top(self, n: int = 10) -> list[tuple[str, dict[str, Any]]]:
        return sorted(self.failures.items(), key=lambda kv: (-kv[1]["count"], kv[0]))[:n]

    def as_dict(self) -> dict[str, Any]:
        return {
            "logs": self.logs, "by_status": dict(self.by_status), "by_cause": dict(self.by_cause.most_common()),
            "top_failures": [{"fingerprint": fp, **v} for fp, v in self.top()], "unreadable": self.unreadable,
            "lines": self.lines, "bytes": self.bytes, "cpu_seconds": round(self.cpu_seconds, 3),
            "logs_per_cpu_second": round(self.logs / self.cpu_seconds, 2) if self.cpu_seconds else None,
            "mb_per_cpu_second": round(self.bytes / 1e6 / self.cpu_seconds, 2) if self.cpu_seconds else None,
        }  # fmt: skip


def summarise(lines: Iterable[dict[str, Any]]) -> Summary:
    out = Summary()
    for line in lines:
        out.count(line)
    return out
