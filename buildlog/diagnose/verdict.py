"""The verdict on a log: how each attempt ended, the incidents and what resolved them, the root
causes with their evidence and fix, the risks, and what to read when nothing is certain.

Outcomes are decided once, on the attempts as a person sees them (helper installs folded into the
build they prepare); everything after works from that one decision.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from buildlog.diagnose.checks import run_checks
from buildlog.diagnose.engine import Diagnoser, Finding, outcome_of
from buildlog.diagnose.fixes import template_values
from buildlog.diagnose.incidents import Occurrence, build_incidents
from buildlog.diagnose.template import fill
from buildlog.knowledge.bundle import Knowledge
from buildlog.knowledge.records import Hint
from buildlog.knowledge.vocabulary import EventKind
from buildlog.learn.classifier import Prediction, model_of
from buildlog.learn.features import FAILURE_KINDS, failure_lines, states_error
from buildlog.parse.events import Event
from buildlog.report.schema import Evidence, Facts, Incident, Outcome, Risk, RootCause, Status
from buildlog.scan.scanner import QuietLines
from buildlog.segment import Span, group_steps

MAX_EVIDENCE = 6
NEEDS_SEES = 1000  # the characters of a line a cause's classifier_needs pattern reads
MAX_RELEVANT = 8


FactsFor = Callable[[Sequence[Span]], Callable[[int], Facts]]


@dataclass(frozen=True)
class Inputs:
    """What the earlier stages produced for one log, as the verdict reads it."""

    lines: int
    spans: Sequence[Span]
    findings: Sequence[Finding]
    facts_for: Callable[[int], Facts]
    tail: Sequence[tuple[int, str]]
    events: Sequence[Event]
    knowledge: Knowledge
    use_model: bool = True
    # The classifier's answer for each attempt it was asked about, asked once (by the attempt's lines).
    predictions: dict[tuple[int, int], Prediction | None] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Diagnosis:
    """The verdict: every attempt with its outcome, the incidents, causes, risks and notes."""

    status: Status
    attempts: Sequence[Span]
    outcomes: dict[int, Outcome]
    findings: Sequence[Finding]
    incidents: Sequence[Incident]
    root_causes: Sequence[RootCause]
    risks: Sequence[Risk]
    relevant: Sequence[Evidence]
    missing: str
    facts: Facts


def diagnose(
    events: Sequence[Event], steps: Sequence[Span], facts_for_spans: FactsFor, lines: int,
    tail: Sequence[tuple[int, str]], knowledge: Knowledge, use_model: bool = True,
    quiet: QuietLines | None = None,
) -> Diagnosis:  # fmt: skip
    """Rules over every step, outcomes once, steps grouped into attempts, then the verdict.

    `quiet`: the lines the scanner counted where a fresh start would have taken them (for the
    rules' conditions on a step's lines, see diagnose.engine)."""
    findings = Diagnoser(knowledge).findings(events, steps, facts_for_spans(steps), quiet)
    step_outcomes = {s.number: outcome_of([f for f in findings if f.attempt == s.number]) for s in steps}
    spans, mapping = group_steps(steps, step_outcomes)
    findings = [f if mapping[f.attempt] == f.attempt else replace(f, attempt=mapping[f.attempt]) for f in findings]
    data = Inputs(lines, spans, findings, facts_for_spans(spans), tail, events, knowledge, use_model)
    return decide(data)


def decide(data: Inputs) -> Diagnosis:
    """The verdict on attempts whose findings are known."""
    k = data.knowledge
    outcomes = {
        s.number: outcome_of([f for f in data.findings if f.attempt == s.number and not _in_check(s, f.line)])
        for s in data.spans
    }  # how the build ended; its checks are judged apart
    by_number = {s.number: s for s in data.spans}
    causal = _reattribute([
        f for f in data.findings
        if f.rule.role == "cause" and (outcomes[f.attempt] != "success" or _in_check(by_number[f.attempt], f.line, "failed"))
    ])  # fmt: skip
    data = replace(data, spans=_actual_interpreters(data, causal))
    spans = {s.number: s for s in data.spans}
    occurrences = [Occurrence(f.rule.cause, f.attempt, f.line, spans[f.attempt].stage_at(f.line)) for f in causal]
    incidents = build_incidents(occurrences, data.spans, outcomes, k.bearings, data.facts_for)
    status = _status(data, outcomes)
    ended = {n: "failure" if _check_failed(by_number[n]) else o for n, o in outcomes.items()}
    roots = _root_causes(causal, incidents, data, ended)
    unexplained = _last_failed_unexplained(data.spans, ended, causal)
    if status == "unknown" and not causal and data.spans:  # no failure marker: a paste cut off after its error
        guess = _from_model(data, data.spans[-1], outcomes[data.spans[-1].number])
        if guess is not None:
            status, roots = "failure", [guess]
    if status == "failure" and unexplained is not None:
        outcome = outcomes[unexplained.number]
        last_word = _from_model(data, unexplained, outcome) or _unknown(data, unexplained, outcome)
        resolved_all = all(_resolved(r.id, incidents) for r in roots)
        roots.insert(0, last_word) if resolved_all else roots.append(last_word)  # what is still broken leads
    last = data.spans[-1]
    in_last = {f.rule.cause for f in causal if f.attempt == last.number}
    return Diagnosis(
        status=status, attempts=data.spans, outcomes=outcomes, findings=data.findings, incidents=incidents,
        root_causes=roots,
        risks=_risks(data, last, in_last, outcomes) if status != "empty" else [],
        relevant=_relevant(data) if status == "unknown" or any(r.id == "unknown" for r in roots) else [],
        missing=_missing(data, status, roots), facts=data.facts_for(last.number),
    )  # fmt: skip


# Risks a successful build has disproved: it compiled, with these jobs, this compiler and these archs.
_BUILD_RISKS = frozenset({"jobs_exceed_ram", "host_compiler_unsupported", "arch_unsupported_by_nvcc"})


def _risks(data: Inputs, last: Span, in_last: set[str], outcomes: dict[int, Outcome]) -> list[Risk]:
    """Risks judged on the facts of the last attempt alone."""
    risks = run_checks(data.facts_for(last.number), last, in_last, data.knowledge)
    if outcomes[last.number] == "success":
        risks = [r for r in risks if r.id not in _BUILD_RISKS]
    return risks


def _check_failed(span: Span) -> bool:
    return bool(span.checks) and span.checks[-1].outcome == "failed"


def _in_check(span: Span, line: int, outcome: str | None = None) -> bool:
    """Is this line in the output of one of the checks run after the attempt (with that outcome)?"""
    return any(c.start <= line <= c.end and outcome in (None, c.outcome) for c in span.checks)


def _reattribute(causal: list[Finding]) -> list[Finding]:
    """The same error line, better explained in a later attempt, is explained so everywhere.

    A CPU-only torch says "CUDA_HOME environment variable is not set" in every attempt; only the
    attempt that sets CUDA_HOME shows the real cause. A rule that overrides a cause lends its
    explanation to earlier findings of that cause with the very same text.
    """
    better: dict[tuple[str, int], Finding] = {}
    for f in causal:
        for g in causal:
            if f.rule.cause in g.rule.overrides and g.event.text == f.event.text and g.attempt > f.attempt:
                better.setdefault((f.rule.cause, f.attempt), g)
    out = []
    for f in causal:
        lender = better.get((f.rule.cause, f.attempt))
        out.append(replace(f, rule=lender.rule, support=f.support + lender.support) if lender else f)
    return out


def _actual_interpreters(data: Inputs, causal: Sequence[Finding]) -> list[Span]:
    """Where pip refused a system Python, that is the interpreter that really ran, whatever was activated."""
    refused = {f.attempt for f in causal if f.rule.cause == "externally_managed_pip"}
    out = []
    for span in data.spans:
        if span.number in refused:
            system = data.facts_for(span.number).interpreter
            actual = f"the system Python ({system.value if system else 'not the venv'}) via {span.interpreter or 'pip'}"
            span = replace(span, interpreter=actual)
        out.append(span)
    return out


def _status(data: Inputs, outcomes: dict[int, Outcome]) -> Status:
    if data.lines == 0 or not any(text.strip() for _, text in data.tail):
        return "empty"
    known = [outcomes[s.number] for s in data.spans if outcomes[s.number] != "unknown"]
    last = data.spans[-1] if data.spans else None
    if last is not None and _check_failed(last) and outcomes[last.number] != "failure":
        return "failure"  # it built, but what it built does not work
    return known[-1] if known else "unknown"


def _root_causes(
    causal: Sequence[Finding], incidents: Sequence[Incident], data: Inputs, outcomes: dict[int, Outcome]
) -> list[RootCause]:
    titles = {c.id: c.title for c in data.knowledge.causes.values()}
    last_failed = max((n for n, o in outcomes.items() if o == "failure"), default=0)
    roots = []
    for incident in incidents:
        mine = [f for f in causal if f.rule.cause == incident.cause]
        latest = max(f.attempt for f in mine)
        own = sorted((f for f in mine if f.attempt == latest), key=lambda f: (-f.rule.priority, f.line))
        best = max(own, key=lambda f: (f.rule.priority, -f.line))
        span = next(s for s in data.spans if s.number == best.attempt)
        values = template_values(best.hit.groups, data.facts_for(best.attempt), span, data.knowledge)
        roots.append(
            RootCause(
                id=incident.cause,
                title=titles[incident.cause],
                confidence=max(f.rule.confidence for f in mine),
                evidence=_evidence(
                    own + sorted((f for f in mine if f.attempt != latest), key=lambda f: (-f.rule.priority, f.line))
                ),  # fmt: skip
                fix=fill(best.rule.fix, values),
                rule=best.rule.id,
                attempts=incident.attempts,
            )  # fmt: skip
        )
    open_ids = {r.id for r in roots if last_failed in r.attempts and not _resolved(r.id, incidents)}
    weight = _model_weights(data, last_failed) if len(open_ids) > 1 else {}

    def order(root: RootCause) -> tuple[bool, int, float, int]:
        """Open problems first (most telling first), then the resolved ones in the order they came.

        Between open causes that rules rank alike, the classifier's view of the failing attempt decides.
        """
        still_open = root.id in open_ids
        rank = -max((f.rule.priority for f in causal if f.rule.id == root.rule), default=0) if still_open else 0
        return (not still_open, rank, -weight.get(root.id, 0.0), min(root.attempts, default=0))

    return sorted(roots, key=order)


def _model_weights(data: Inputs, attempt: int) -> dict[str, float]:
    """The classifier's probability for each cause on one attempt (empty without a model)."""
    span = next((s for s in data.spans if s.number == attempt), None)
    prediction = _classify(data, span) if span is not None else None
    return dict(prediction.probabilities) if prediction else {}


