"""The pipeline: bytes -> candidate lines -> events -> facts and attempts -> findings -> Report.

Each stage is a module of its own; this one only wires them together, so that the CLI, `eval`
and the tests all analyse a log the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache

from buildlog.diagnose.engine import Diagnoser, Finding, outcome_of
from buildlog.facts import Observation, fold, observe
from buildlog.firstpass import parse_events
from buildlog.ingest.clean import clean_line
from buildlog.ingest.redact import redact
from buildlog.parse.events import Event
from buildlog.report.assemble import Inputs, build_report
from buildlog.report.schema import Facts, Report
from buildlog.scan.scanner import ScanSummary
from buildlog.segment import Span, group_steps, segment


@dataclass(frozen=True)
class Analysis:
    """Every stage's output for one log; the report is what users see, the rest serves tests and eval."""

    events: Sequence[Event]
    spans: Sequence[Span]
    findings: Sequence[Finding]
    report: Report


def run(name: str, chunks: Iterable[bytes], redact_paths: bool = False, use_model: bool = True) -> Analysis:
    """Run every stage over a log given as chunks that end on line breaks.

    Secrets are always masked; `redact_paths` also masks user names, home directories and hosts.
    `use_model` lets the classifier propose a cause where no rule explains the failure.
    """
    summary = ScanSummary()
    events = parse_events(chunks, summary, redact_paths)
    return run_events(name, events, summary, redact_paths, use_model)


def run_events(
    name: str, events: list[Event], summary: ScanSummary, redact_paths: bool = False, use_model: bool = True
) -> Analysis:
    """Every stage after the first pass (firstpass.parse_events), which may have run elsewhere."""
    observations = list(observe(events))
    steps = segment(events, summary.lines)
    findings = Diagnoser().findings(events, steps, _facts_by_attempt(observations, steps))
    outcomes = {s.number: outcome_of([f for f in findings if f.attempt == s.number]) for s in steps}
    spans, mapping = group_steps(steps, outcomes)
    findings = [replace(f, attempt=mapping[f.attempt]) for f in findings]
    facts_for = _facts_by_attempt(observations, spans)
    facts = facts_for(spans[-1].number)
    tail = [(n, clean_line(raw, redact_paths)) for n, raw in summary.tail]
    name = redact(name, paths=redact_paths)
    inputs = Inputs(name, summary.lines, spans, findings, facts, facts_for, tail, events, use_model, summary.skipped)
    report = build_report(inputs)
    return Analysis(events, spans, findings, report)


def _facts_by_attempt(observations: Sequence[Observation], spans: Sequence[Span]) -> Callable[[int], Facts]:
    """Facts in force for each attempt, computed once each on demand."""
    by_number = {s.number: s for s in spans}

    @cache
    def facts_for(attempt: int) -> Facts:
        span = by_number[attempt]
        return fold(observations, until=span.end, since=span.start)

    return facts_for
