"""The classifier at run time: a linear model exported from training, scored in pure Python.

Only logs that no rule explains reach it, so explaining an ordinary log never loads it, and no
run ever imports scikit-learn. The exported file carries a format version, the tokenizer version
and the hash of the corpus it was trained on; a file of another format is refused, not guessed at.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache

from buildlog.errors import BuildlogError
from buildlog.learn.features import FEATURES_VERSION, tfidf, tokens
from buildlog.resources import knowledge_file

MODEL_FORMAT = 1
MODEL_FILE = "model.json"


@dataclass(frozen=True)
class Prediction:
    """The model's answer: best cause, its probability, and whether it is confident enough."""

    cause: str
    probability: float
    confident: bool
    ranking: tuple[tuple[str, float], ...]
    probabilities: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class LinearModel:
    """Multinomial logistic regression over TF-IDF features."""

    classes: tuple[str, ...]
    intercept: tuple[float, ...]
    idf: dict[str, float]
    coef: dict[str, list[tuple[int, float]]]
    threshold: float
    corpus_hash: str
    margin: float = 0.0

    def probabilities(self, lines: list[str]) -> dict[str, float]:
        """Cause -> probability for the failure lines; empty when no known token is in them."""
        vector = tfidf(tokens("\n".join(lines)), self.idf)
        if not vector:
            return {}
        scores = list(self.intercept)
        for word, weight in vector.items():
            for cls, c in self.coef.get(word, ()):
                scores[cls] += c * weight
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        total = sum(exps)
        return {self.classes[i]: e / total for i, e in enumerate(exps)}

    def predict(self, lines: list[str]) -> Prediction | None:
        """Score the failure lines; None when no known token is in them."""
        probs = self.probabilities(lines)
        if not probs:
            return None
        ranking = sorted(probs.items(), key=lambda p: -p[1])
        best, prob = ranking[0]
        runner_up = ranking[1][1] if len(ranking) > 1 else 0.0
        confident = prob >= self.threshold and prob - runner_up >= self.margin
        return Prediction(best, prob, confident, tuple(ranking[:3]), tuple(ranking))


def model_from_dict(data: dict) -> LinearModel:
    """Validate an exported model's stamps, then build it."""
    if data.get("format") != MODEL_FORMAT or data.get("features_version") != FEATURES_VERSION:
        raise BuildlogError(
            f"model file has format {data.get('format')}/{data.get('features_version')}, "
            f"expected {MODEL_FORMAT}/{FEATURES_VERSION}: retrain with `buildlog train corpus/cases`"
        )
    coef = {w: [(int(c), float(v)) for c, v in pairs] for w, pairs in data["coef"].items()}
    return LinearModel(
        tuple(data["classes"]), tuple(data["intercept"]), dict(data["idf"]), coef, float(data["threshold"]),
        data["corpus_hash"], float(data.get("margin", 0.0)),
    )  # fmt: skip


@cache
def bundled_model() -> LinearModel | None:
    """The model shipped in the package, or None when none has been trained yet."""
    node = knowledge_file(MODEL_FILE)
    if not node.is_file():
        return None
    return model_from_dict(json.loads(node.read_text("utf-8")))
