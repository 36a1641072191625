"""Wording shared by the terminal and markdown renderers, so both tell the same story."""

from __future__ import annotations

import re

from buildlog.report.schema import Attempt, Contradiction, Facts, Incident, Report, RootCause, Similar

OUTCOME_WORDS = {"success": "succeeded", "failure": "failed", "unknown": "ended unclear"}
STATUS_MARKS = {"failure": "✗", "success": "✓", "unknown": "?", "empty": "·"}


def attempt_summary(attempt: Attempt, report: Report) -> str:
    """`failed: cuda_version_mismatch` / `succeeded`."""
    causes = [i.cause for i in report.incidents if i.id in attempt.incidents]
    words = OUTCOME_WORDS[attempt.outcome]
    if attempt.outcome == "success" and attempt.checks and attempt.checks[-1].outcome == "failed":
        return f"built, but its check failed: {', '.join(causes)}" if causes else "built, but its check failed"
    return f"{words}: {', '.join(causes)}" if causes else words


def incident_summary(incident: Incident) -> str:
    """One sentence: where the incident occurred and what resolved it."""
    where = "attempt" + ("s " if len(incident.attempts) > 1 else " ") + ", ".join(map(str, incident.attempts))
    if incident.resolved_by is None:
        return f"{incident.cause} in {where}: still open"
    text = f"{incident.cause} in {where}: resolved in attempt {incident.resolved_by.attempt} by {incident.resolved_by.change}"
    if incident.resolved_by.other_changes:
        text += f" (also changed: {'; '.join(incident.resolved_by.other_changes)})"
    return text


REPEATS_WORTH_A_NOTE = 1000  # fewer repeated lines are ordinary in a verbose build


def repeats_note(report: Report) -> str:
    """What a flooded log repeats: the counts of messages analysed once and counted after."""
    volume = report.volume
    if volume.repeated < REPEATS_WORTH_A_NOTE:
        return ""
    top = volume.top_repeats[0] if volume.top_repeats else None
    most = (
        f"; the most repeated ({top.count:,} more times from line {top.line}): {top.text.strip()[:120]}" if top else ""
    )
    return f"{volume.repeated:,} lines repeat messages already analysed and were counted{most}"


def fact_pairs(facts: Facts) -> list[tuple[str, str]]:
    """The facts worth showing, as (label, value) in a fixed order."""

    def the(name: str) -> str | None:
        fact = getattr(facts, name)
        return fact.value if fact else None

    torch = the("torch")
    if facts.torch_cuda:
        torch = f"{torch or '?'} (CUDA {facts.torch_cuda.value})"
    driver = the("driver")
    if driver and facts.driver_cuda:
        driver += f" (up to CUDA {facts.driver_cuda.value})"
    pairs = [
        ("nvcc (CUDA)", the("nvcc")), ("CUDA_HOME", the("cuda_home")), ("torch", torch), ("driver", driver),
        ("GPUs", ", ".join(g.value for g in facts.gpus)), ("gcc", the("gcc")), ("python", the("python")),
        ("venv", the("venv")), ("MAX_JOBS", the("max_jobs")), ("TORCH_CUDA_ARCH_LIST", the("arch_list")),
        ("arch flags", ", ".join(g.value for g in facts.gencode)), ("RAM (GB)", the("ram_gb")), ("cores", the("cores")),
        *((name, value.value) for name, value in facts.packages.items()),
    ]  # fmt: skip
    return [(label, value) for label, value in pairs if value]


CONTRADICTED = {
    "torch": "torch versions", "torch_cuda": "CUDA versions for torch", "nvcc": "nvcc (CUDA toolkit) versions",
    "python": "Python versions", "cuda_home": "CUDA_HOME values",
}  # fmt: skip
_COUNTS = ("no", "one", "two", "three", "four", "five", "six")


def contradiction_line(c: Contradiction, report: Report) -> str:
    """One line: `two torch versions in this log: 2.5.1 (line 12, pip install) and 2.3.0 (line 480, ...) — the
    build used 2.3.0 (line 480, ...)`."""
    n = len(c.values)
    what = CONTRADICTED.get(c.fact, f"values of {c.fact}")
    where = "in this log"
    if len(report.attempts) > 1 and c.attempts:
        shown = ", ".join(map(str, c.attempts[:3])) + (
            f" and {len(c.attempts) - 3} more" if len(c.attempts) > 3 else ""
        )
        where = ("in attempt " if len(c.attempts) == 1 else "in attempts ") + shown
    stated = [f"{v.value} (line {v.line}, {v.says})" for v in c.values]
    listed = stated[0] if n == 1 else ", ".join(stated[:-1]) + " and " + stated[-1]
    if c.used is not None:
        told = any(v.used and (v.line == c.used.line or v.says == c.used.says) for v in c.values)  # its line is listed
        verdict = f"the build used {c.used.value}" + ("" if told else f" (line {c.used.line}, {c.used.says})")
    else:
        verdict = "the log does not show which one the build used"
    count = _COUNTS[n] if n < len(_COUNTS) else str(n)
    return f"{count} {what} {where}: {listed} — {verdict}" + (f"; {c.note}" if c.note else "")