def _resolved(cause: str, incidents: Sequence[Incident]) -> bool:
    return any(i.cause == cause and i.resolved_by for i in incidents)


def _evidence(findings: Sequence[Finding]) -> list[Evidence]:
    """The lines that prove a cause: those of the findings given first (their own attempt's first)."""
    seen: dict[int, str] = {}
    for f in findings:
        for line, text in zip(f.hit.lines, f.hit.texts, strict=True):
            seen.setdefault(line, text)
        for event in f.support:
            if event.kind is EventKind.COMMAND:
                continue  # the user's own `export ...` proves nothing
            seen.setdefault(event.line, event.text)
        if len(seen) >= MAX_EVIDENCE:
            break
    return [Evidence(line=n, text=t) for n, t in sorted(seen.items())[:MAX_EVIDENCE]]


def _last_failed_unexplained(
    spans: Sequence[Span], outcomes: dict[int, Outcome], causal: Sequence[Finding]
) -> Span | None:
    failed = [s for s in spans if outcomes[s.number] == "failure"]
    if failed and not any(f.attempt == failed[-1].number for f in causal):
        return failed[-1]
    return None


def _classify(data: Inputs, span: Span) -> Prediction | None:
    """The classifier's answer about one attempt (None without a model or known words, and where
    the cause it names needs a kind of line none of the lines it read shows)."""
    if not data.use_model:
        return None
    key = (span.start, span.end)
    if key not in data.predictions:
        data.predictions[key] = _predict(data, span)
    return data.predictions[key]


