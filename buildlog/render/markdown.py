"""A markdown report that pastes cleanly into a GitHub or Jira ticket."""

from __future__ import annotations

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
    table_cell,
)  # fmt: skip
from buildlog.report.schema import Report, RootCause


def render_markdown(report: Report) -> str:
    """The whole report as markdown text."""
    out = [f"## {STATUS_MARKS[report.status]} {report.headline}", "", f"`{report.source}` · {report.lines} lines"]
    for note in (report.missing, repeats_note(report)):
        if note:
            out += ["", f"> {note}"]
    if report.narrative:
        out += ["", " ".join(report.narrative)]
    out += _timeline(report)
    solved = solved_summaries(report)
    if solved:
        out += ["", "### Solved on the way", ""]
        for cause, proof, fixed in solved:
            out.append(
                f"- ✓ `{cause.id}` {cause.title}"
                + (f" — `{table_cell(proof)}`" if proof else "")
                + f" — fixed in {fixed}"
            )
    for n, cause in enumerate(full_causes(report), start=1):
        out += _cause(n, cause, resolved_note(cause.id, report))
    if report.relevant and not any(c.id == "unknown" for c in report.root_causes):
        out += ["", "### Lines worth reading", "", "```text", *_numbered(report.relevant), "```"]
    out += _risks(report)
    contradictions = contradiction_lines(report)
    if contradictions:
        out += ["", "### Contradictions", "", *(f"- ⚠️ {line}" for line in contradictions)]
    out += _similar(report)
    out += _facts(report)
    return "\n".join(out).rstrip() + "\n"


def _timeline(report: Report) -> list[str]:
    checks = any(a.checks for a in report.attempts)
    if len(report.attempts) < 2 and not any(i.resolved_by for i in report.incidents) and not checks:
        return []
    out = ["", "### Timeline", "", "| # | line | command | outcome |", "|---|---|---|---|"]
    for a in report.attempts:
        out.append(f"| {a.number} | {a.line} | `{table_cell(a.command)}` | {attempt_summary(a, report)} |")
        out += [f"| └ | {c.line} | `{table_cell(c.command)}` | check {c.outcome} |" for c in a.checks]
    solved = {c.id for c, _, _ in solved_summaries(report)}
    listed = [i for i in report.incidents if i.cause not in solved]  # solved ones have their own section
    if listed:
        out.append("")
        out += [f"- **{i.id}** {incident_summary(i)}" for i in listed]
    return out


def _numbered(evidence) -> list[str]:  # type: ignore[no-untyped-def]
    width = max((len(str(e.line)) for e in evidence), default=1)
    return [f"{e.line:>{width}} | {e.text}" for e in evidence]


def _cause(n: int, cause: RootCause, note: str) -> list[str]:
    suffix = f" · {note}" if note else ""
    confidence = (
        "" if cause.id == "unknown" else f" ({cause.confidence:.0%}{', classifier' if cause.engine == 'model' else ''})"
    )
    out = ["", f"### Cause {n}: `{cause.id}`{confidence}{suffix}", "", cause.title]
    if cause.evidence:
        out += ["", "```text", *_numbered(cause.evidence), "```"]
    if cause.fix:
        out += ["", "**Fix**", ""]
        for kind, body in fix_parts(cause.fix):
            out += ["```bash", body, "```"] if kind == "command" else [body]
    return out


def _risks(report: Report) -> list[str]:
    if not report.risks:
        return []
    out = ["", "### Risks", ""]
    for risk in report.risks:
        facts = ", ".join(f"`{k}={v}`" for k, v in risk.facts.items())
        out.append(f"- **{risk.title}**" + (f" ({facts})" if facts else ""))
        if risk.consequence:
            out.append(f"  {risk.consequence}")
        for kind, body in fix_parts(risk.fix):
            if kind == "command":
                out += ["  ```bash", *(f"  {line}" for line in body.splitlines()), "  ```"]
            elif body:
                out.append(f"  {body}")
    return out


def _similar(report: Report) -> list[str]:
    out: list[str] = []
    for heading, items in seen_before_groups(report):
        out += ["", f"### {heading}", ""]
        for s in items:
            more = seen_before_count(report, s) - 1
            note = similar_note(s) + (f", and {more} more like it" if more else "")
            out.append(f"- `{s.cause}` ({note})" + (f" — fixed by: {s.fix}" if s.fix else ""))
    return out


def _facts(report: Report) -> list[str]:
    pairs = fact_pairs(report.facts)
    if not pairs:
        return []
    return [
        "",
        "### Facts from the log",
        "",
        "| fact | value |",
        "|---|---|",
        *(f"| {k} | `{table_cell(v)}` |" for k, v in pairs),
    ]
