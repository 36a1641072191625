"""Training the classifier on the corpus with scikit-learn, and exporting it for pure-Python use.

Deterministic: fixed seeds, sorted inputs, rounded coefficients, so the same corpus gives the same
file. Only `buildlog train` and `buildlog eval --engine model` import this module.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from buildlog.errors import BuildlogError
from buildlog.knowledge.artefact import bundled
from buildlog.knowledge.bundle import Knowledge
from buildlog.learn.classifier import MODEL_FORMAT, LinearModel, model_from_dict, pack_floats
from buildlog.learn.features import FEATURES_VERSION, MODEL_FEATURES_VERSION, failure_lines, model_tokens
from buildlog.pipeline import Analysis, Options, trace
from buildlog.store.cases import Case, iter_cases

# The model answers where its probability reaches a threshold chosen by cross-validation inside
# its own training data (folds of whole repositories): the lowest at which its answers there are
# right at least TARGET_PRECISION of the time, with 95% confidence (Wilson's lower bound), because
# the failures it sees at run time, those no rule explains, are harder than its training cases.
# Below it, a cause may earn a threshold of its own the same way (class_thresholds).
TARGET_PRECISION = 0.9
CONFIDENCE_Z = 1.645
THRESHOLDS = tuple(round(0.2 + 0.05 * i, 2) for i in range(13))  # 0.2 ... 0.8
INNER_FOLDS = 5
# Whether causes may earn lower thresholds of their own (class_thresholds). Off: in the holdout by
# repository they answered 9 more pastes but where the classifier's answer led a report it was right
# 44 of 51 (86%), under TARGET_PRECISION; with the one threshold 38 of 42 (90.5%).
PER_CAUSE_THRESHOLDS = False
MARGIN = 0.0
SEED = 0


@dataclass(frozen=True)
class Sample:
    """One training example: the failure lines of an attempt and the cause that explains it."""

    slug: str
    lines: tuple[str, ...]
    label: str
    group: str = ""  # the repository it comes from (or its own slug): inner folds keep a group together


def corpus_hash(cases: Iterable[Case]) -> str:
    """Changes when any case's log or sidecar changes, or the tokenizer does."""
    digest = hashlib.sha256(f"{FEATURES_VERSION}:{MODEL_FEATURES_VERSION}".encode())
    for case in sorted(cases, key=lambda c: c.slug):
        digest.update(case.slug.encode())
        digest.update(hashlib.sha256(case.read_bytes()).digest())
        digest.update(case.sidecar.model_dump_json().encode())
    return digest.hexdigest()[:16]


def _attempt_lines(analysis: Analysis, number: int) -> list[str]:
    span = next((s for s in analysis.attempts if s.number == number), None)
    if span is None:
        return failure_lines(analysis.events)
    return failure_lines(analysis.events, span.start, span.end)


def samples_of(case: Case, knowledge: Knowledge | None = None) -> list[Sample]:
    """Incidents of a session give one sample each; a single-cause failure gives one; a paste whose
    thread never named a cause gives none (its `unknown` is a want of a diagnosis, not a label)."""
    side = case.sidecar
    group = side.repository.lower() or case.slug
    if (side.outcome != "failure" and not side.incidents) or not side.diagnosed:
        return []
    analysis = trace(case.read_bytes(), knowledge or bundled(), options=Options(use_model=False))
    if side.incidents:
        return [
            Sample(case.slug, tuple(_attempt_lines(analysis, inc.attempts[0])), inc.cause, group)
            for inc in side.incidents
            if inc.attempts
        ]
    if len(side.causes) != 1 or side.causes[0] == "unknown":
        return []
    return [Sample(case.slug, tuple(last_failure_lines(analysis)), side.causes[0], group)]


def last_failure_lines(analysis: Analysis) -> list[str]:
    """The failure lines of the last failed attempt (the whole log's when none is told apart)."""
    failed = [a.number for a in analysis.report.attempts if a.outcome == "failure"]
    return _attempt_lines(analysis, failed[-1]) if failed else failure_lines(analysis.events)


def _sklearn():  # type: ignore[no-untyped-def]
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise BuildlogError("training needs scikit-learn: pip install 'buildlog[learn]'") from None
    return TfidfVectorizer, LogisticRegression


def fit(samples: Sequence[Sample], corpus: str, threshold: float | None = None) -> dict:
    """Fit TF-IDF + logistic regression and export the parts inference needs, with the answer
    threshold chosen by cross-validation inside these samples unless one is given."""
    samples = [s for s in samples if model_tokens(s.lines)]  # lines that are only pip's summary teach nothing
    if len({s.label for s in samples}) < 2:
        raise BuildlogError("training needs examples of at least two causes")
    vectorizer, model = _fit(samples)
    chosen, per_cause = (
        choose_thresholds(samples, per_cause=PER_CAUSE_THRESHOLDS) if threshold is None else (threshold, {})
    )
    return _export(vectorizer, model, corpus, chosen, per_cause)