def _predict(data: Inputs, span: Span) -> Prediction | None:
    model = model_of(data.knowledge.classifier_data)  # loaded only for logs the rules leave open
    lines = failure_lines(data.events, span.start, span.end)
    prediction = model.predict(lines) if model and lines else None
    cause = data.knowledge.causes.get(prediction.cause) if prediction else None
    if cause is not None and cause.classifier_needs:
        needs = re.compile(cause.classifier_needs)
        if not any(needs.search(line[:NEEDS_SEES]) for line in lines):
            return None
    return prediction


def may_classify(events: Sequence[Event], span: Span, outcome: Outcome) -> bool:
    """Whether the classifier may name a cause for an attempt no rule explains (`outcome`: how its
    build ended, by the rules). Never where the build succeeded (only a check run after it failed:
    that failure has no build output to read). Where nothing says how the build ended, only when the
    attempt ends in an error: a line that states one (not a warning; learn.features.states_error),
    among the lines the classifier reads, at or after the line where the attempt reached its
    furthest stage. A paste cut off right after its error passes; a log that shows no failure at
    all, or a build that went on to link and copy its library after its warnings (a success
    nothing marks), does not, and keeps its honest "not enough log"."""
    if outcome == "success":
        return False
    if outcome == "failure" or _check_failed(span):
        return True
    since = max(span.start, span.stages.get(span.stage, span.start))
    return any(
        states_error(event.text) or any(states_error(text) for text in event.after[:2])
        for event in events
        if since <= event.line <= span.end and event.kind in FAILURE_KINDS
    )


