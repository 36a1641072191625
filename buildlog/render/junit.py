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
    lines = [f"  ! {risk.title}" + (f": {risk.consequence}" if risk.consequence else "") for risk in report.risks]
    return "\n".join(["Risks:", *lines]) if lines else ""


def _cases(report: Report) -> list[tuple[str, int | None, RootCause | None, list[RootCause], bool]]:
    """(name, attempt number or None for the whole log, first cause, causes, failed) for each test case."""
    whole = list(report.root_causes) if report.status == "failure" else []
    if not report.attempts:
        return [(report.source, None, whole[0] if whole else None, whole, report.status == "failure")]
    cases = []
    for attempt in report.attempts:
        causes = [c for c in report.root_causes if attempt.number in c.attempts]
        # An attempt that failed in a session that then succeeded is history, not a failure now.
        failed = attempt.outcome == "failure" and report.status != "success"
        name = f"attempt {attempt.number} (line {attempt.line}): {attempt.command} - {OUTCOME_WORDS[attempt.outcome]}"
        cases.append((name, attempt.number, causes[0] if causes else None, causes if failed else [], failed))
    if report.status == "failure" and not any(failed for *_, failed in cases):
        cases.append((report.source, None, whole[0] if whole else None, whole, True))
    return cases


def render_junit(reports: list[Report]) -> str:
    """The reports as one <testsuites> document."""
    suites: list[str] = []
    total = failures = 0
    for report in reports:
        cases = _cases(report)
        failed = sum(1 for *_, f in cases if f)
        total, failures = total + len(cases), failures + failed
        body = []
        for name, number, first, causes, is_failure in cases:
            body.append(f"    <testcase classname={_attr('buildlog.' + report.source)} name={_attr(name)}>")
            if is_failure:
                message = first.title if first else report.headline
                kind = first.id if first else "unknown"
                details = (
                    "\n\n".join([*(_cause_text(c) for c in causes), _risks_text(report)]).strip() or report.headline
                )
                body.append(f"      <failure message={_attr(message)} type={_attr(kind)}>{_text(details)}</failure>")
            # the causes of a passed attempt; the contradictions its attempt holds (all of them for the whole log)
            told = [report.headline]
            if not is_failure and number is not None:
                told += [_cause_text(c) for c in report.root_causes if number in c.attempts]
            told += [
                f"Contradiction: {contradiction_line(c, report)}"
                for c in report.contradictions
                if number is None or not c.attempts or number in c.attempts
            ]
            body.append(f"      <system-out>{_text(chr(10).join(told))}</system-out>")
            body.append("    </testcase>")
        suites.append(
            f'  <testsuite name={_attr(report.source)} tests="{len(cases)}" failures="{failed}" errors="0">\n'
            + "\n".join(body)
            + "\n  </testsuite>"
        )
    head = f'<testsuites name="buildlog" tests="{total}" failures="{failures}" errors="0">'
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + head + "\n" + "\n".join(suites) + "\n</testsuites>\n"
