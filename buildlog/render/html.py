"""A self-contained HTML report: one file, no network, opens in any browser.

The timeline is drawn as an SVG chart of the attempts along the log (where each starts and ends,
coloured by how it ended), each incident a row of marks across the attempts it occurred in, with
the change that resolved it. Then the causes with their evidence and line numbers, the risks and
the facts. Styles are inline; there is no script and nothing is fetched.
"""

from __future__ import annotations

from html import escape

from buildlog.render.common import (
    STATUS_MARKS,
    attempt_summary,
    contradiction_lines,
    fact_pairs,
    fix_parts,
    incident_summary,
    resolved_note,
)  # fmt: skip
from buildlog.report.schema import Report

COLOURS = {"success": "#1a7f37", "failure": "#cf222e", "unknown": "#9a6700"}
STYLE = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 70rem;
       padding: 0 1rem; color: #1f2328; background: #fff; }
h1 { font-size: 1.4rem; margin-bottom: .2rem; } h2 { font-size: 1.15rem; margin-top: 2rem;
     border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; }
.meta { color: #59636e; } .status-failure { color: #cf222e; } .status-success { color: #1a7f37; }
.status-unknown { color: #9a6700; } .cause { border: 1px solid #d0d7de; border-radius: 6px; padding: .2rem 1rem 1rem;
       margin: 1rem 0; }
table.evidence { border-collapse: collapse; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; width: 100%; }
table.evidence td { padding: 0 .6rem; vertical-align: top; white-space: pre-wrap; word-break: break-all; }
table.evidence td.n { color: #59636e; text-align: right; border-right: 1px solid #d0d7de; user-select: none; width: 1%;
       white-space: nowrap; }
pre.command { background: #f6f8fa; border-radius: 6px; padding: .5rem .8rem; overflow-x: auto; margin: .3rem 0;
       font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; }
table.facts { border-collapse: collapse; } table.facts td { padding: .1rem 1rem .1rem 0; }
table.facts td:first-child { color: #59636e; }
.risk { margin: .8rem 0; } .risk b { color: #9a6700; } .risk.error b { color: #cf222e; }
svg text { font: 12px system-ui, sans-serif; } svg .label { fill: #fff; font-weight: 600; }
"""


def render_html(reports: list[Report]) -> str:
    """One page for one or more reports."""
    title = reports[0].headline if len(reports) == 1 else f"buildlog: {len(reports)} logs"
    body = "\n".join(_report(r, n) for n, r in enumerate(reports))
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def _report(report: Report, n: int) -> str:
    out = [
        f'<section id="log-{n}">',
        f'<h1 class="status-{report.status}">{escape(STATUS_MARKS[report.status])} {escape(report.headline)}</h1>',
        f'<p class="meta">{escape(report.source)} · {report.lines} lines</p>',
    ]
    if report.missing:
        out.append(f"<p><em>{escape(report.missing)}</em></p>")
    out.append(_timeline(report, n))
    for i, cause in enumerate(report.root_causes, start=1):
        out.append(_cause(report, cause, i, n))
    if report.relevant and not report.root_causes:
        out += ["<h2>Lines worth reading</h2>", _evidence(report.relevant)]
    out.append(_risks(report))
    contradictions = contradiction_lines(report)
    if contradictions:
        out += [
            "<h2>Contradictions</h2>",
            "<ul>",
            *(f'<li class="risk">{escape(line)}</li>' for line in contradictions),
            "</ul>",
        ]
    out.append(_facts(report))
    out.append("</section>")
    return "\n".join(part for part in out if part)


def _timeline(report: Report, n: int) -> str:
    """The attempts along the log as bars, then one row of marks per incident, resolutions named."""
    attempts = report.attempts
    if not attempts:
        return ""
    left, right, bar_h, gap = 70, 20, 28, 10
    width = 1000
    span = max(report.lines, max(a.end_line or a.line for a in attempts), 1)

    def x(line: int) -> float:
        return left + (width - left - right) * (line - 1) / max(span - 1, 1)

    rows = ['<h2>Timeline</h2>', f'<svg id="timeline-{n}" class="timeline" role="img" viewBox="0 0 {width} {{height}}" '
            f'width="100%" aria-label="attempts along the log">']  # fmt: skip
    y = 10
    rows.append(f'<text x="0" y="{y + 18}">attempts</text>')
    for a in attempts:
        x0, x1 = x(a.line), x(max(a.end_line, a.line))
        w = max(x1 - x0, 6)
        colour = COLOURS.get(a.outcome, COLOURS["unknown"])
        tip = f"attempt {a.number}, lines {a.line}-{a.end_line or a.line}: {a.command} - {attempt_summary(a, report)}"
        rows.append(
            f'<a href="#attempt-{n}-{a.number}"><rect class="attempt {a.outcome}" x="{x0:.1f}" y="{y}" width="{w:.1f}" '
            f'height="{bar_h}" rx="4" fill="{colour}"><title>{escape(tip)}</title></rect>'
            + (f'<text class="label" x="{x0 + 6:.1f}" y="{y + 18}">#{a.number}</text>' if w >= 26 else "")
            + "</a>"
        )
    y += bar_h + gap
    by_number = {a.number: a for a in attempts}
    for incident in report.incidents:
        rows.append(f'<text x="0" y="{y + 14}">{escape(incident.id)}</text>')
        xs = [x(by_number[k].line) + 13 for k in incident.attempts if k in by_number]
        if xs:
            rows.append(
                f'<line x1="{min(xs):.1f}" y1="{y + 10}" x2="{max(xs):.1f}" y2="{y + 10}" stroke="#cf222e" stroke-width="2"/>'
            )
        for cx in xs:
            rows.append(
                f'<circle cx="{cx:.1f}" cy="{y + 10}" r="6" fill="#cf222e"><title>{escape(incident.cause)}</title></circle>'
            )
        label = incident.cause
        if incident.resolved_by and incident.resolved_by.attempt in by_number:
            rx = x(by_number[incident.resolved_by.attempt].line) + 13
            rows.append(f'<circle cx="{rx:.1f}" cy="{y + 10}" r="6" fill="#1a7f37"><title>resolved</title></circle>')
            label += f" - resolved in attempt {incident.resolved_by.attempt} by {incident.resolved_by.change}"
            marks = [*xs, rx]
        else:
            label += " - still open"
            marks = xs or [left]
        anchor = "end" if max(marks) > width * 0.6 else "start"
        tx = min(marks) - 12 if anchor == "end" else max(marks) + 12
        # characters that fit beside the marks (12px text, about 8 units each)
        room = int((tx - left if anchor == "end" else width - tx) / 8)
        text = label if len(label) <= room else label[: max(room - 1, 10)] + "…"
        rows.append(
            f'<text x="{tx:.1f}" y="{y + 14}" text-anchor="{anchor}"><title>{escape(label)}</title>{escape(text)}</text>'
        )
        y += 24
    rows.append(f'<text x="{left}" y="{y + 14}" fill="#59636e">line 1</text>')
    rows.append(f'<text x="{width - right}" y="{y + 14}" fill="#59636e" text-anchor="end">line {span}</text>')
    rows[1] = rows[1].replace("{height}", str(y + 24))
    rows.append("</svg>")
    rows.append("<ol>")
    for a in attempts:
        rows.append(
            f'<li id="attempt-{n}-{a.number}" value="{a.number}"><code>{escape(a.command)}</code> '
            f'<span class="meta">line {a.line}</span> - <span class="status-{a.outcome}">{escape(attempt_summary(a, report))}</span></li>'
        )
    rows.append("</ol>")
    if report.incidents:
        rows.append("<ul>" + "".join(f"<li>{escape(incident_summary(i))}</li>" for i in report.incidents) + "</ul>")
    return "\n".join(rows)


def _evidence(evidence) -> str:  # type: ignore[no-untyped-def]
    rows = "".join(f'<tr><td class="n">{e.line}</td><td>{escape(e.text)}</td></tr>' for e in evidence)
    return f'<table class="evidence">{rows}</table>'


def _cause(report: Report, cause, i: int, n: int) -> str:  # type: ignore[no-untyped-def]
    note = resolved_note(cause.id, report)
    head = f"Cause {i}: <code>{escape(cause.id)}</code> ({cause.confidence:.0%}){' · ' + escape(note) if note else ''}"
    out = [f'<div class="cause" id="cause-{n}-{i}">', f"<h2>{head}</h2>", f"<p>{escape(cause.title)}</p>"]
    if cause.evidence:
        out.append(_evidence(cause.evidence))
    if cause.fix:
        out.append("<h3>Fix</h3>")
        out.append(_fix(cause.fix))
    out.append("</div>")
    return "\n".join(out)


def _fix(fix: str) -> str:
    parts = []
    for kind, body in fix_parts(fix):
        if kind == "command":
            parts.append(
                f'<pre class="command">{escape(chr(10).join("$ " + line for line in body.splitlines()))}</pre>'
            )
        elif body.strip():
            parts.append(f"<p>{escape(body)}</p>")
    return "\n".join(parts)


def _risks(report: Report) -> str:
    if not report.risks:
        return ""
    out = ["<h2>Risks</h2>"]
    for risk in report.risks:
        facts = ", ".join(f"{k}={v}" for k, v in risk.facts.items())
        out.append(f'<div class="risk {risk.severity}"><b>! {escape(risk.title)}</b>'
                   + (f' <span class="meta">({escape(facts)})</span>' if facts else "")
                   + (f"<p>{escape(risk.consequence)}</p>" if risk.consequence else "") + _fix(risk.fix) + "</div>")  # fmt: skip
    return "\n".join(out)


def _facts(report: Report) -> str:
    pairs = fact_pairs(report.facts)
    if not pairs:
        return ""
    rows = "".join(f"<tr><td>{escape(k)}</td><td><code>{escape(v)}</code></td></tr>" for k, v in pairs)
    return f'<h2>Facts from the log</h2>\n<table class="facts">{rows}</table>'
