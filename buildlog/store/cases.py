"""The on-disk case format: a log (`<slug>.log` or `.log.gz`) beside its sidecar (`<slug>.toml`).

The bundled corpus, `buildlog eval`, and a team's exported store all use this one format, so a
store can be shared through git and evaluated like the corpus.
"""

from __future__ import annotations

import gzip
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from buildlog.errors import BuildlogError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ExpectedIncident(BaseModel):
    """An incident a session log must show, with where it occurred and what resolved it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cause: str
    attempts: list[int] = Field(default_factory=list)
    resolved_in: int = 0
    change: str = ""


class Sidecar(BaseModel):
    """What a case says about its log: provenance and the expected answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str
    provenance: Literal["captured", "reconstructed", "reported", "pasted"]
    date: str = ""
    command: str = ""
    tools: dict[str, str] = Field(default_factory=dict)
    source: str = ""
    repository: str = Field("", description="pasted cases: the repository whose issue thread holds the paste")
    outcome: Literal["failure", "success", "unknown"]
    causes: list[str] = Field(default_factory=list)
    diagnosed: bool = Field(
        True,
        description="pasted cases: false when the thread never said what the cause was (causes is then "
        "['unknown'] and the case is left out of top-1, since nobody knows the right answer)",
    )
    key_lines: list[str] = Field(default_factory=list)
    risks: list[str] = Field(default_factory=list)
    fix: str = ""
    notes: str = ""
    ticket: str = ""
    seen: int = Field(1, ge=1, le=2**62, description="how often a store saw this failure (exported stores)")
    last_seen: str = Field("", description="when a store last saw it; `date` is when it was first seen")
    incidents: list[ExpectedIncident] = Field(default_factory=list)


class Case(BaseModel):
    """A log on disk with its sidecar."""

    model_config = ConfigDict(frozen=True)

    slug: str
    log_path: Path
    sidecar: Sidecar

    def read_bytes(self) -> bytes:
        data = self.log_path.read_bytes()
        return gzip.decompress(data) if self.log_path.suffix == ".gz" else data


MAX_SIDECAR_BYTES = 1024 * 1024


def _regular_inside(path: Path, root: Path) -> bool:
    """A regular file that is no symlink and lies inside `root` (a case never reaches outside its folder)."""
    try:
        return path.is_file() and not path.is_symlink() and path.resolve().is_relative_to(root)
    except OSError:
        return False


def _log_for(sidecar: Path, root: Path) -> Path | None:
    for suffix in (".log", ".log.gz"):
        candidate = sidecar.with_name(sidecar.stem + suffix)
        if _regular_inside(candidate, root):
            return candidate
    return None


def load_sidecar(path: Path) -> Sidecar:
    """Parse and validate one sidecar (a small regular file; a clear error for anything else)."""
    try:
        if path.stat().st_size > MAX_SIDECAR_BYTES:
            raise BuildlogError(f"{path}: invalid sidecar: over {MAX_SIDECAR_BYTES // 1024} KiB")
        return Sidecar.model_validate(tomllib.loads(path.read_text("utf-8")))
    except (tomllib.TOMLDecodeError, ValidationError, UnicodeDecodeError) as exc:
        raise BuildlogError(f"{path}: invalid sidecar: {exc}") from None
    except RecursionError:
        raise BuildlogError(f"{path}: invalid sidecar: nested too deeply") from None
    except OSError as exc:
        raise BuildlogError(f"{path}: cannot read the sidecar ({exc.strerror or exc})") from None


def iter_cases(folder: Path) -> Iterator[Case]:
    """Every case under `folder` (searched recursively), in name order.

    Only regular files inside the folder count: a symlink (to a key elsewhere, say), a folder
    named like a sidecar or anything that resolves outside the folder is passed over.
    """
    if not folder.is_dir():
        raise BuildlogError(f"{folder}: not a directory of cases")
    root = folder.resolve()
    for sidecar in sorted(folder.rglob("*.toml")):
        if not _regular_inside(sidecar, root):
            continue
        log = _log_for(sidecar, root)
        if log is None:
            continue
        yield Case(slug=sidecar.stem, log_path=log, sidecar=load_sidecar(sidecar))


def dump_sidecar(sidecar: Sidecar) -> str:
    """Write a sidecar as TOML (the subset this format uses: strings, lists, tables)."""
    lines: list[str] = []
    data = sidecar.model_dump()
    incidents = data.pop("incidents")
    for key, value in data.items():
        if value in ("", [], {}) and key not in ("title", "provenance", "outcome", "causes"):
            continue
        if key == "seen" and value == 1:
            continue
        lines.append(f"{key} = {_toml_value(value)}")
    for incident in incidents:
        lines += ["", "[[incidents]]", *(f"{k} = {_toml_value(v)}" for k, v in incident.items())]
    return "\n".join(lines) + "\n"


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    out = []
    for ch in str(value):
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'