def _from_model(data: Inputs, span: Span, outcome: Outcome) -> RootCause | None:
    """Ask the classifier about an attempt no rule explains; None when it abstains or may not answer."""
    if not data.use_model or not may_classify(data.events, span, outcome):
        return None
    prediction = _classify(data, span)
    if prediction is None or not prediction.confident:
        return None
    fix = data.knowledge.fix_for(prediction.cause)
    if fix is None or prediction.cause not in data.knowledge.causes:  # a model trained on other labels
        return None
    values = template_values({}, data.facts_for(span.number), span, data.knowledge)
    return RootCause(
        id=prediction.cause, title=data.knowledge.causes[prediction.cause].title, confidence=round(prediction.probability, 2),
        evidence=_relevant(data)[:MAX_EVIDENCE], fix=fill(fix, values), engine="model", attempts=[span.number],
        rule=None,
    )  # fmt: skip


# Symptoms that show the build's own output is in the log: advice to rerun verbosely does not fit then.
_BUILD_OUTPUT = frozenset({
    "compiler-error-diagnostic", "python-final-exception", "ninja-subcommand-failed", "ninja-failed-target",
    "torch-error-compiling-objects", "make-error", "setuptools-command-failed",
})  # fmt: skip
_SUMMARY_ONLY = frozenset({"pip-wheel-failed"})  # hints that assume the build's output is hidden
_FIRST_ERRORS = ("compiler-error-diagnostic", "python-final-exception")


def _hint_for(data: Inputs, span: Span) -> Hint | None:
    """The first hint whose symptom is in the unexplained attempt (and whose advice fits the log)."""
    fired = {f.rule.id for f in data.findings if f.attempt == span.number}
    verbose = bool(fired & _BUILD_OUTPUT)
    return next(
        (h for h in data.knowledge.hints if h.when in fired and not (verbose and h.when in _SUMMARY_ONLY)), None
    )


def _first_error(data: Inputs, span: Span) -> Finding | None:
    """The first compiler or Python error of the attempt: usually the cause, the rest its consequences."""
    errors = [f for f in data.findings if f.attempt == span.number and f.rule.id in _FIRST_ERRORS]
    return min(errors, key=lambda f: f.line, default=None)


def _unknown(data: Inputs, span: Span, outcome: Outcome) -> RootCause:
    hint = _hint_for(data, span)
    text = hint.text if hint else "No rule explains this failure. The first error line is usually the cause."
    stage = span.stage
    if stage != "start":
        text += f"\nThe attempt failed in the {stage} stage."
    first = _first_error(data, span)
    if first is not None:
        text += f"\nFirst error (line {first.line}): {first.event.text.strip()[:240]}"
    guess = _model_guess(data, span) if may_classify(data.events, span, outcome) else ""
    return RootCause(
        id="unknown", title="No known cause matched", confidence=0.0, evidence=_relevant(data)[:MAX_EVIDENCE], rule=None,
        fix=text + (f"\n(The classifier's best guess, not confident enough to report: {guess}.)" if guess else ""),
        attempts=[span.number],
    )  # fmt: skip


def _model_guess(data: Inputs, span: Span) -> str:
    prediction = _classify(data, span)
    return f"{prediction.cause} ({prediction.probability:.0%})" if prediction and prediction.probability >= 0.45 else ""


def _relevant(data: Inputs) -> list[Evidence]:
    """Lines worth reading when no cause is certain: first errors first, then the final ones."""
    symptoms = sorted(
        (f for f in data.findings if f.rule.role in ("symptom", "cause")),
        key=lambda f: (-f.rule.priority, f.line),
    )
    picked: dict[int, str] = {}
    for f in symptoms:
        picked.setdefault(f.line, f.event.text)
        if len(picked) >= MAX_RELEVANT:
            break
    first = min((f for f in data.findings if f.rule.id in _FIRST_ERRORS), key=lambda f: f.line, default=None)
    if first is not None and first.line not in picked:  # the first error always, even past the limit
        picked[first.line] = first.event.text
    return [Evidence(line=n, text=t) for n, t in sorted(picked.items())]


def _missing(data: Inputs, status: Status, roots: Sequence[RootCause]) -> str:
    if status == "failure" and roots and roots[-1].id == "unknown":
        span = next((s for s in data.spans if s.number in roots[-1].attempts), data.spans[-1])
        hint = _hint_for(data, span)
        return hint.missing if hint else ""
    if status != "unknown":
        return ""
    if data.lines < 5:
        return (
            f"The log has only {data.lines} line(s). Paste the whole output of the failing command, from the "
            "command line itself to the last line (pip install -v shows the compiler's messages)."
        )
    return (
        "The log shows no error and no success. It may be cut off: include the end of the output, and the "
        "command that was run (with pip, add -v to see the build's own messages)."
    )
