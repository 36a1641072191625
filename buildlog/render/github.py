"""GitHub Actions: workflow commands that annotate the run, and a step summary with the evidence folded.

`::error file=...,line=...,title=...::message` puts a cause on the run's page (and on the file when
the log is in the repository); a risk is a `::warning`; a cause the session already resolved is a
`::notice`. The summary is markdown for `$GITHUB_STEP_SUMMARY`, which the CLI appends to.
"""

from __future__ import annotations

from html import escape as _escape

from buildlog.render.common import (
    STATUS_MARKS,
    attempt_summary,
    contradiction_line,
    contradiction_lines,
    fact_pairs,
    fix_parts,
    resolved_note,
    table_cell,
)  # fmt: skip
from buildlog.report.schema import Report


def escape(text: str) -> str:
    return _escape(text, quote=False)


def _data(text: str) -> str:
    """A workflow command's message: %, CR and LF escaped as the runner expects."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """A workflow command's property value: also ':' and ',' escaped."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _command(level: str, message: str, file: str | None, line: int | None, title: str) -> str:
    props = []
    if file:
        props.append(f"file={_property(file)}")
    if line:
        props.append(f"line={line}")
    props.append(f"title={_property(title)}")
    return f"::{level} {','.join(props)}::{_data(message)}"


def _file(report: Report) -> str | None:
    """The log's path for `file=`; stdin has none."""
    return None if report.source.startswith("<") else report.source


def render_github(reports: list[Report]) -> str:
    """One workflow command per cause and risk of every report, then a line saying how it ended."""
    out: list[str] = []
    for report in reports:
        file = _file(report)
        for cause in report.root_causes:
            line = cause.evidence[0].line if cause.evidence else None
            resolved = resolved_note(cause.id, report)
            level = "notice" if resolved or report.status == "success" else "error"
            title = f"buildlog: {cause.id}" + (f" ({resolved})" if resolved else "")
            message = f"{cause.title} ({cause.id})" + (f"\n{cause.fix}" if cause.fix else "")
            out.append(_command(level, message, file, line, title))
        for risk in report.risks:
            message = (
                risk.title
                + (f"\n{risk.consequence}" if risk.consequence else "")
                + (f"\n{risk.fix}" if risk.fix else "")
            )
            line = risk.lines[0] if risk.lines else None
            out.append(_command("warning", message, file, line, f"buildlog risk: {risk.id}"))
        for c in report.contradictions:
            line = c.used.line if c.used else c.values[-1].line
            out.append(
                _command("warning", contradiction_line(c, report), file, line, f"buildlog: contradictory {c.fact}")
            )
        out.append(f"{STATUS_MARKS[report.status]} {report.source}: {report.headline}")
    return "\n".join(out) + "\n"


def step_summary(reports: list[Report]) -> str:
    """Markdown for the job's summary page: headline, causes with folded evidence, fixes, risks, facts."""
    out: list[str] = []
    for report in reports:
        out += [
            f"### {STATUS_MARKS[report.status]} {report.headline}",
            "",
            f"`{report.source}` · {report.lines} lines",
            "",
        ]
        if len(report.attempts) > 1:
            out += ["| # | line | command | outcome |", "|---|---|---|---|"]
            for a in report.attempts:
                out.append(f"| {a.number} | {a.line} | `{table_cell(a.command)}` | {attempt_summary(a, report)} |")
            out.append("")
        for cause in report.root_causes:
            note = resolved_note(cause.id, report)
            out += [
                f"**{escape(cause.title)}** (`{cause.id}`, {cause.confidence:.0%}{', ' + note if note else ''})",
                "",
            ]
            if cause.evidence:
                out += [
                    f"<details><summary>Evidence: {len(cause.evidence)} line(s) from line {cause.evidence[0].line}</summary>",
                    "",
                ]
                out += ["```text", *(f"{e.line:>6} | {e.text}" for e in cause.evidence), "```", "", "</details>", ""]
            for kind, body in fix_parts(cause.fix):
                out += ["```bash", body, "```", ""] if kind == "command" else [body, ""]
        if report.risks:
            out += ["**Risks**", ""]
            for risk in report.risks:
                out.append(f"- ⚠️ {escape(risk.title)}" + (f": {escape(risk.consequence)}" if risk.consequence else ""))
            out.append("")
        contradictions = contradiction_lines(report)
        if contradictions:
            out += ["**Contradictions**", "", *(f"- ⚠️ {escape(line)}" for line in contradictions), ""]
        pairs = fact_pairs(report.facts)
        if pairs:
            out += ["<details><summary>Facts from the log</summary>", "", "| fact | value |", "|---|---|"]
            out += [f"| {k} | `{table_cell(v)}` |" for k, v in pairs]
            out += ["", "</details>", ""]
    return "\n".join(out)
