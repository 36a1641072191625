"""The classifier at run time: a linear model exported from training, scored in pure Python.

No run ever imports scikit-learn. The exported file carries a format version, the tokenizer
version and the hash of the corpus it was trained on; a file of another format is refused, not
guessed at. The coefficients travel as one packed float32 matrix (base64) rather than as JSON
numbers: parsing a hundred thousand JSON floats would cost more than the rest of a small run.
"""

from __future__ import annotations

import base64
import math
import sys
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from buildlog.errors import BuildlogError
from buildlog.learn.features import MODEL_FEATURES_VERSION, model_tokens, tfidf

MODEL_FORMAT = 2
MODEL_FILE = "classifier.json"


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
    rows: dict[str, int]  # word -> its row in coef
    coef: Sequence[float]  # row-major, one row of len(classes) per word
    threshold: float
    corpus_hash: str
    margin: float = 0.0

    def probabilities(self, lines: list[str]) -> dict[str, float]:
        """Cause -> probability for the failure lines; empty when no known token is in them."""
        vector = tfidf(model_tokens(lines), self.idf)
        if not vector:
            return {}
        scores = list(self.intercept)
        width = len(self.classes)
        for word, weight in vector.items():
            start = self.rows[word] * width
            for cls, c in enumerate(self.coef[start : start + width]):
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
    """Validate an exported model's stamps and shape, then build it."""
    if data.get("format") != MODEL_FORMAT or data.get("features_version") != MODEL_FEATURES_VERSION:
        raise BuildlogError(
            f"model file has format {data.get('format')}/{data.get('features_version')}, "
            f"expected {MODEL_FORMAT}/{MODEL_FEATURES_VERSION}: retrain with `buildlog rebuild corpus/cases`"
        )
    words, classes = data["vocabulary"], tuple(data["classes"])
    coef = unpack_floats(data["coef"])
    if len(coef) != len(words) * len(classes) or len(data["idf"]) != len(words):
        raise BuildlogError("model file is damaged (matrix and vocabulary disagree): retrain with `buildlog train`")
    return LinearModel(
        classes, tuple(data["intercept"]), dict(zip(words, data["idf"], strict=True)),
        {w: i for i, w in enumerate(words)}, coef, float(data["threshold"]), data["corpus_hash"],
        float(data.get("margin", 0.0)),
    )  # fmt: skip


def pack_floats(values: Sequence[float]) -> str:
    """float32, little-endian, base64: the matrix's form in the model file."""
    packed = array("f", values)
    if sys.byteorder == "big":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode("ascii")


def unpack_floats(text: str) -> array:
    packed = array("f")
    packed.frombytes(base64.b64decode(text))
    if sys.byteorder == "big":
        packed.byteswap()
    return packed


_MODELS: dict[int, LinearModel] = {}


def model_of(data: Mapping[str, Any] | None) -> LinearModel | None:
    """The model of an exported file's data (built once per data object), or None without one."""
    if data is None:
        return None
    if id(data) not in _MODELS:
        _MODELS[id(data)] = model_from_dict(dict(data))
    return _MODELS[id(data)]