def contradiction_lines(report: Report) -> list[str]:
    return [contradiction_line(c, report) for c in report.contradictions]


def fix_parts(fix: str) -> list[tuple[str, str]]:
    """Split a fix into ('text', ...) and ('command', ...) parts: lines starting `$ ` are commands."""
    parts: list[tuple[str, str]] = []
    for line in fix.splitlines():
        kind = "command" if line.startswith("$ ") else "text"
        body = line[2:] if kind == "command" else line
        if parts and parts[-1][0] == kind:
            parts[-1] = (kind, parts[-1][1] + "\n" + body)
        else:
            parts.append((kind, body))
    return parts


def table_cell(text: str) -> str:
    """Text inside a markdown table cell or inline code: no `|` that ends the cell, no backtick."""
    return text.replace("|", "\\|").replace("`", "'")


def resolved_note(cause_id: str, report: Report) -> str:
    """`resolved in attempt 4` when the incident of this cause was resolved, else empty."""
    for incident in report.incidents:
        if incident.cause == cause_id and incident.resolved_by:
            return f"resolved in attempt {incident.resolved_by.attempt}"
    return ""


def similar_note(similar: Similar) -> str:
    """How a past failure relates to this log: a repeat ("seen N times") or a neighbour (its similarity).

    Sightings are counted only by a store; a corpus case is named instead.
    """
    parts = ["the same failure" if similar.exact else f"similarity {similar.score:.0%}"]
    if similar.origin == "store":
        times = "once" if similar.seen == 1 else f"{similar.seen} times"
        parts.append(f"seen {times}" + (f", last {similar.last_seen}" if similar.last_seen else ""))
        parts.append(f"store {similar.key}")
    else:
        parts.append(f"corpus case {similar.key}")
    return " · ".join(parts)


_TELLING = re.compile(r"\b\w*(?:Error|Exception)\b:|\bfatal\b|\berror:|Killed|mismatch|not supported|unsupported", re.I)


_SOURCE_CODE = re.compile(r"%[sdr]|\braise\b|\{\w*\}|\(\'")  # a traceback's source line, not the message


def solved_summaries(report: Report) -> list[tuple[RootCause, str, str]]:
    """Once a session ends in success, each solved cause in one line: (cause, proof line, what fixed it)."""
    if report.status != "success":
        return []
    out = []
    for cause in report.root_causes:
        incident = next((i for i in report.incidents if i.cause == cause.id and i.resolved_by), None)
        if incident is None or incident.resolved_by is None:
            continue
        told = [e for e in cause.evidence if _TELLING.search(e.text)]
        plain = [e for e in told if not _SOURCE_CODE.search(e.text)]
        proof = (plain or told or list(cause.evidence) or [None])[0]
        out.append((
            cause, f"line {proof.line}: {proof.text.strip()}" if proof else "",
            f"attempt {incident.resolved_by.attempt}: {incident.resolved_by.change}",
        ))  # fmt: skip
    return out


def full_causes(report: Report) -> list[RootCause]:
    """The causes shown with their whole evidence and fix: all but those summarised as solved."""
    solved = {c.id for c, _, _ in solved_summaries(report)}
    return [c for c in report.root_causes if c.id not in solved]


def seen_before_groups(report: Report) -> list[tuple[str, list[Similar]]]:
    """Past failures, one group per distinct fix: the user's or team's own store first, then the
    bundled examples. Returns (heading, items) where each item stands for every case with its fix."""
    groups: list[tuple[str, list[Similar]]] = []
    for origin, heading in (
        ("store", "Seen before: your own past failures"),
        ("corpus", "Seen before: bundled examples"),
    ):
        by_fix: dict[str, list[Similar]] = {}
        for s in report.similar:
            if s.origin == origin:
                by_fix.setdefault(s.fix or s.key, []).append(s)
        if by_fix:
            groups.append((heading, [items[0] for items in by_fix.values()]))
    return groups


def seen_before_count(report: Report, similar: Similar) -> int:
    """How many past failures of this origin share this one's fix."""
    return sum(
        1 for s in report.similar if s.origin == similar.origin and (s.fix or s.key) == (similar.fix or similar.key)
    )
