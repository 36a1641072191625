"""Applies the rules to the events of each attempt and decides how each attempt ended.

Rules are screened by their literal anchors before any regex runs, conditions (context in the
same attempt, the command that ran, facts in force) are checked after a match, and a rule that
overrides a cause removes that cause's findings from the same attempt.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial

from buildlog.ingest.clean import clean_line
from buildlog.knowledge.bundle import Knowledge
from buildlog.knowledge.records import Rule, compiled
from buildlog.knowledge.vocabulary import EventKind
from buildlog.parse.events import Event
from buildlog.parse.window import Hit, search
from buildlog.report.schema import Facts, Outcome
from buildlog.scan.scanner import QuietLines
from buildlog.segment import Span


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule that matched: where, with which captures, in which attempt."""

    rule: Rule
    event: Event
    hit: Hit
    attempt: int
    support: tuple[Event, ...] = ()  # lines that satisfied the rule's conditions (context, facts)

    @property
    def line(self) -> int:
        return self.event.line


FactsFor = Callable[[int], Facts]


def _fact_text(facts: Facts, name: str) -> str:
    value = getattr(facts, name, None)
    if isinstance(value, list):
        return " ".join(v.value for v in value)
    return value.value if value is not None else ""


class _AttemptText:
    """An attempt's lines joined, and which condition regexes match it (each searched once per attempt,
    however many of its lines a rule's pattern hits). The text is joined only when a rule with a
    context condition first matches in the attempt, and let go with the attempt.

    Its lines are its events and, in line order among them, its quiet lines: those the scanner
    counted where a fresh start at the attempt's command would have taken them (scan.scanner), so
    a condition reads the same whether the attempt is the 3rd of a log or the 3,000th. They are
    cleaned here, only for an attempt whose conditions are read.
    """

    def __init__(self, events: Sequence[Event], quiet: Callable[[], list[tuple[int, bytes]]] | None = None) -> None:
        self._events = events
        self._quiet = quiet
        self._text: str | None = None
        self._found: dict[str, bool] = {}

    def events(self) -> Sequence[Event]:
        """The attempt's events and its quiet lines as plain ones, in line order."""
        if self._quiet is not None:
            quiet = [Event(EventKind.TEXT, line, clean_line(raw)) for line, raw in self._quiet()]
            if quiet:
                self._events = sorted([*self._events, *quiet], key=lambda e: e.line)
            self._quiet = None
        return self._events

    def has(self, regex: str) -> bool:
        if regex not in self._found:
            if self._text is None:
                self._text = "\n".join(e.text for e in self.events())
            self._found[regex] = compiled(regex).search(self._text) is not None
        return self._found[regex]


def _conditions_hold(rule: Rule, span: Span, texts: _AttemptText, facts: Callable[[], Facts]) -> bool:
    if rule.context and not texts.has(rule.context):
        return False
    if rule.not_context and texts.has(rule.not_context):
        return False
    if rule.command and not compiled(rule.command).search(span.command):
        return False
    if rule.not_command and compiled(rule.not_command).search(span.command):
        return False
    return all(compiled(regex).search(_fact_text(facts(), name)) for name, regex in rule.facts.items())


def _context_event(rule: Rule, event: Event, attempt_events: Sequence[Event]) -> tuple[Event, ...]:
    """The line nearest to the match that satisfied the rule's context (shown as evidence too)."""
    if not rule.context:
        return ()
    regex = compiled(rule.context)
    matching = [e for e in attempt_events if e is not event and regex.search(e.text)]
    best = min(matching, key=lambda e: (e.kind is EventKind.FRAME, abs(e.line - event.line)), default=None)
    return (best,) if best else ()


# Past this many findings of one symptom rule in one step, only the latest is kept besides them: all
# a symptom's findings are read for is how the step ended (the last signal), the lines worth reading
# (the first few of each rule) and the first error; a flood of compiler errors in one attempt would
# otherwise hold a finding for each of its 100,000 lines. Every line is still matched.
MAX_SAME = 8


