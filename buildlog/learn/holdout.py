"""Honest measurement: every case judged by knowledge that never saw its source repository.

The classifier of each case is trained without any case of the case's repository (folds of whole
repositories), and a rule written from a repository's logs (its `written_from`) is switched off
for that repository's cases. Top-1 is reported for rules alone, the classifier alone and both,
with the classifier's precision where it answers and the cases it adds that rules miss.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from buildlog.diagnose.verdict import may_classify
from buildlog.knowledge.bundle import Knowledge
from buildlog.learn.classifier import model_from_dict
from buildlog.learn.training import fold_training, last_failure_lines, samples_of, source_of
from buildlog.pipeline import Analysis, Options, analyse, trace
from buildlog.store.cases import Case


@dataclass
class Tally:
    """Top-1 counts of one engine."""

    cases: int = 0
    right: int = 0
    answered: int = 0  # cases where the engine named a cause (for precision)
    answered_right: int = 0

    def add(self, expected: str, got: str) -> None:
        self.cases += 1
        self.right += got == expected
        if got != "unknown":
            self.answered += 1
            self.answered_right += got == expected

    @property
    def top1(self) -> float:
        return self.right / self.cases if self.cases else 0.0

    @property
    def precision(self) -> float:
        return self.answered_right / self.answered if self.answered else 1.0


@dataclass
class HoldoutResult:
    folds: int
    sources: int
    rules: Tally = field(default_factory=Tally)
    model: Tally = field(default_factory=Tally)
    both: Tally = field(default_factory=Tally)
    model_adds: list[str] = field(default_factory=list)  # cases the classifier gets that rules miss
    misses: list[tuple[str, str, str, str]] = field(default_factory=list)  # (case, expected, both's answer, its engine)
    model_in_both: Tally = field(default_factory=Tally)  # the cases where the classifier's answer leads
    thresholds: list[float] = field(default_factory=list)  # each fold's classifier's, chosen in its training data
    class_thresholds: list[dict[str, float]] = field(default_factory=list)  # ... and the causes' lower ones
    trained: list[dict] = field(default_factory=list)  # each fold's exported classifier


def fold_of(source: str, folds: int) -> int:
    return int(hashlib.sha256(source.encode()).hexdigest(), 16) % folds


def holdout(cases: Sequence[Case], knowledge: Knowledge, measured: Sequence[Case], folds: int = 5) -> HoldoutResult:
    """Judge every case of `measured` by a classifier trained on the cases that draw on none of the
    repositories held out with it (folds of whole repositories), its answer threshold chosen inside
    that training data, and by the rules not written from its repository.

    Only cases whose label is a cause the knowledge can report (or unknown, where the thread said
    none fits) are measured; a case whose thread never diagnosed it neither trains nor counts. The
    classifier alone reads the lines of the last failed attempt as the held-out knowledge finds them.
    """
    base = Options(use_model=False)
    samples = {c.slug: samples_of(c, knowledge) for c in cases}
    known = set(knowledge.causes) | {"unknown"}  # measured: a thread may say no known cause fits
    result = HoldoutResult(folds, len({source_of(c) for c in cases}))
    for k in range(folds):
        held = [
            c
            for c in measured
            if fold_of(source_of(c), folds) == k
            and c.sidecar.diagnosed
            and c.sidecar.causes[:1]
            and c.sidecar.causes[0] in known
        ]
        if not held:
            continue
        away = frozenset(source_of(c).lower() for c in held)
        data = fold_training(cases, knowledge, away, f"holdout-{k}", samples)  # as `buildlog rebuild` trains
        model = model_from_dict(data)
        with_model = _with_classifier(knowledge, data)
        for case in held:
            expected = case.sidecar.causes[0]
            mine = _without_rules_from(knowledge, source_of(case))
            raw = case.read_bytes()
            analysis = trace(raw, mine, options=base)
            by_rules = _primary(analysis.report)
            result.rules.add(expected, by_rules)
            lines = last_failure_lines(analysis) if _may_classify(analysis) else []  # the guards reports apply
            prediction = model.predict(lines) if lines else None
            result.model.add(expected, prediction.cause if prediction and prediction.confident else "unknown")
            report = analyse(raw, _without_rules_from(with_model, source_of(case)))
            both = _primary(report)
            result.both.add(expected, both)
            engine = report.root_causes[0].engine if report.root_causes else ""
            if engine == "model":
                result.model_in_both.add(expected, both)
            if both == expected and by_rules != expected:
                result.model_adds.append(case.slug)
            if both != expected:
                result.misses.append((case.slug, expected, both, engine))
        result.trained.append(data)
        result.thresholds.append(float(data["threshold"]))
        result.class_thresholds.append(dict(data.get("class_thresholds", {})))
    return result


def _may_classify(analysis: Analysis) -> bool:
    """verdict.may_classify for the attempt the classifier alone reads (the last failed one, else the last)."""
    ended = {a.number: a.outcome for a in analysis.report.attempts}
    failed = [s for s in analysis.attempts if ended.get(s.number) == "failure"]
    span = failed[-1] if failed else (analysis.attempts[-1] if analysis.attempts else None)
    return span is not None and may_classify(analysis.events, span, ended.get(span.number, "unknown"))


def _primary(report: object) -> str:
    causes = getattr(report, "root_causes", [])
    return causes[0].id if causes else "unknown"


def _with_classifier(knowledge: Knowledge, data: dict) -> Knowledge:
    """The same knowledge with another classifier."""
    from dataclasses import replace

    other = replace(knowledge)
    other.__dict__["classifier_data"] = data
    return other


def _without_rules_from(knowledge: Knowledge, source: str) -> Knowledge:
    """The knowledge without the rules written from this source's logs."""
    written = [r.id for r in knowledge.rules if source in r.written_from]
    return knowledge.with_rules((), written) if written else knowledge