def _fit(samples: Sequence[Sample]):  # type: ignore[no-untyped-def]
    tfidf_cls, lr_cls = _sklearn()
    vectorizer = tfidf_cls(analyzer=lambda doc: doc, sublinear_tf=True, norm="l2", smooth_idf=True)
    matrix = vectorizer.fit_transform([model_tokens(s.lines) for s in samples])
    model = lr_cls(C=10.0, max_iter=5000, class_weight="balanced", random_state=SEED)
    model.fit(matrix, [s.label for s in samples])
    return vectorizer, model


def _inner_fold(sample: Sample, folds: int) -> int:
    return int(hashlib.sha256((sample.group or sample.slug).encode()).hexdigest(), 16) % folds


def choose_threshold(samples: Sequence[Sample], folds: int = INNER_FOLDS) -> float:
    """The lowest threshold at which the answers of models trained without a sample's group are
    right often enough (TARGET_PRECISION, at Wilson's lower bound); the highest when none is."""
    return choose_thresholds(samples, folds)[0]


def choose_thresholds(
    samples: Sequence[Sample], folds: int = INNER_FOLDS, per_cause: bool = True
) -> tuple[float, dict[str, float]]:
    """The answer threshold (choose_threshold) and, below it (with per_cause), the causes whose own answers
    earn a lower one, all chosen from models trained without a sample's group (see class_thresholds)."""
    scored = _scored(samples, folds)
    for threshold in THRESHOLDS:
        if _precise_enough([right for _, probability, right in scored if probability >= threshold]):
            return threshold, class_thresholds(scored, threshold) if per_cause else {}
    return THRESHOLDS[-1], {}


def _scored(samples: Sequence[Sample], folds: int) -> list[tuple[str, float, bool]]:
    """(answer, its probability, whether right) for every sample, from a model trained without its group."""
    scored: list[tuple[str, float, bool]] = []
    for k in range(folds):
        train = [s for s in samples if _inner_fold(s, folds) != k]
        held = [s for s in samples if _inner_fold(s, folds) == k]
        if not held or len({s.label for s in train}) < 2:
            continue
        vectorizer, model = _fit(train)
        matrix = vectorizer.transform([model_tokens(s.lines) for s in held])
        known = matrix.getnnz(axis=1)
        for sample, row, words in zip(held, model.predict_proba(matrix), known, strict=True):
            if words:
                best = int(row.argmax())
                answer = str(model.classes_[best])
                scored.append((answer, float(row[best]), answer == sample.label))
    return scored


def _precise_enough(answers: Sequence[bool]) -> bool:
    return bool(answers) and wilson_lower(sum(answers), len(answers)) >= TARGET_PRECISION


def class_thresholds(scored: Sequence[tuple[str, float, bool]], threshold: float) -> dict[str, float]:
    """Lower thresholds for some causes, greedily: each step lowers the threshold of the one cause whose
    lowering adds the most right answers, where the answers it adds are right at least TARGET_PRECISION
    of the time and all answers together stay precise enough (Wilson's lower bound, as for the one
    threshold). Some causes are told apart surely at a lower probability than others: a
    missing compiler's words are its own, while two CUDA mismatches share theirs."""
    chosen = {cause: threshold for cause, _, _ in scored}

    def added(cause: str, low: float, high: float) -> list[bool]:
        return [right for c, probability, right in scored if c == cause and low <= probability < high]

    while True:
        best: tuple[int, str, float] | None = None
        for cause in sorted(chosen):
            for lower in sorted((t for t in THRESHOLDS if t < chosen[cause]), reverse=True):
                more = added(cause, lower, chosen[cause])
                if not more or sum(more) < TARGET_PRECISION * len(more):
                    continue
                trial = {**chosen, cause: lower}
                answers = [right for c, probability, right in scored if probability >= trial[c]]
                if _precise_enough(answers) and (best is None or sum(more) > best[0]):
                    best = (sum(more), cause, lower)
        if best is None:
            return {cause: t for cause, t in sorted(chosen.items()) if t < threshold}
        chosen[best[1]] = best[2]


def wilson_lower(right: int, answered: int, z: float = CONFIDENCE_Z) -> float:
    """Wilson's lower confidence bound of a proportion."""
    if not answered:
        return 0.0
    p, n = right / answered, answered
    centre = p + z * z / (2 * n)
    spread = z * ((p * (1 - p) + z * z / (4 * n)) / n) ** 0.5
    return (centre - spread) / (1 + z * z / n)


