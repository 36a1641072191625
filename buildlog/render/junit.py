"""JUnit XML, the test report GitLab (and most CI systems) show in their test panel.

Each log is a test suite; each attempt in it a test case, failed with its causes when it failed
(the evidence, the fix and the risks in the failure's text). A log without attempts is one case.
In a session that ended in success, the attempts that failed on the way pass, their causes and
what resolved them in the case's output.
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

from buildlog.render.common import OUTCOME_WORDS, contradiction_line
from buildlog.report.schema import Report, RootCause

# Characters XML 1.0 cannot carry at all (a log may hold any byte); they become U+FFFD.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: str) -> str:
    return escape(_NOT_XML.sub("\ufffd", value))


def _attr(value: str) -> str:
    return quoteattr(_NOT_XML.sub("\ufffd", value))


def _cause_text(cause: RootCause) -> str:
    lines = [f"{cause.id}: {cause.title} ({cause.confidence:.0%})"]
    lines += [f"  {e.line:>6} | {e.text}" for e in cause.evidence]
    if cause.fix:
        lines += ["Fix:", *(f"  {line}" for line in cause.fix.splitlines())]
    return "\n".join(lines)


def _risks_text(report: Report) -> str:
    if not report.risks:
        return ""
    lines = ["Risks:"]
    for risk in report.risks:
        lines.append(f"  ! {risk.title}" + (f": {risk.consequence}" if risk.consequence else ""))
    return "\n".join(lines)


def _cases(report: Report) -> list[tuple[str, RootCause | None, list[RootCause], bool]]:
    """(name, first cause, causes, failed) for each test case of a report."""
    if not report.attempts:
        failed = report.status == "failure"
        causes = list(report.root_causes) if failed else []
        return [(f"{report.source}", causes[0] if causes else None, causes, failed)]
    cases = []
    for attempt in report.attempts:
        causes = [c for c in report.root_causes if attempt.number in c.attempts]
        # An attempt that failed in a session that then succeeded is history, not a failure now.
        failed = attempt.outcome == "failure" and report.status != "success"
        name = f"attempt {attempt.number} (line {attempt.line}): {attempt.command} - {OUTCOME_WORDS[attempt.outcome]}"
        cases.append((name, causes[0] if causes else None, causes if failed else [], failed))
    if report.status == "failure" and not any(failed for *_, failed in cases):
        cases.append(
            (f"{report.source}", report.root_causes[0] if report.root_causes else None, list(report.root_causes), True)
        )
    return cases


def causes_of(report: Report, case: str) -> list[RootCause]:
    """The causes of the attempt a case name stands for (`attempt N ...`)."""
    match = re.match(r"attempt (\d+) ", case)
    if not match:
        return []
    number = int(match.group(1))
    return [c for c in report.root_causes if number in c.attempts]


def _contradictions_of(report: Report, case: str) -> list[str]:
    """The contradictions a case's attempt holds (all of them for a case that stands for the whole log)."""
    match = re.match(r"attempt (\d+) ", case)
    number = int(match.group(1)) if match else None
    return [
        contradiction_line(c, report)
        for c in report.contradictions
        if number is None or not c.attempts or number in c.attempts
    ]


def render_junit(reports: list[Report]) -> str:
    """The reports as one <testsuites> document."""
    suites: list[str] = []
    total = failures = 0
    for report in reports:
        cases = _cases(report)
        failed = sum(1 for *_, f in cases if f)
        total, failures = total + len(cases), failures + failed
        body = []
        for name, first, causes, is_failure in cases:
            body.append(f"    <testcase classname={_attr('buildlog.' + report.source)} name={_attr(name)}>")
            if is_failure:
                message = first.title if first else report.headline
                kind = first.id if first else "unknown"
                details = (
                    "\n\n".join([*(_cause_text(c) for c in causes), _risks_text(report)]).strip() or report.headline
                )
                body.append(f"      <failure message={_attr(message)} type={_attr(kind)}>{_text(details)}</failure>")
            told = [report.headline, *(_cause_text(c) for c in ([] if is_failure else causes_of(report, name)))]
            told += [f"Contradiction: {line}" for line in _contradictions_of(report, name)]
            body.append(f"      <system-out>{_text(chr(10).join(told))}</system-out>")
            body.append("    </testcase>")
        suites.append(
            f'  <testsuite name={_attr(report.source)} tests="{len(cases)}" failures="{failed}" errors="0">\n'
            + "\n".join(body)
            + "\n  </testsuite>"
        )
    head = f'<testsuites name="buildlog" tests="{total}" failures="{failures}" errors="0">'
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + head + "\n" + "\n".join(suites) + "\n</testsuites>\n"
