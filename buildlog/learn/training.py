"""Training the classifier on the corpus with scikit-learn, and exporting it for pure-Python use.

Deterministic: fixed seeds, sorted inputs, rounded coefficients, so the same corpus gives the same
file. Only `buildlog train` and `buildlog eval --engine model` import this module.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from buildlog.errors import BuildlogError
from buildlog.knowledge.artefact import bundled
from buildlog.knowledge.bundle import Knowledge
from buildlog.learn.classifier import MODEL_FORMAT, LinearModel, model_from_dict, pack_floats
from buildlog.learn.features import FEATURES_VERSION, failure_lines, tokens
from buildlog.pipeline import Analysis, Options, trace
from buildlog.store.cases import Case

# The model only sees failures no rule explains, which are often unlike anything it was trained on:
# it answers only when clearly sure (cross-validated precision at this setting is about 0.95).
THRESHOLD = 0.6
MARGIN = 0.2
SEED = 0


@dataclass(frozen=True)
class Sample:
    """One training example: the failure lines of an attempt and the cause that explains it."""

    slug: str
    lines: tuple[str, ...]
    label: str


def corpus_hash(cases: Iterable[Case]) -> str:
    """Changes when any case's log or sidecar changes, or the tokenizer does."""
    digest = hashlib.sha256(FEATURES_VERSION.encode())
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
    """Incidents of a session give one sample each; a single-cause failure gives one."""
    side = case.sidecar
    if side.outcome != "failure" and not side.incidents:
        return []
    analysis = trace(case.read_bytes(), knowledge or bundled(), options=Options(use_model=False))
    if side.incidents:
        return [
            Sample(case.slug, tuple(_attempt_lines(analysis, inc.attempts[0])), inc.cause)
            for inc in side.incidents
            if inc.attempts
        ]
    if len(side.causes) != 1 or side.causes[0] == "unknown":
        return []
    failed = [a.number for a in analysis.report.attempts if a.outcome == "failure"]
    lines = _attempt_lines(analysis, failed[-1]) if failed else failure_lines(analysis.events)
    return [Sample(case.slug, tuple(lines), side.causes[0])]


def _sklearn():  # type: ignore[no-untyped-def]
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise BuildlogError("training needs scikit-learn: pip install 'buildlog[learn]'") from None
    return TfidfVectorizer, LogisticRegression


def fit(samples: Sequence[Sample], corpus: str) -> dict:
    """Fit TF-IDF + logistic regression and export the parts inference needs."""
    tfidf_cls, lr_cls = _sklearn()
    docs = [tokens("\n".join(s.lines)) for s in samples]
    labels = [s.label for s in samples]
    if len(set(labels)) < 2:
        raise BuildlogError("training needs examples of at least two causes")
    vectorizer = tfidf_cls(analyzer=lambda doc: doc, sublinear_tf=True, norm="l2", smooth_idf=True)
    matrix = vectorizer.fit_transform(docs)
    model = lr_cls(C=10.0, max_iter=5000, class_weight="balanced", random_state=SEED)
    model.fit(matrix, labels)
    return _export(vectorizer, model, corpus)


def _export(vectorizer, model, corpus: str) -> dict:  # type: ignore[no-untyped-def]
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
        "features_version": FEATURES_VERSION,
        "trained_with": f"scikit-learn {sklearn.__version__}",
        "corpus_hash": corpus,
        "threshold": THRESHOLD,
        "margin": MARGIN,
        "classes": [str(c) for c in model.classes_],
        "intercept": [round(float(x), 5) for x in model.intercept_],
        "vocabulary": words,
        "idf": idf,
        "coef": pack_floats(coef),
    }


def train(cases: Sequence[Case]) -> dict:
    """The exported model for a corpus."""
    samples = [s for case in cases for s in samples_of(case)]
    return fit(samples, corpus_hash(cases))


def write_model(data: dict, path: Path) -> None:
    path.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n", "utf-8")


def cross_validate(cases: Sequence[Case], folds: int = 5) -> dict[str, LinearModel | None]:
    """For each case, a model trained without it (k folds over cases, in a fixed order)."""
    ordered = sorted(cases, key=lambda c: hashlib.sha256(c.slug.encode()).hexdigest())
    per_case = {c.slug: samples_of(c) for c in ordered}
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