class _Kept:
    """The findings of one step, a symptom rule's kept to its first MAX_SAME and its latest."""

    def __init__(self) -> None:
        self._kept: list[Finding] = []
        self._count: dict[str, int] = {}
        self._latest: dict[str, Callable[[], Finding]] = {}

    def add(self, rule: Rule, make: Callable[[], Finding]) -> None:
        """A match of `rule`; `make` builds its finding, only for a match that is kept."""
        if rule.role == "symptom" and not rule.overrides:
            n = self._count[rule.id] = self._count.get(rule.id, 0) + 1
            if n > MAX_SAME:
                self._latest[rule.id] = make  # built at the end, if it is still the latest
                return
        self._kept.append(make())

    def findings(self) -> list[Finding]:
        if not self._latest:
            return self._kept
        return sorted([*self._kept, *(make() for make in self._latest.values())], key=lambda f: f.line)


class Diagnoser:
    """Runs every rule over the events, attempt by attempt."""

    def __init__(self, knowledge: Knowledge) -> None:
        self.knowledge = knowledge

    def findings(
        self,
        events: Sequence[Event],
        spans: Sequence[Span],
        facts_for: FactsFor,
        quiet: QuietLines | None = None,
    ) -> list[Finding]:
        """`quiet`: the lines the scanner counted where a fresh start would have taken them."""
        by_attempt = _group(events, spans)
        self._events, self._by_line = events, None
        out: list[Finding] = []
        for i, span in enumerate(spans):
            attempt_events = by_attempt.get(span.number, [])
            first, last = spans[i - 1].end + 1 if i else 0, span.end if i < len(spans) - 1 else sys.maxsize
            texts = _AttemptText(attempt_events, partial(quiet.within, first, last) if quiet else None)
            facts = cache(partial(facts_for, span.number))  # asked for once, if ever: a long CI log has thousands
            found = _Kept()
            for e in attempt_events:
                self._match(e, span, texts, facts, found)
            kept = found.findings()
            overridden = {cause for f in kept for cause in f.rule.overrides}
            out.extend(f for f in kept if not (f.rule.role == "cause" and f.rule.cause in overridden))
        return out

    def _match(
        self,
        event: Event,
        span: Span,
        texts: _AttemptText,
        facts: Callable[[], Facts],
        found: _Kept,
    ) -> None:
        for rule in self.knowledge.rules_for(event.anchors):
            if "any" not in rule.events and event.kind not in rule.events:
                continue
            hits = search(rule.regex, event, rule.multiline, anchors=rule.anchors)
            if hits and _conditions_hold(rule, span, texts, facts):
                found.add(rule, partial(self._finding, rule, event, hits[0], span.number, facts, texts))

    def _finding(
        self,
        rule: Rule,
        event: Event,
        hit: Hit,
        attempt: int,
        facts: Callable[[], Facts],
        texts: _AttemptText,
    ) -> Finding:
        support = _context_event(rule, event, texts.events()) + self._fact_events(rule, facts)
        return Finding(rule, event, hit, attempt, support)

    def _fact_events(self, rule: Rule, facts: Callable[[], Facts]) -> tuple[Event, ...]:
        """The lines that state the facts a rule's condition relied on."""
        out = []
        for name in [*rule.facts, *rule.show_facts]:
            value = getattr(facts(), name, None)
            if isinstance(value, list):
                value = value[0] if value else None
            if value is not None:
                event = self._line_event(value.line)
                if event is not None:
                    out.append(event)
        return tuple(out)

    def _line_event(self, line: int) -> Event | None:
        """The event for a line, or a plain one built from the window of the candidate before it."""
        if self._by_line is None:  # built when a rule first shows a fact's line
            self._by_line = {e.line: e for e in self._events}
        by_line = self._by_line
        if line in by_line:
            return by_line[line]
        for back in range(1, 8):
            owner = by_line.get(line - back)
            if owner is not None and back <= len(owner.after):
                return Event(EventKind.TEXT, line, owner.after[back - 1].strip())
        return None


def _group(events: Sequence[Event], spans: Sequence[Span]) -> dict[int, list[Event]]:
    groups: dict[int, list[Event]] = defaultdict(list)
    i = 0
    for event in events:
        while i < len(spans) - 1 and event.line > spans[i].end:
            i += 1
        groups[spans[i].number].append(event)
    return groups


def outcome_of(findings: Sequence[Finding]) -> Outcome:
    """How an attempt ended: the last success or failure signal decides."""
    last: Outcome = "unknown"
    for f in sorted(findings, key=lambda f: f.line):
        if f.rule.role == "success":
            last = "success"
        elif f.rule.role in ("cause", "symptom"):
            last = "failure"
    return last
