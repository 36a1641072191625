"""The pipeline: bytes -> candidate lines -> events -> facts and attempts -> verdict -> Report.

`analyse` is the one way through: the CLI, `eval`, `corpus add`, training and the tests all call
it. Each stage is a function of what it is given; the knowledge and the store of past failures
are passed in, never imported, and nothing here reads the environment.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple, Protocol

from buildlog.diagnose.checks import judge_values
from buildlog.diagnose.verdict import Diagnosis, diagnose
from buildlog.facts import FactIndex, contradictions, observe
from buildlog.ingest.clean import clean_line
from buildlog.ingest.reader import CHUNK_SIZE, Source, iter_chunks, with_progress
from buildlog.knowledge.bundle import Knowledge
from buildlog.learn.features import FAILURE_KINDS, MAX_FAILURE_LINES, failure_lines
from buildlog.parse.events import MEMO_SIZE, After, Event, let_go_after, parse_line
from buildlog.report.assemble import build_report
from buildlog.report.mask import mask_report
from buildlog.report.schema import Contradiction, Facts, Report, Similar
from buildlog.scan.scanner import Candidate, Scanner, ScanSummary
from buildlog.segment import Segmenter, Span, segment

# The log is scanned a megabyte at a time: a chunk, what the scan engine found in it and the lines
# still being read are all held at once, and smaller chunks cost no measurable time.
SCAN_CHUNK = 1 << 20


class Options(NamedTuple):
    """How to analyse, as the command line (or the caller) chose."""

    redact_paths: bool = False  # also mask user names, home folders and host names
    use_model: bool = True  # let the classifier propose a cause where no rule explains the failure
    engine: str = "auto"  # the scan engine: auto, hyperscan or plain
    cache: Path | None = None  # a private folder for the scan engine's compiled database
    progress: bool = False  # draw a progress bar on stderr for big inputs


DEFAULT = Options()


class Recall(Protocol):
    """Past failures, for "seen before": the user's or team's store and the bundled examples."""

    def seen_before(self, lines: Sequence[str]) -> list[Similar]: ...


class Analysis(NamedTuple):
    """The report, and what the stages saw on the way (for the store, training and the tests)."""

    report: Report
    events: Sequence[Event]
    attempts: Sequence[Span]
    failure: tuple[str, ...]  # the lines of the last failed attempt that say what went wrong, masked
    fired: frozenset[str] = frozenset()  # the ids of the rules that matched


def analyse(
    source: Source | bytes, knowledge: Knowledge, store: Recall | None = None, options: Options = DEFAULT
) -> Report:
    """The Report for one log."""
    return trace(source, knowledge, store, options).report


def trace(
    source: Source | bytes, knowledge: Knowledge, store: Recall | None = None, options: Options = DEFAULT
) -> Analysis:
    """Every stage over one log, with what each produced.

    A big log makes tens of thousands of events that live until the end, and every full pass of
    the cycle collector walks them all again (a sixth of the time on a flood of errors); during
    the analysis only young objects are collected often, and the setting is restored after.
    """
    import gc

    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], max(thresholds[2], 10_000))
    try:
        return _trace(source, knowledge, store, options)
    finally:
        gc.set_threshold(*thresholds)


def _trace(source: Source | bytes, knowledge: Knowledge, store: Recall | None, options: Options) -> Analysis:
    if isinstance(source, bytes):
        name, chunks = "<bytes>", iter([source] if source else [])
    else:
        stream = iter_chunks(source.stream, SCAN_CHUNK, CHUNK_SIZE)  # lines cut where they always are
        name, chunks = source.name, with_progress(source, stream) if options.progress else stream
    summary = ScanSummary()
    events = scan_and_parse(chunks, knowledge, summary, options)
    index = FactIndex(list(observe(events, knowledge)))
    steps = segment(events, summary.lines, knowledge)
    tail = [(n, clean_line(raw)) for n, raw in summary.tail]
    diagnosis = diagnose(
        events, steps, _facts_by_attempt(index), summary.lines, tail, knowledge, options.use_model, summary.quiet
    )
    del steps  # the attempts are in the diagnosis; each step of a long CI log need not outlive it
    judged = _judged(contradictions(index, diagnosis.attempts), index, diagnosis, knowledge)
    del index  # nor the facts of the whole log, while the report is built and masked
    report = build_report(name, summary, diagnosis, judged)
    mask = knowledge.mask(options.redact_paths)
    failure = tuple(mask(line) for line in _failure_lines(events, diagnosis))
    if store is not None and report.status not in ("success", "empty") and failure:
        report = report.model_copy(update={"similar": store.seen_before(failure)})
    fired = frozenset(f.rule.id for f in diagnosis.findings)
    return Analysis(mask_report(report, mask), events, diagnosis.attempts, failure, fired)


def scan_and_parse(
    chunks: Iterable[bytes], knowledge: Knowledge, summary: ScanSummary, options: Options = DEFAULT
) -> list[Event]:
    """The candidate lines of a log as events (cleaned; their neighbours cleaned when read)."""
    plan = knowledge.plan
    scanner = Scanner(
        plan.anchors,
        plan.budgets,
        plan.resets,
        engine=options.engine,
        cache=options.cache,
        conditions=plan.conditions,
        condition_anchors=plan.condition_anchors,
    )
    wide = _Following(knowledge)
    events = []
    unread = _Unread(knowledge, wide)
    memo: dict[str, Event] = {}
    neighbours: dict[tuple[bytes, ...], tuple[bytes, ...]] = {}
    for cand in scanner.scan(chunks, summary):
        event = _event(cand, knowledge, wide, memo, neighbours)
        unread(event)
        events.append(event)
    return events


# The lines after an event that anything but a multi-line pattern reads: the classifier's failure
# lines take two (learn.features.failure_lines), a fact's evidence one of them.
KEPT_AFTER = 2


def _event(
    cand: Candidate,
    knowledge: Knowledge,
    wide: _Following,
    memo: dict[str, Event],
    neighbours: dict[tuple[bytes, ...], tuple[bytes, ...]],
) -> Event:
    text = clean_line(cand.raw)
    after = cand.after
    if len(after) > KEPT_AFTER and not text.endswith("\\") and not wide(cand.anchors):
        after = after[:KEPT_AFTER]  # a flood holds tens of thousands of events: only what is read is kept
    if after:  # a CI log's repeated lines are followed by the same lines: those are kept once
        known = neighbours.get(after)
        if known is not None:
            after = known
        elif len(neighbours) < MEMO_SIZE:
            neighbours[after] = after
    return parse_line(knowledge, cand.number, text, After(after), cand.anchors, memo)


class _Unread:
    """Lets go of the lines after an event, as the log is read, once no reader can reach them.

    Past the facts, the lines after a line are read only by multi-line patterns (those events keep
    theirs whole) and by the failure lines of an attempt, which read an attempt's range from its
    end and stop after MAX_FAILURE_LINES + 3 lines, so at most that many events of the failure
    kinds. An attempt ends on the line before an event that may start a step (segment's
    `may_open`) or at the end of the log, so only the last events of those kinds before each such
    event keep their neighbours: a flood of 100,000 compiler errors in one attempt keeps its last
    64 events' neighbours, not all of them.
    """

    KEEP = MAX_FAILURE_LINES + 4

    def __init__(self, knowledge: Knowledge, wide: _Following) -> None:
        self._knowledge, self._wide = knowledge, wide
        self._within: deque[Event] = deque()  # the events of the failure kinds since the last possible end

    def __call__(self, event: Event) -> None:
        if Segmenter.may_open(event, self._knowledge):
            self._within.clear()  # those before it stay whole
        if event.kind not in FAILURE_KINDS or not len(event.context) or event.text.endswith("\\"):
            return
        if self._wide(event.anchors):
            return
        self._within.append(event)
        if len(self._within) > self.KEEP:
            let_go_after(self._within.popleft())


class _Following:
    """Whether a line with these anchors may be searched with the lines after it: a multi-line
    rule or fact pattern selected by one of them (a `\\` continuation is seen by its text)."""

    def __init__(self, knowledge: Knowledge) -> None:
        self._knowledge = knowledge
        self._known: dict[frozenset[str], bool] = {}

    def __call__(self, anchors: frozenset[str]) -> bool:
        known = self._known.get(anchors)
        if known is None:
            k = self._knowledge
            records = (*k.rules_for(anchors), *k.facts_for(anchors))
            known = self._known[anchors] = any(r.multiline for r in records)
        return known


def _failure_lines(events: Sequence[Event], diagnosis: Diagnosis) -> list[str]:
    """The failure lines of the last failed attempt (the whole log when attempts are not told apart).

    The same choice the classifier trains on, so both see a session's final failure and not the
    attempts that came before it.
    """
    failed = [s for s in diagnosis.attempts if diagnosis.outcomes.get(s.number) == "failure"]
    if not failed:
        return failure_lines(events)
    return failure_lines(events, failed[-1].start, failed[-1].end)


def _judged(
    found: list[Contradiction], index: FactIndex, diagnosis: Diagnosis, knowledge: Knowledge
) -> list[Contradiction]:
    """Each contradiction with what the checks say of each of its values, in its last attempt."""
    spans = {s.number: s for s in diagnosis.attempts}
    out = []
    for c in found:
        span = spans.get(c.attempts[-1]) if c.attempts else None
        facts = index.facts(until=span.end, since=span.start) if span else index.facts()
        out.append(c.model_copy(update={"note": judge_values(c, facts, span, knowledge)}))
    return out


def _facts_by_attempt(index: FactIndex) -> Callable[[Sequence[Span]], Callable[[int], Facts]]:
    """For a list of attempts, the facts in force for each, computed on demand.

    Only the latest few are kept: a CI log of ten thousand jobs would otherwise hold ten thousand
    sets of facts at once, and the verdict asks again for only a few attempts.
    """

    def for_spans(spans: Sequence[Span]) -> Callable[[int], Facts]:
        by_number = {s.number: s for s in spans}

        @lru_cache(maxsize=64)
        def facts_for(attempt: int) -> Facts:
            span = by_number[attempt]
            return index.facts(until=span.end, since=span.start)

        return facts_for

    return for_spans
