"""The terminal report (rich): timeline first, then causes with evidence and fix, risks, facts.

Colour only when the console is a terminal; rich honours NO_COLOR and plain pipes get plain text.
"""

from __future__ import annotations

import re

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from buildlog.render.common import (
    STATUS_MARKS,
    attempt_summary,
    contradiction_lines,
    fact_pairs,
    fix_parts,
    full_causes,
    incident_summary,
    repeats_note,
    resolved_note,
    seen_before_count,
    seen_before_groups,
    similar_note,
    solved_summaries,
)  # fmt: skip
from buildlog.report.schema import Evidence, Report, RootCause

STATUS_STYLE = {"failure": "bold red", "success": "bold green", "unknown": "bold yellow", "empty": "bold"}


_TRAILING = re.compile(r" +((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


def render_terminal(report: Report, console: Console) -> None:
    """Print the report on `console` (trailing padding removed, so pasted output stays clean)."""
    with console.capture() as captured:
        console.print(_header(report))
        for _, block in blocks(report):
            console.print()
            console.print(block, crop=False)
    console.file.write(unpadded(captured.get()))


def unpadded(text: str) -> str:
    """Rendered text without the spaces rich pads each line with (colour codes kept)."""
    return _TRAILING.sub(r"\1", text)


def blocks(report: Report) -> list[tuple[str, RenderableType]]:
    """The report's blocks after the header, in order and named (the GitLab renderer folds some)."""
    made = {
        "narrative": _narrative, "timeline": _timeline, "solved": _solved, "causes": _causes,
        "relevant": _relevant, "risks": _risks, "contradictions": _contradictions, "similar": _similar,
        "facts": _facts,
    }  # fmt: skip
    found = ((name, make(report)) for name, make in made.items())
    return [(name, block) for name, block in found if block is not None]


def _header(report: Report) -> RenderableType:
    mark = STATUS_MARKS[report.status]
    title = Text(f"{mark} {report.headline}", style=STATUS_STYLE[report.status])
    meta = Text(f"{report.source} · {report.lines} lines", style="dim")
    parts: list[RenderableType] = [title, meta]
    for note in (report.missing, repeats_note(report)):
        if note:
            parts.append(Text(note, style="yellow"))
    return Group(*parts)


def _section(title: str) -> Text:
    return Text(title, style="bold underline")


def _timeline(report: Report) -> RenderableType | None:
    if len(report.attempts) < 2 and not any(i.resolved_by for i in report.incidents) and not _has_checks(report):
        return None
    table = Table.grid(padding=(0, 2))
    for attempt in report.attempts:
        style = {"failure": "red", "success": "green"}.get(attempt.outcome, "yellow")
        table.add_row(
            Text(f"#{attempt.number}", style="bold"), Text(f"line {attempt.line}", style="dim"),
            Text(attempt.command, overflow="fold"), Text(attempt_summary(attempt, report), style=style),
        )  # fmt: skip
        for check in attempt.checks:
            mark = "green" if check.outcome == "passed" else "red"
            table.add_row(
                Text(""), Text(f"line {check.line}", style="dim"), Text(f"└ {check.command}", overflow="fold", style="dim"),
                Text(f"check {check.outcome}", style=mark),
            )  # fmt: skip
    lines: list[RenderableType] = [_section("Timeline"), table]
    solved = {c.id for c, _, _ in solved_summaries(report)}
    listed = [i for i in report.incidents if i.cause not in solved]  # solved ones have their own section
    if listed:
        lines.append(Text())
        for incident in listed:
            style = "green" if incident.resolved_by else "red"
            lines.append(Text(f"{incident.id}  {incident_summary(incident)}", style=style))
    return Group(*lines)


def _has_checks(report: Report) -> bool:
    return any(a.checks for a in report.attempts)


def _narrative(report: Report) -> RenderableType | None:
    if not report.narrative:
        return None
    return Text(" ".join(report.narrative), overflow="fold")


def _solved(report: Report) -> RenderableType | None:
    solved = solved_summaries(report)
    if not solved:
        return None
    parts: list[RenderableType] = [_section("Solved on the way")]
    for cause, proof, fixed in solved:
        head = Text("✓ ", style="green")
        head.append(cause.id, style="bold magenta")
        head.append(f"  {cause.title}")
        parts.append(head)
        details = Text()
        if proof:
            details.append(proof + "\n", style="dim")
        details.append(f"fixed in {fixed}", style="green")
        parts.append(Padding(details, (0, 0, 0, 2), expand=False))
    return Group(*parts)


def _causes(report: Report) -> RenderableType | None:
    causes = full_causes(report)
    if not causes:
        return None
    blocks: list[RenderableType] = []
    for n, cause in enumerate(causes, start=1):
        blocks += [_cause(n, cause, resolved_note(cause.id, report)), Text()]
    return Group(*blocks[:-1])


def _cause(n: int, cause: RootCause, note: str) -> RenderableType:
    parts: list[RenderableType] = [cause_head(n, cause, note)]
    if cause.evidence:
        parts += [Text("Evidence", style="bold"), evidence(cause.evidence)]
    if cause.fix:
        parts.append(fix(cause.fix))
    return Group(*parts)


def cause_head(n: int, cause: RootCause, note: str) -> RenderableType:
    """The line "Cause N: id (confidence)" and the cause's title."""
    head = Text(f"Cause {n}: ", style="bold")
    head.append(cause.id, style="bold magenta")
    if cause.id != "unknown":
        head.append(f"  ({cause.confidence:.0%})" + ("  classifier" if cause.engine == "model" else ""), style="dim")
    if note:
        head.append(f"  {note}", style="green")
    return Group(head, Text(cause.title))


def evidence(lines: list[Evidence]) -> RenderableType:
    return Padding(_numbered(lines), (0, 0, 0, 2), expand=False)


def fix(text: str) -> RenderableType:
    return Group(Text("Fix", style="bold"), _fix(text, 2))


def _numbered(evidence: list[Evidence]) -> RenderableType:
    """Line numbers in their own column, so wrapped text stays aligned."""
    table = Table.grid(padding=(0, 1))
    table.add_column(justify="right", style="dim")
    table.add_column(style="dim")
    table.add_column(overflow="fold")
    for e in evidence:
        table.add_row(str(e.line), "│", Text(e.text))
    return table


def _fix(fix: str, indent: int) -> RenderableType:
    """Prose wraps; a command is one line however wide (never cropped), so it pastes whole."""
    parts: list[RenderableType] = []
    for kind, body in fix_parts(fix):
        if kind == "command":
            for line in body.splitlines():
                command = Text(" " * indent)
                command.append(f"$ {line}", style="bold cyan")
                command.no_wrap, command.overflow = True, "ignore"
                parts.append(command)
        else:
            parts.append(Padding(Text(body), (0, 0, 0, indent), expand=False))
    return Group(*parts)


def _relevant(report: Report) -> RenderableType | None:
    if not report.relevant or any(c.id == "unknown" for c in report.root_causes):
        return None
    return Group(_section("Lines worth reading"), _numbered(report.relevant))


def _risks(report: Report) -> RenderableType | None:
    if not report.risks:
        return None
    parts: list[RenderableType] = [_section("Risks")]
    for risk in report.risks:
        style = "red" if risk.severity == "error" else "yellow"
        parts.append(Text(f"! {risk.title}", style=f"bold {style}"))
        details = Text()
        facts = ", ".join(f"{k}={v}" for k, v in risk.facts.items())
        if facts:
            details.append(f"facts: {facts}\n", style="dim")
        if risk.consequence:
            details.append(risk.consequence + "\n")
        details.rstrip()
        if details.plain:
            parts.append(Padding(details, (0, 0, 0, 2), expand=False))
        if risk.fix:
            parts.append(_fix(risk.fix, 2))
    return Group(*parts)


def _contradictions(report: Report) -> RenderableType | None:
    lines = contradiction_lines(report)
    if not lines:
        return None
    return Group(_section("Contradictions"), *(Text(f"! {line}", style="yellow", overflow="fold") for line in lines))


def _similar(report: Report) -> RenderableType | None:
    groups = seen_before_groups(report)
    if not groups:
        return None
    parts: list[RenderableType] = []
    for heading, items in groups:
        parts.append(_section(heading))
        for s in items:
            line = Text(f"{s.cause}", style="bold magenta")
            more = seen_before_count(report, s) - 1
            line.append(f"  ({similar_note(s)}" + (f", and {more} more like it" if more else "") + ")", style="dim")
            if s.fix:
                line.append(f"  fixed by: {s.fix}", style="green")
            parts.append(line)
    return Group(*parts)


def _facts(report: Report) -> RenderableType | None:
    pairs = fact_pairs(report.facts)
    if not pairs:
        return None
    table = Table.grid(padding=(0, 2))
    for label, value in pairs:
        table.add_row(Text(label, style="dim"), Text(value, overflow="fold"))
    return Group(_section("Facts from the log"), table)
