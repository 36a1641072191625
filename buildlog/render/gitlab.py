"""GitLab CI: the terminal report in the job log, in GitLab's collapsible sections.

GitLab folds a job log between two markers, each a line of its own:

    ESC[0Ksection_start:UNIX_TIME:NAME[collapsed=true]CR ESC[0K header text
    ...
    ESC[0Ksection_end:UNIX_TIME:NAME CR ESC[0K

Each report is a section headed by its verdict, open, so the cause and the fix show where the job
failed; inside it, the parts that are long to read and needed only to check the verdict (the
evidence of each cause, the timeline, the lines worth reading, past failures, the facts) are
sections of their own, folded. The time is a parameter, so the output is a function of the
reports and that number alone. Rich drops carriage returns from the text it renders, so a log line
that itself holds marker text (a GitLab job log explained) can never open or close a section here.
"""

from __future__ import annotations

import re

from rich.console import Console, RenderableType
from rich.text import Text

from buildlog.render.common import STATUS_MARKS, full_causes, repeats_note, resolved_note
from buildlog.render.terminal import STATUS_STYLE, blocks, cause_head, evidence, fix, unpadded
from buildlog.report.schema import Report

ESC = "\x1b"
# What GitLab accepts in a section name; anything else in a name would end the marker early.
_NAME = re.compile(r"[^A-Za-z0-9_.-]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_BREAKS = re.compile(r"[\r\n]")
FOLDED = frozenset({"timeline", "relevant", "similar", "facts"})  # each headed by its own first line


def section_start(name: str, header: str, now: int, collapsed: bool = False) -> str:
    """The line that opens a section; the header stays on it (line breaks in it become spaces)."""
    option = "[collapsed=true]" if collapsed else ""
    return f"{ESC}[0Ksection_start:{int(now)}:{_NAME.sub('_', name)}{option}\r{ESC}[0K{_BREAKS.sub(' ', header)}"


def section_end(name: str, now: int) -> str:
    return f"{ESC}[0Ksection_end:{int(now)}:{_NAME.sub('_', name)}\r{ESC}[0K"


def render_gitlab(reports: list[Report], console: Console, now: int) -> str:
    """The reports as a GitLab job log shows them best: each in a section, its long parts folded."""
    out: list[str] = []
    for n, report in enumerate(reports, start=1):
        name = f"buildlog_report_{int(now)}_{n}"  # unique in a job that runs buildlog more than once
        out.append(section_start(name, _headline(report, console), now))
        out.append(_rendered(console, _meta(report)))
        for block_name, block in blocks(report):
            out.append("")
            if block_name == "causes":
                out.extend(_causes(report, console, name, now))
            elif block_name in FOLDED:
                header, _, body = _rendered(console, block).partition("\n")
                out += [section_start(f"{name}_{block_name}", header, now, collapsed=True), body]
                out.append(section_end(f"{name}_{block_name}", now))
            else:
                out.append(_rendered(console, block))
        out.append(section_end(name, now))
    return "\n".join(out) + "\n"


def _headline(report: Report, console: Console) -> str:
    """The report's section header: its verdict, coloured when the console is."""
    text = _CONTROL.sub(" ", f"{STATUS_MARKS[report.status]} buildlog: {report.headline}")
    if console.color_system is None or console.no_color:
        return text
    with console.capture() as captured:
        console.print(Text(text, style=STATUS_STYLE[report.status]), end="", soft_wrap=True)
    return captured.get()


def _meta(report: Report) -> RenderableType:
    meta = Text(f"{report.source} · {report.lines} lines", style="dim")
    for note in (report.missing, repeats_note(report)):
        if note:
            meta.append("\n" + note, style="yellow")
    return meta


def _causes(report: Report, console: Console, parent: str, now: int) -> list[str]:
    out: list[str] = []
    for n, cause in enumerate(full_causes(report), start=1):
        if n > 1:
            out.append("")
        out.append(_rendered(console, cause_head(n, cause, resolved_note(cause.id, report))))
        if cause.evidence:
            name = f"{parent}_evidence_{n}"
            first, count = cause.evidence[0].line, len(cause.evidence)
            header = f"Evidence: {count} line{'s' if count > 1 else ''} from line {first}"
            out += [section_start(name, header, now, collapsed=True), _rendered(console, evidence(cause.evidence))]
            out.append(section_end(name, now))
        if cause.fix:
            out.append(_rendered(console, fix(cause.fix)))
    return out


def _rendered(console: Console, block: RenderableType) -> str:
    with console.capture() as captured:
        console.print(block, crop=False)
    return unpadded(captured.get()).rstrip("\n")
