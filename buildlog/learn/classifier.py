"""The classifier at run time: a linear model exported from training, scored in pure Python.

No run ever imports scikit-learn. The exported file carries a format version, the tokenizer
version and the hash of the corpus it was trained on; a file of another format is refused, not
guessed at. The coefficients travel as one packed float32 matrix (base64) and the idf as packed
float64, the vocabulary as one string of lines, rather than as JSON numbers and lists (which cost
more to parse than the rest of a small run); the matrix is decoded a row at a time (`Packed`).
"""

from __future__ import annotations

import base64
import binascii
import math
import sys
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from buildlog.errors import BuildlogError
from buildlog.learn.features import MODEL_FEATURES_VERSION, model_tokens, tfidf_counts

MODEL_FORMAT = 3
MODEL_FILE = "classifier.json"


@dataclass(frozen=True)
class Prediction:
    """The model's answer: best cause, its probability, and whether it is confident enough."""

    cause: str
    probability: float
    confident: bool
    ranking: tuple[tuple[str, float], ...]
    probabilities: tuple[tuple[str, float], ...] = ()


class Packed:
    """Rows of floats packed in a base64 text, a row decoded when it is read: a run reads the rows
    of a few hundred words, fewer bytes than decoding the whole matrix."""

    def __init__(self, text: str, kind: str, width: int) -> None:
        self.text, self.kind = text, kind
        self.size = array(kind).itemsize * width  # bytes per row

    def __len__(self) -> int:
        return _decoded_length(self.text) // self.size

    def __getitem__(self, i: int) -> array:
        first = i * self.size
        start = first // 3  # the base64 quantum (3 bytes, 4 characters) the row starts in
        chunk = binascii.a2b_base64(self.text[start * 4 : -(-(first + self.size) // 3) * 4])
        values = array(self.kind)
        values.frombytes(chunk[first - start * 3 :][: self.size])
        if sys.byteorder == "big":
            values.byteswap()
        return values


def unpack_floats(text: str, kind: str = "f") -> array:
    values = array(kind)
    values.frombytes(binascii.a2b_base64(text))
    if sys.byteorder == "big":
        values.byteswap()
    return values


def _decoded_length(text: str) -> int:
    return len(text) // 4 * 3 - text[-2:].count("=")


@dataclass(frozen=True)
class LinearModel:
    """Multinomial logistic regression over TF-IDF features."""

    classes: tuple[str, ...]
    intercept: tuple[float, ...]
    rows: dict[str, int]  # word -> its row in coef and idf
    idf: array  # float64, one per row
    coef: Packed  # one row of len(classes) float32 per word
    threshold: float
    corpus_hash: str
    margin: float = 0.0
    class_thresholds: Mapping[str, float] = field(default_factory=dict)  # causes answered below `threshold`

    def probabilities(self, lines: list[str]) -> dict[str, float]:
        """Cause -> probability for the failure lines; empty when no known token is in them."""
        rows = self.rows
        counts = Counter(model_tokens(lines))
        vector = tfidf_counts(counts, {w: self.idf[rows[w]] for w in counts if w in rows})
        if not vector:
            return {}
        scores = list(self.intercept)
        for word, weight in vector.items():
            for cls, c in enumerate(self.coef[rows[word]]):
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
        confident = prob >= self.class_thresholds.get(best, self.threshold) and prob - runner_up >= self.margin
        return Prediction(best, prob, confident, tuple(ranking[:3]), tuple(ranking))


def model_from_dict(data: dict) -> LinearModel:
    """Validate an exported model's stamps and shape, then build it."""
    if data.get("format") != MODEL_FORMAT or data.get("features_version") != MODEL_FEATURES_VERSION:
        raise BuildlogError(
            f"model file has format {data.get('format')}/{data.get('features_version')}, "
            f"expected {MODEL_FORMAT}/{MODEL_FEATURES_VERSION}: retrain with `buildlog rebuild corpus/cases corpus/pasted`"
        )
    words, classes = data["vocabulary"].split("\n") if data["vocabulary"] else [], tuple(data["classes"])
    coef, idf = Packed(data["coef"], "f", len(classes)), unpack_floats(data["idf"], "d")
    if _decoded_length(coef.text) != len(words) * coef.size or len(idf) != len(words):
        raise BuildlogError("model file is damaged (matrix and vocabulary disagree): retrain with `buildlog train`")
    return LinearModel(
        classes, tuple(data["intercept"]), {w: i for i, w in enumerate(words)}, idf, coef,
        float(data["threshold"]), data["corpus_hash"], float(data.get("margin", 0.0)),
        {str(c): float(t) for c, t in data.get("class_thresholds", {}).items()},
    )  # fmt: skip


def pack_floats(values: Sequence[float], kind: str = "f") -> str:
    """float32 (or with kind "d" float64), little-endian, base64: the matrix's and the idf's form in the model file."""
    packed = array(kind, values)
    if sys.byteorder == "big":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode("ascii")


# id(data) -> (data, its model): the data is held with its model, so that its id is not given to
# another object while the entry lasts (holdout builds a classifier per fold and lets each go).
_MODELS: dict[int, tuple[Mapping[str, Any], LinearModel]] = {}


def model_of(data: Mapping[str, Any] | None) -> LinearModel | None:
    """The model of an exported file's data (built once per data object), or None without one."""
    if data is None:
        return None
    if id(data) not in _MODELS:
        _MODELS[id(data)] = (data, model_from_dict(dict(data)))
    return _MODELS[id(data)][1]
