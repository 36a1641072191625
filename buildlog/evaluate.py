"""`buildlog eval`: run every case of a corpus and measure the answers against the sidecars.

A case passes when the reported causes equal the expected ones (as a set), a successful build
reports no failure, a log too short to tell says so, every key line is among the evidence, every
expected risk is reported, and a session's incidents come out in order with their resolutions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from buildlog.report.schema import Report
from buildlog.scores import CaseResult, EvalResult
from buildlog.store.cases import Case, ExpectedIncident

Analyzer = Callable[[Case], Report]


def check_case(case: Case, report: Report) -> CaseResult:
    """Compare one report with its sidecar."""
    side = case.sidecar
    predicted = [c.id for c in report.root_causes]
    result = CaseResult(case.slug, list(side.causes), predicted, report.status)
    result.chosen = [(e.line, e.text) for c in report.root_causes for e in c.evidence] or [
        (e.line, e.text) for e in report.relevant
    ]
    result.problems += _cause_problems(side.outcome, side.causes, predicted, report)
    if side.causes or side.outcome != "success":  # a clean success shows no evidence to hold key lines
        result.problems += _key_line_problems(side.key_lines, report)
    missing_risks = set(side.risks) - {r.id for r in report.risks}
    if missing_risks:
        result.problems.append(f"risks not reported: {sorted(missing_risks)}")
    result.problems += _incident_problems(side.incidents, report)
    return result


def _cause_problems(outcome: str, expected: list[str], predicted: list[str], report: Report) -> list[str]:
    if outcome == "success" and not expected:
        if predicted or report.status == "failure":
            return [f"a successful build was reported as {report.status} with {predicted}"]
        return []
    if outcome == "success" and report.status != "success":
        return [f"a session that ends in success was reported as {report.status}"]
    if outcome == "unknown" or expected == ["unknown"]:
        if set(predicted) - {"unknown"} or (report.status != "unknown" and "unknown" not in predicted):
            return [f"expected 'unknown', got {report.status} with {predicted}"]
        return []
    if set(predicted) != set(expected):
        return [f"expected {expected}, got {predicted}"]
    return []


def _key_line_problems(key_lines: list[str], report: Report) -> list[str]:
    shown = [e.text for c in report.root_causes for e in c.evidence] + [e.text for e in report.relevant]
    joined = "\n".join(shown)
    flat = "".join(shown).replace(" ", "")  # a key line broken across evidence lines (a wrapped message) still counts
    return [
        f"key line not in the evidence: {k!r}" for k in key_lines if k not in joined and k.replace(" ", "") not in flat
    ]


def _incident_problems(expected: list[ExpectedIncident], report: Report) -> list[str]:
    problems = []
    got = report.incidents
    if expected and [i.cause for i in got] != [e.cause for e in expected]:
        problems.append(f"incidents {[i.cause for i in got]}, expected {[e.cause for e in expected]}")
    for want in expected:
        match = next((i for i in got if i.cause == want.cause), None)
        if match is None:
            continue
        if want.attempts and match.attempts != want.attempts:
            problems.append(f"{want.cause}: attempts {match.attempts}, expected {want.attempts}")
        resolved = match.resolved_by.attempt if match.resolved_by else 0
        if resolved != want.resolved_in:
            problems.append(f"{want.cause}: resolved in {resolved}, expected {want.resolved_in}")
        elif want.change and match.resolved_by:
            text = f"{match.resolved_by.kind} {match.resolved_by.change}".lower()
            if want.change.lower() not in text:
                problems.append(f"{want.cause}: change {match.resolved_by.change!r}, expected {want.change!r}")
    return problems


def evaluate(cases: Iterable[Case], analyze: Analyzer) -> EvalResult:
    """Run every case and tally; a paste whose thread never named a cause is counted, not judged."""
    results: list[CaseResult] = []
    counts: dict[str, Counter[str]] = {}
    confusion: Counter[tuple[str, str]] = Counter()
    undiagnosed = 0
    for case in cases:
        if not case.sidecar.diagnosed:
            undiagnosed += 1
            continue
        result = check_case(case, analyze(case))
        results.append(result)
        expected = set(case.sidecar.causes) - {"unknown"}
        predicted = set(result.predicted) - {"unknown"}
        for cause in expected | predicted:
            tally = counts.setdefault(cause, Counter())
            tally["tp" if cause in expected and cause in predicted else "fn" if cause in expected else "fp"] += 1
        confusion[(_primary(case.sidecar.causes), _primary(result.predicted))] += 1
    return EvalResult(results, counts, confusion, undiagnosed)


def _primary(causes: list[str]) -> str:
    return causes[0] if causes else "none"


def evaluate_model(cases: list[Case]) -> EvalResult:
    """The classifier alone, by cross-validation: each case is judged by a model trained without it.

    Every training sample counts (a session contributes one per incident); abstaining is a miss.
    """
    from buildlog.learn.training import cross_validate, samples_of

    per_case = {c.slug: samples_of(c) for c in cases}  # each case analysed once, for training and judging
    models = cross_validate(cases, samples=per_case)
    results: list[CaseResult] = []
    counts: dict[str, Counter[str]] = {}
    confusion: Counter[tuple[str, str]] = Counter()
    for case in cases:
        model = models.get(case.slug)
        for sample in per_case[case.slug]:
            prediction = model.predict(list(sample.lines)) if model else None
            got = prediction.cause if prediction and prediction.confident else "unknown"
            result = CaseResult(f"{case.slug}:{sample.label}", [sample.label], [got], "failure")
            if got != sample.label:
                ranking = ", ".join(f"{c} {p:.2f}" for c, p in prediction.ranking) if prediction else "no tokens"
                result.problems.append(f"model said {got} ({ranking}), expected {sample.label}")
            result.chosen = [(0, line) for line in sample.lines[-4:]]
            results.append(result)
            for cause in {sample.label, got} - {"unknown"}:
                tally = counts.setdefault(cause, Counter())
                tally["tp" if cause == sample.label == got else "fn" if cause == sample.label else "fp"] += 1
            confusion[(sample.label, got)] += 1
    return EvalResult(results, counts, confusion)
