"""The pipeline: bytes -> candidate lines -> events -> facts and attempts -> findings -> Report.

Each stage is a module of its own; this one only wires them together, so that the CLI, `eval`
and the tests all analyse a log the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache

from buildlog.diagnose.engine import Diagnoser, Finding, outcome_of
from buildlog.diagnose.rules import load_rules
from buildlog.facts import Observation, fact_patterns, fold, observe
from buildlog.ingest.clean import clean_line
from buildlog.ingest.reader import Source, iter_chunks
from buildlog.ingest.redact import redact
from buildlog.models import Facts, Report
from buildlog.parse.events import GRAMMAR_ANCHORS, Event, parse_line
from buildlog.report import Inputs, build_report
from buildlog.scan import Scanner, ScanSummary
from buildlog.segment import Span, group_steps, segment, stage_markers


@cache
def anchors() -> tuple[bytes, ...]:
    """Every literal that makes a line worth parsing: rules, fact patterns, stages, grammars."""
    words: set[str] = set(GRAMMAR_ANCHORS)
    for rule in load_rules():
        words.update(rule.anchors)
    for record in fact_patterns():
        words.update(record.anchors)
    for marker in stage_markers():
        words.update(marker.anchors)
    return tuple(sorted(w.encode("utf-8") for w in words))


@cache
def anchor_budgets() -> dict[bytes, int]:
    """Anchors that only budgeted fact patterns and stage markers use, with the largest budget."""
    budgets: dict[str, int] = {}
    unlimited: set[str] = set(GRAMMAR_ANCHORS)
    for rule in load_rules():
        unlimited.update(rule.anchors)
    records = [(r.anchors, r.budget) for r in fact_patterns()] + [(m.anchors, m.budget) for m in stage_markers()]
    for words, budget in records:
        for word in words:
            if budget:
                budgets[word] = max(budget, budgets.get(word, 0))
            else:
                unlimited.add(word)
    return {w.encode("utf-8"): n for w, n in budgets.items() if w not in unlimited}


def parse_events(chunks: Iterable[bytes], summary: ScanSummary, redact_paths: bool = False) -> list[Event]:
    """Scan, clean (secrets masked) and parse the candidate lines.

    Budgets start afresh at each command, as the scan waits on the command's line.
    """
    scanner = Scanner(anchors(), after=6, budgets=anchor_budgets())
    events = []
    for cand in scanner.scan(chunks, summary):
        after = tuple(clean_line(raw, redact_paths) for raw in cand.after)
        event = parse_line(cand.number, clean_line(cand.raw, redact_paths), after)
        if event.kind == "command":
            scanner.reset_budgets()
        events.append(event)
    return events


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
    report = build_report(Inputs(name, summary.lines, spans, findings, facts, facts_for, tail, events, use_model))
    return Analysis(events, spans, findings, report)


def _facts_by_attempt(observations: Sequence[Observation], spans: Sequence[Span]) -> Callable[[int], Facts]:
    """Facts in force for each attempt, computed once each on demand."""
    by_number = {s.number: s for s in spans}

    @cache
    def facts_for(attempt: int) -> Facts:
        span = by_number[attempt]
        return fold(observations, until=span.end, since=span.start)

    return facts_for


def analyze_chunks(name: str, chunks: Iterable[bytes], redact_paths: bool = False) -> Report:
    """Analyse a log given as chunks that end on line breaks."""
    return run(name, chunks, redact_paths).report


def analyze(source: Source, redact_paths: bool = False) -> Report:
    """Analyse an opened source."""
    with source.stream:
        return analyze_chunks(source.name, iter_chunks(source.stream), redact_paths)


def analyze_bytes(data: bytes, name: str = "<bytes>") -> Report:
    """Analyse a log held in memory (tests, the store)."""
    return analyze_chunks(name, [data] if data else [])
