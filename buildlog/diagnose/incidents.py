"""Incidents across a session, and the change that resolved each one.

An incident is one distinct cause, with every attempt it occurred in. It is resolved by the first
later attempt that got past the stage where it failed (or succeeded) without it: an attempt that
failed earlier for another reason proves nothing. The change reported is the difference between
the last attempt with the incident and the resolving one, with the kind of change that bears on
the cause (knowledge/resolution.toml) named first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from buildlog.knowledge.records import Bearing
from buildlog.report.schema import Facts, Incident, Outcome, Resolution
from buildlog.segment import RANK, Span, core_command, targets_of


@dataclass(frozen=True)
class Occurrence:
    """A cause seen in an attempt, at a line, while the build was at a stage."""

    cause: str
    attempt: int
    line: int
    stage: str


FactsFor = Callable[[int], Facts]


def build_incidents(
    occurrences: Sequence[Occurrence],
    spans: Sequence[Span],
    outcomes: Mapping[int, Outcome],
    bearings: Mapping[str, Bearing],
    facts_for: FactsFor | None = None,
) -> list[Incident]:
    """Group occurrences by cause (in order of first appearance) and find each resolution."""
    causes_in: dict[int, set[str]] = {}
    for occ in occurrences:
        causes_in.setdefault(occ.attempt, set()).add(occ.cause)
    by_cause: dict[str, list[Occurrence]] = {}
    for occ in sorted(occurrences, key=lambda o: o.line):
        by_cause.setdefault(occ.cause, []).append(occ)
    spans_by_number = {s.number: s for s in spans}
    incidents = []
    for n, (cause, occs) in enumerate(by_cause.items(), start=1):
        attempts = sorted({o.attempt for o in occs})
        last = max(occs, key=lambda o: o.attempt)
        resolution = _resolution(
            cause, last, spans, spans_by_number, outcomes, attempts, causes_in, bearings, facts_for
        )
        incidents.append(Incident(id=f"I{n}", cause=cause, attempts=attempts, resolved_by=resolution))
    return incidents


def _resolution(
    cause: str,
    last: Occurrence,
    spans: Sequence[Span],
    by_number: Mapping[int, Span],
    outcomes: Mapping[int, Outcome],
    attempts: list[int],
    causes_in: Mapping[int, set[str]],
    bearings: Mapping[str, Bearing],
    facts_for: FactsFor | None,
) -> Resolution | None:
    failing = by_number[last.attempt]
    for span in spans:
        if span.number <= last.attempt or span.number in attempts or not _same_target(failing, span):
            continue
        later = causes_in.get(span.number, set())
        got_past = RANK[span.stage] > RANK[last.stage] or any(
            c in bearings and cause in bearings[c].proves_past for c in later
        )
        if outcomes.get(span.number) == "success" or got_past:
            return _describe(cause, failing, span, spans, outcomes, bearings, facts_for)
    return None


def _same_target(a: Span, b: Span) -> bool:
    """Attempts prove something about each other only if they build the same thing (or say nothing)."""
    ta, tb = targets_of(a.command), targets_of(b.command)
    return not ta or not tb or bool(ta & tb)


def _describe(
    cause: str,
    before: Span,
    after: Span,
    spans: Sequence[Span],
    outcomes: Mapping[int, Outcome],
    bearings: Mapping[str, Bearing],
    facts_for: FactsFor | None,
) -> Resolution:
    changes = _differences(before, after, spans, outcomes)
    if facts_for is not None:
        changes += _fact_changes(facts_for(before.number), facts_for(after.number))
    order = list(bearings[cause].changes) if cause in bearings else []
    ranked = sorted(changes, key=lambda c: order.index(c[0]) if c[0] in order else len(order))
    bearing = [c for c in ranked if c[0] in order]
    chosen = (
        bearing[0] if bearing else (ranked[0] if ranked else ("rerun", "no visible change (the same command, rerun)"))
    )
    others = [text for kind, text in ranked if text != chosen[1] and kind in order]  # only what could bear on it
    return Resolution(attempt=after.number, change=chosen[1], kind=chosen[0], other_changes=others)


def _differences(
    before: Span, after: Span, spans: Sequence[Span], outcomes: Mapping[int, Outcome]
) -> list[tuple[str, str]]:
    """(kind, description) of every difference between two attempts."""
    out: list[tuple[str, str]] = []
    for key in sorted(set(before.env) | set(after.env)):
        old, new = before.env.get(key), after.env.get(key)
        if old != new:
            out.append((_ENV_KINDS.get(key, "env"), _env_change(key, old, new)))
    if before.venv != after.venv:
        out.append(("interpreter", _venv_change(before.venv, after.venv)))
    elif before.interpreter and after.interpreter and before.interpreter != after.interpreter:
        out.append(("interpreter", _interpreter_change(before.interpreter, after.interpreter)))
    out.extend(_flag_changes(before.command, after.command))
    between = [
        s for s in spans
        if before.number < s.number < after.number and not _same_target(before, s) and outcomes.get(s.number) != "failure"
    ]  # fmt: skip
    commands = [s.command for s in between] + [
        c for s in spans if before.number < s.number <= after.number for c in s.prepared
    ]
    commands += _chained_helpers(after.command)
    already = {t for c in before.prepared + _chained_helpers(before.command) for t in targets_of(c)}
    installed = sorted({t for c in commands for t in targets_of(c)} - already)
    if installed:
        out.append(("packages", "installed " + " ".join(installed) + " in between"))
    return out


_FACT_KINDS = {"torch": "packages", "nvcc": "toolkit", "gcc": "compiler", "python": "interpreter", "driver": "driver"}


def _fact_changes(old: Facts, new: Facts) -> list[tuple[str, str]]:
    """Versions the log states that differ between two attempts (a new image, a reinstall)."""
    out = []
    for name, kind in _FACT_KINDS.items():
        a, b = getattr(old, name), getattr(new, name)
        if a is not None and b is not None and a.value != b.value:
            out.append((kind, f"{name} {b.value} (was {a.value})"))
    return out


_ENV_KINDS = {
    "CUDA_HOME": "toolkit", "CUDA_PATH": "toolkit", "PATH": "toolkit", "LD_LIBRARY_PATH": "toolkit",
    "MAX_JOBS": "jobs", "NVCC_THREADS": "jobs", "CMAKE_BUILD_PARALLEL_LEVEL": "jobs",
    "TORCH_CUDA_ARCH_LIST": "arch", "CUDAARCHS": "arch",
    "CC": "compiler", "CXX": "compiler", "NVCC_CCBIN": "compiler", "CUDAHOSTCXX": "compiler",
    "TMPDIR": "disk", "PIP_CACHE_DIR": "disk", "PIP_NO_CACHE_DIR": "disk",
}  # fmt: skip


def _venv_change(old: str | None, new: str | None) -> str:
    if new is None:
        return f"left the venv {old}"
    if old is None:
        return f"activated the venv {new}"
    return f"switched to the venv {new} (was {old})"


def _interpreter_change(old: str, new: str) -> str:
    """`ran pip from the venv /opt/v (was the system Python 3.11.2)`, in words a person would use."""
    return f"ran {_program_words(new)} (was {_program_words(old)})"


def _program_words(program: str) -> str:
    if program.startswith("the system Python"):  # pip refused it: "the system Python (3.11.2) via pip"
        version = re.search(r"\((\d[\d.]*)\)", program)
        return "the system Python" + (f" {version.group(1)}" if version else "")
    m = re.match(r"^(sudo )?(\S+)/bin/(\S+?)(?: -m pip)?$", program)
    if m:
        name = "pip" if "pip" in m.group(3) or program.endswith("-m pip") else m.group(3)
        return f"{m.group(1) or ''}{name} from the venv {m.group(2)}"
    return program


_TOOLKIT_VARS = frozenset({"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})


def _env_change(key: str, old: str | None, new: str | None) -> str:
    if key in _TOOLKIT_VARS and new is not None:
        return f"pointed {key} at {new}" + (f" (was {old})" if old is not None else " (unset before)")
    if new is None:
        return f"unset {key} (was {old})"
    if old is None:
        return f"{key}={new} (unset before)"
    return f"{key}={new} (was {old})"


_FLAG_KINDS = {
    "--no-build-isolation": "isolation", "--no-cache-dir": "disk", "--break-system-packages": "interpreter",
    "--system": "interpreter", "--user": "interpreter", "-allow-unsupported-compiler": "compiler",
}  # fmt: skip


_NOT_FLAGS = frozenset({"-m", "-c", "-e", "-v", "-vv", "-q", "-y"})


def _flag_changes(old: str, new: str) -> list[tuple[str, str]]:
    old, new = core_command(old), core_command(new)
    old_words, new_words = set(old.split()) - _NOT_FLAGS, set(new.split()) - _NOT_FLAGS
    out = []
    for flag in sorted(new_words - old_words):
        if flag.startswith("-"):
            out.append((_FLAG_KINDS.get(flag.split("=")[0], "flags"), f"added {flag}"))
    for flag in sorted(old_words - new_words):
        if flag.startswith("-"):
            out.append((_FLAG_KINDS.get(flag.split("=")[0], "flags"), f"dropped {flag}"))
    pinned_old = set(re.findall(r"\S+==\S+", old))
    pinned_new = set(re.findall(r"\S+==\S+", new))
    for pin in sorted(pinned_new - pinned_old):
        out.append(("version", f"asked for {pin}"))
    return out


def _chained_helpers(command: str) -> list[str]:
    """`pip install a b && pip install thing`: the installs before the last one prepare it."""
    parts = [p for p in re.split(r"\s(?:&&|;)\s", command) if targets_of(p)]
    return parts[:-1]