def _export(vectorizer, model, corpus: str, threshold: float, per_cause: dict[str, float]) -> dict:  # type: ignore[no-untyped-def]
    """The parts inference needs; words whose every coefficient rounds to nothing are left out."""
    import sklearn

    classes = range(len(model.classes_))
    words, idf, coef = [], [], []
    for word, column in sorted(vectorizer.vocabulary_.items()):
        row = [round(float(model.coef_[cls, column]), 5) for cls in classes]
        if any(abs(c) >= 1e-4 for c in row):
            words.append(word)
            idf.append(round(float(vectorizer.idf_[column]), 5))
            coef += row
    return {
        "format": MODEL_FORMAT,
        "features_version": MODEL_FEATURES_VERSION,
        "trained_with": f"scikit-learn {sklearn.__version__}",
        "corpus_hash": corpus,
        "threshold": threshold,
        "class_thresholds": per_cause,
        "margin": MARGIN,
        "classes": [str(c) for c in model.classes_],
        "intercept": [round(float(x), 5) for x in model.intercept_],
        "vocabulary": "\n".join(words),
        "idf": pack_floats(idf, "d"),
        "coef": pack_floats(coef),
    }


OWN_SOURCE = "buildlog (captured and reconstructed here)"
_REPOSITORY_URL = re.compile(r"github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?(?=[/#?)'\"\s,;]|$)")


def source_of(case: Case) -> str:
    """The repository a case comes from; logs made here count as this project's own source."""
    return case.sidecar.repository or OWN_SOURCE


def repositories_of(case: Case) -> frozenset[str]:
    """Every repository a case draws on, lower-cased: a paste's own, and those whose threads a log
    reconstructed here quotes (its `source` and `ticket`), so that it is not trained on when one
    of them is held out."""
    named = {case.sidecar.repository} if case.sidecar.repository else set()
    named.update(_REPOSITORY_URL.findall(f"{case.sidecar.source} {case.sidecar.ticket}"))
    return frozenset(n.lower() for n in named)


def may_train(case: Case, held: frozenset[str]) -> bool:
    """Whether a case may train the model that judges the held-out sources (lower-cased): none of the
    repositories it draws on is held out. Logs made here that quote no repository train every fold."""
    if not case.sidecar.diagnosed:  # its "unknown" is a want of a diagnosis, not a label
        return False
    return source_of(case).lower() not in held and not repositories_of(case) & held


def fold_training(
    cases: Sequence[Case], knowledge: Knowledge, held: frozenset[str] = frozenset(), corpus: str | None = None,
    samples: Mapping[str, Sequence[Sample]] | None = None,
) -> dict:  # fmt: skip
    """The one way a classifier is trained: on the diagnosed cases that draw on none of the `held`
    repositories (lower-cased), labels the knowledge can report, thresholds (per-cause ones included)
    chosen inside that data. A holdout fold holds its repositories out; the shipped classifier
    (`buildlog rebuild`) is the same call with nothing held out, so what ships is what the holdout
    measures. `samples`: each case's samples_of, when the caller has them already."""
    train = [
        s
        for c in cases
        if may_train(c, held)
        for s in (samples[c.slug] if samples is not None else samples_of(c, knowledge))
        if s.label in knowledge.causes
    ]
    return fit(train, corpus_hash(cases) if corpus is None else corpus)


def train(cases: Sequence[Case]) -> dict:
    """The exported model for a corpus, as `buildlog rebuild` ships it: fold_training with nothing held out."""
    return fold_training(cases, bundled())


def training_cases(folders: Iterable[Path]) -> list[Case]:
    """The cases of several folders, for `buildlog train DIR...`."""
    return [case for folder in folders for case in iter_cases(folder)]


def write_model(data: dict, path: Path) -> None:
    path.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n", "utf-8")


def cross_validate(
    cases: Sequence[Case], folds: int = 5, samples: Mapping[str, Sequence[Sample]] | None = None
) -> dict[str, LinearModel | None]:
    """For each case, a model trained without it (k folds over cases, in a fixed order); `samples`:
    each case's samples_of, when the caller has them already."""
    ordered = sorted(cases, key=lambda c: hashlib.sha256(c.slug.encode()).hexdigest())
    per_case = samples if samples is not None else {c.slug: samples_of(c) for c in ordered}
    out: dict[str, LinearModel | None] = {}
    for k in range(folds):
        held = [c for i, c in enumerate(ordered) if i % folds == k]
        rest = [s for i, c in enumerate(ordered) if i % folds != k for s in per_case[c.slug]]
        try:
            model = model_from_dict(fit(rest, "cv"))
        except BuildlogError:
            model = None
        for case in held:
            out[case.slug] = model
    return out
