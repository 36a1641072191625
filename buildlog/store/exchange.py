"""Export a store to the corpus's on-disk format, and import such a folder back.

A team shares its store through git: `corpus export DIR` writes `<slug>.log` (or `.log.gz` for long
logs) beside a `<slug>.toml` sidecar, which `buildlog eval DIR` measures like the bundled corpus,
and `corpus import DIR` reads such a folder (the repository's corpus/cases too) into a store.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from buildlog.errors import BuildlogError
from buildlog.knowledge.bundle import Knowledge
from buildlog.store.backend import TEXTS, Store, the_mask
from buildlog.store.cases import Case, Sidecar, dump_sidecar, iter_cases
from buildlog.store.intake import check_cause, entry_from_file
from buildlog.store.records import Entry, Stored, now_stamp

GZIP_ABOVE = 200 * 1024  # the corpus's rule: logs over ~200 KB are gzipped


def sidecar_for(row: Stored) -> Sidecar:
    """The sidecar of an exported incident: its label, proof lines, fix, ticket and sightings."""
    return Sidecar(
        title=row.title, provenance="reported", date=row.first_seen[:10], source=row.source,
        outcome="unknown" if row.outcome == "unknown" and row.cause == "unknown" else "failure",
        causes=[row.cause], key_lines=list(row.key_lines), fix=row.fix, ticket=row.ticket,
        seen=row.seen, last_seen=row.last_seen[:10],
    )  # fmt: skip


@dataclass(frozen=True)
class Exported:
    """What an export wrote (the sidecars) and the incidents it could not (with why)."""

    written: list[Path]
    skipped: list[str]


def export_store(store: Store, folder: Path) -> Exported:
    """Write every incident to `folder`; an incident whose stored log is damaged is skipped and named.

    Files of the same name are replaced (a re-export into a git checkout updates it); other files
    are left alone. Each file is written beside itself and renamed, so a reader never sees half.
    """
    if folder.exists() and not folder.is_dir():
        raise BuildlogError(f"{folder}: not a directory")
    folder.mkdir(parents=True, exist_ok=True)
    mask = the_mask(paths=True)  # what leaves the store for sharing also loses user names, homes and hosts
    written, skipped = [], []
    for row in store.incidents():
        try:
            data = mask(store.log_text(row)).encode("utf-8")
        except BuildlogError as exc:
            skipped.append(f"#{row.id} {row.fingerprint[:8]}: {exc}")
            continue
        plain, packed = folder / f"{row.slug}.log", folder / f"{row.slug}.log.gz"
        if len(data) > GZIP_ABOVE:
            _write(packed, gzip.compress(data, mtime=0))
            plain.unlink(missing_ok=True)
        else:
            _write(plain, data)
            packed.unlink(missing_ok=True)
        sidecar = folder / f"{row.slug}.toml"
        _write(sidecar, dump_sidecar(sidecar_for(_masked(row, mask))).encode("utf-8"))
        written.append(sidecar)
    return Exported(written, skipped)


def _masked(row: Stored, mask: Callable[[str], str]) -> Stored:
    return replace(row, **{k: mask(getattr(row, k)) for k in TEXTS}, key_lines=tuple(map(mask, row.key_lines)))


def _write(path: Path, data: bytes) -> None:
    tmp = ""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # never leave a half-written file behind
        raise BuildlogError(f"{path}: cannot write ({exc.strerror or exc})") from None


@dataclass(frozen=True)
class Imported:
    """What an import found: the sightings to merge and the cases with no failure to remember."""

    items: list[tuple[Entry, int, str, str]]
    skipped: list[str]


def read_cases(folder: Path, knowledge: Knowledge, redact_paths: bool = False) -> Imported:
    """Every failure case of a folder as store sightings, all checked before anything is written."""
    items, skipped = [], []
    for case in _cases(folder):
        side = case.sidecar
        if not side.causes or side.outcome == "success":
            skipped.append(case.slug)
            continue
        cause = check_cause(side.causes[0], knowledge, where=f"{case.slug}.toml")
        try:  # a big plain log is analysed as a stream and kept as an excerpt; a compressed one is bounded
            _, entry = entry_from_file(
                str(case.log_path), knowledge, cause=cause, title=side.title, fix=side.fix, ticket=side.ticket,
                key_lines=side.key_lines, redact_paths=redact_paths, use_model=False,
            )  # fmt: skip
        except BuildlogError as exc:
            skipped.append(f"{case.slug} ({exc})")
            continue
        entry = replace(entry, source=case.slug) if entry.source != case.slug else entry
        first = side.date or now_stamp()
        items.append((entry, side.seen, first, max(side.last_seen or first, first)))
    return Imported(items, skipped)


def _cases(folder: Path) -> Iterator[Case]:
    cases = list(iter_cases(folder))
    if not cases:
        raise BuildlogError(f"{folder}: no cases (a case is <slug>.log or .log.gz beside <slug>.toml)")
    yield from cases
