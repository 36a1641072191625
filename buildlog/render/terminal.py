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
    fact_pairs,
    fix_parts,
    incident_summary,
    repeats_note,
    resolved_note,
    similar_note,
)  # fmt: skip
from buildlog.report.schema import Evidence, Report, RootCause

STATUS_STYLE = {"failure": "bold red", "success": "bold green", "unknown": "bold yellow", "empty": "bold"}


_TRAILING = re.compile(r" +((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


def render_terminal(report: Report, console: Console) -> None:
    """Print the report on `console` (trailing padding removed, so pasted output stays clean)."""
    with console.capture() as captured:
        console.print(_header(report))
        for block in (
            _timeline(report),
            _causes(report),
            _relevant(report),
            _risks(report),
            _similar(report),
            _facts(report),
        ):
            if block is not None:
                console.print()
                console.print(block, crop=False)
    console.file.write(_TRAILING.sub(r"\1", captured.get()))


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
    if len(report.attempts) < 2 and not any(i.resolved_by for i in report.incidents):
        return None
    table = Table.grid(padding=(0, 2))
    for attempt in report.attempts:
        style = {"failure": "red", "success": "green"}.get(attempt.outcome, "yellow")
        table.add_row(
            Text(f"#{attempt.number}", style="bold"), Text(f"line {attempt.line}", style="dim"),
            Text(attempt.command, overflow="fold"), Text(attempt_summary(attempt, report), style=style),
        )  # fmt: skip
    lines: list[RenderableType] = [_section("Timeline"), table]
    if report.incidents:
        lines.append(Text())
        for incident in report.incidents:
            style = "green" if incident.resolved_by else "red"
            lines.append(Text(f"{incident.id}  {incident_summary(incident)}", style=style))
    return Group(*lines)


def _causes(report: Report) -> RenderableType | None:
    if not report.root_causes:
        return None
    blocks: list[RenderableType] = []
    for n, cause in enumerate(report.root_causes, start=1):
        blocks += [_cause(n, cause, resolved_note(cause.id, report)), Text()]
    return Group(*blocks[:-1])


def _cause(n: int, cause: RootCause, note: str) -> RenderableType:
    head = Text(f"Cause {n}: ", style="bold")
    head.append(cause.id, style="bold magenta")
    if cause.id != "unknown":
        head.append(f"  ({cause.confidence:.0%})" + ("  classifier" if cause.engine == "model" else ""), style="dim")
    if note:
        head.append(f"  {note}", style="green")
    parts: list[RenderableType] = [head, Text(cause.title)]
    if cause.evidence:
        parts += [Text("Evidence", style="bold"), Padding(_numbered(cause.evidence), (0, 0, 0, 2), expand=False)]
    if cause.fix:
        parts += [Text("Fix", style="bold"), _fix(cause.fix, 2)]
    return Group(*parts)


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


def _similar(report: Report) -> RenderableType | None:
    if not report.similar:
        return None
    parts: list[RenderableType] = [_section("Seen before")]
    for s in report.similar:
        line = Text(f"{s.cause}", style="bold magenta")
        line.append(f"  {s.title}  ")
        line.append(f"({similar_note(s)})", style="dim")
        parts.append(line)
        if s.fix:
            parts.append(Padding(Text(f"fixed by: {s.fix}", style="green"), (0, 0, 0, 2), expand=False))
    return Group(*parts)


def _facts(report: Report) -> RenderableType | None:
    pairs = fact_pairs(report.facts)
    if not pairs:
        return None
    table = Table.grid(padding=(0, 2))
    for label, value in pairs:
        table.add_row(Text(label, style="dim"), Text(value, overflow="fold"))
    return Group(_section("Facts from the log"), table)
