"""Assemble: the Report from the verdict and the facts, and the headline that sums it up.

Nothing is decided here: the verdict (diagnose/verdict.py) has decided; this stage only puts it
into the published form, with the lines of the log counted by the scan.
"""

from __future__ import annotations

from collections.abc import Sequence

from buildlog.diagnose.verdict import Diagnosis
from buildlog.report.narrative import narrative
from buildlog.report.schema import (
    Attempt,
    Check,
    Contradiction,
    Incident,
    Outcome,
    Repeat,
    Report,
    RootCause,
    Status,
    Volume,
)
from buildlog.scan.scanner import ScanSummary
from buildlog.segment import Span


def build_report(
    source: str, summary: ScanSummary, diagnosis: Diagnosis, contradictions: Sequence[Contradiction] = ()
) -> Report:
    """The whole Report for one log (texts masked later, where they leave the program)."""
    outcomes = diagnosis.outcomes
    attempts = [
        _attempt(s, outcomes[s.number], diagnosis.incidents) for s in diagnosis.attempts if _worth_listing(s, outcomes)
    ]
    volume = Volume(
        candidates=summary.candidates, analysed=summary.candidates - summary.repeated, repeated=summary.repeated,
        top_repeats=[Repeat(line=r.line, text=r.text.decode("utf-8", "replace"), count=r.count) for r in summary.top_repeats()],
    )  # fmt: skip
    return Report(
        source=source, lines=summary.lines, status=diagnosis.status,
        headline=_headline(diagnosis.status, diagnosis.root_causes, diagnosis.incidents, attempts),
        narrative=narrative(diagnosis.status, attempts, diagnosis.incidents, diagnosis.root_causes),
        root_causes=list(diagnosis.root_causes), facts=diagnosis.facts, attempts=attempts,
        incidents=list(diagnosis.incidents), risks=list(diagnosis.risks), relevant=list(diagnosis.relevant),
        missing=diagnosis.missing, volume=volume, contradictions=list(contradictions),
    )  # fmt: skip


def _worth_listing(span: Span, outcomes: dict[int, Outcome]) -> bool:
    return span.explicit or outcomes[span.number] != "unknown" or bool(span.stages)


def _attempt(span: Span, outcome: Outcome, incidents: Sequence[Incident]) -> Attempt:
    ids = [i.id for i in incidents if span.number in i.attempts]
    return Attempt(
        number=span.number, line=span.start, command=span.command or "(no command shown)", env=span.env,
        interpreter=span.interpreter, outcome=outcome, stage=span.stage, incidents=ids, end_line=span.end,
        checks=[Check(line=c.start, command=c.command, outcome=c.outcome, end_line=c.end) for c in span.checks],
    )  # fmt: skip


def _headline(
    status: Status, roots: Sequence[RootCause], incidents: Sequence[Incident], attempts: Sequence[Attempt]
) -> str:
    if status == "empty":
        return "The log is empty: there is nothing to explain."
    if status == "success":
        fixed = sum(1 for i in incidents if i.resolved_by)
        extra = f" after {len(attempts)} attempts; {fixed} problem(s) resolved on the way" if fixed else ""
        return f"The build succeeded{extra}."
    if status == "unknown":
        return "The log does not show whether the build failed or succeeded."
    if not roots or roots[0].id == "unknown":
        return "The build failed, but no known cause matched."
    title = roots[0].title
    if not title[1:2].isupper():
        title = title[0].lower() + title[1:]
    return f"The build failed: {title}."
