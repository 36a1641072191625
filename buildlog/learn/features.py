"""Turns the failing part of a log into masked tokens and TF-IDF vectors, without scikit-learn.

Training (scikit-learn) and inference (here, pure Python) share this one tokenizer, so a model
exported from training scores the same tokens at run time. Volatile text (numbers, hashes, temp
paths, versions) is masked so that the same failure on another machine looks the same.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

FEATURES_VERSION = "1"  # tokens(): the seen-before index and the store
MODEL_FEATURES_VERSION = "3"  # model_tokens(): the classifier

_HEX = re.compile(r"\b[0-9a-f]{8,}\b", re.IGNORECASE)
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.+\-@~]+){2,}[\\/]?")
_NUMBER = re.compile(r"\d+")
_TOKEN = re.compile(r"[a-z_][a-z0-9_+]*[a-z0-9_+]|[a-z]")
_STOP = frozenset(
    {"the", "a", "an", "of", "to", "in", "and", "or", "is", "it", "for", "on", "at", "be", "this", "that", "with", "by"}
)


def mask(line: str) -> str:
    """Replace the volatile parts of a line: hashes, numbers, and every path but its last part."""
    line = _HEX.sub("<hex>", line)
    line = _PATH.sub(lambda m: " " + re.split(r"[\\/]", m.group(0).rstrip("\\/"))[-1] + " ", line)
    return _NUMBER.sub("0", line)


def tokens(text: str) -> list[str]:
    """Lower-cased words of the masked text, plus adjacent word pairs."""
    words = [w for w in _TOKEN.findall(mask(text).lower()) if w not in _STOP and len(w) > 1]
    return words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_+]*[A-Za-z0-9_+]|[A-Za-z]")
_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
# A line that reads as a complaint: its words count again, marked, so that what the error says
# outweighs the frames and the progress lines around it.
_COMPLAINT = re.compile(
    r"error|fatal|not found|no such|cannot|can't|could not|failed|unable|missing|required|requires|unsupported|"
    r"denied|killed|timed? ?out|not compatible|mismatch",
    re.IGNORECASE,
)


# The summary pip and uv print under every failed build, whatever its cause, and the build tools'
# own word that a compiler exited (setuptools' "error: command '...' failed", ninja's and torch's
# stop): failure lines made of nothing else tell the classifier nothing (a paste cut down to them
# gets no guess).
_SUMMARY = re.compile(
    r"^\W*error: command '[^'\n]{1,300}' failed with exit (?:status|code) -?\d+|^\W*ninja: build stopped: subcommand failed|"
    r"^\W*RuntimeError: Error compiling objects for extension|^\W*(?:subprocess\.)?CalledProcessError: Command '\['ninja', '-v'|"
    r"subprocess-exited-with-error|did not run successfully|^\W*exit code: \d+|lines of output\]|end of output\]|"
    r"^\W*note: This error originates from a subprocess|Failed building wheel for|^\W*Failed to build |"
    r"Could not build wheels for|^\W*Running setup\.py clean|^\W*hint: See above|legacy-install-failure|"
    r"Encountered error while (generating package metadata|trying to install)|See above for output|"
    r"metadata-generation-failed|Failed to build installable wheels|^\W*error: failed-wheel-build-for-install",
    re.IGNORECASE,
)


# A complaint said as a warning ("UserWarning: Failed to initialize NumPy", "WARNING: Retrying ... after
# connection broken") is not yet a failure; a tool that prefixes every line ("warning: x.h:4: error: ...")
# still says error.
_WARNING = re.compile(r"warn", re.IGNORECASE)
_ERROR_WORD = re.compile(r"\b(?:error|fatal)\b", re.IGNORECASE)


def states_error(line: str) -> bool:
    """Whether a line reads as a complaint (the classifier's `!` lines) and not as a warning."""
    return bool(_COMPLAINT.search(line)) and (not _WARNING.search(line) or bool(_ERROR_WORD.search(line)))


def only_summary(lines: Iterable[str]) -> bool:
    """Whether every (non-blank) line is part of pip's or uv's summary of a failed build."""
    return all(_SUMMARY.search(line) for line in lines if line.strip())


def model_tokens(lines: Iterable[str]) -> list[str]:
    """The classifier's words: as tokens() (masked, lower-cased, with adjacent pairs), plus the parts of
    compound names marked `~` (cuda_runtime_api, cusolverDn: the part another log shares) and the
    words of complaint lines again, marked `!`; none when the lines are only pip's summary."""
    lines = list(lines)
    if only_summary(lines):
        return []
    plain: list[str] = []
    extra: list[str] = []
    for line in lines:
        masked = mask(line)
        words = []
        for word in _WORD.findall(masked):
            low = word.lower()
            if low in _STOP or len(low) < 2:
                continue
            words.append(low)
            parts = [p.lower() for piece in word.split("_") for p in _PART.findall(piece)]
            parts = [p for p in parts if len(p) > 1 and p not in _STOP]
            if len(parts) > 1:
                extra += ["~" + p for p in parts]
        plain += words
        if _COMPLAINT.search(masked):
            extra += ["!" + w for w in words]
    return plain + extra + [f"{a} {b}" for a, b in zip(plain, plain[1:], strict=False)]


def fingerprint(lines: Iterable[str], cause: str = "") -> str:
    """A stable id for a failure: the masked lines (order kept, blanks dropped) and its cause."""
    normal = "\n".join(" ".join(mask(line).split()) for line in lines if line.strip())
    return hashlib.sha256(f"{cause}\n{normal}".encode()).hexdigest()[:16]


def tfidf(words: Sequence[str], idf: Mapping[str, float]) -> dict[str, float]:
    """Sublinear term frequency times idf, L2-normalised; words unknown to idf are dropped."""
    return tfidf_counts(Counter(words), idf)


def tfidf_counts(counts: Mapping[str, int], idf: Mapping[str, float]) -> dict[str, float]:
    """tfidf from token counts, the form the corpus index and the store keep."""
    weights = tfidf_weights(counts, idf)
    length = _length(weights)
    return {w: v / length for w, v in weights.items()}


def tfidf_norm(counts: Mapping[str, int], idf: Mapping[str, float]) -> float:
    """Length of the tf-idf vector of token counts (1 for an empty one, so that dividing is safe)."""
    return _length(tfidf_weights(counts, idf))


def tfidf_weights(counts: Mapping[str, int], idf: Mapping[str, float]) -> dict[str, float]:
    """The vector before normalising, for the words idf knows."""
    return {w: term_weight(n, idf[w]) for w, n in counts.items() if w in idf}


def term_weight(count: int, idf: float) -> float:
    """Sublinear term frequency (1 + ln count) times idf, as scikit-learn's sublinear_tf computes it."""
    return (1.0 + math.log(count)) * idf


def _length(weights: Mapping[str, float]) -> float:
    return math.sqrt(sum(v * v for v in weights.values())) or 1.0


def idf_from(documents: Iterable[Iterable[str]]) -> dict[str, float]:
    """Smoothed idf as scikit-learn computes it: ln((1 + n) / (1 + df)) + 1."""
    docs = [set(d) for d in documents]
    df: Counter[str] = Counter(w for d in docs for w in d)
    n = len(docs)
    return {w: math.log((1 + n) / (1 + c)) + 1.0 for w, c in df.items()}


# Event kinds whose lines say what went wrong (commands, banners and progress lines do not).
FAILURE_KINDS = frozenset({
    "exception", "diagnostic", "tool_message", "pip_error", "pip_block", "uv_chain", "ninja_failed",
    "ninja_message", "py_warning", "text", "frame",
})  # fmt: skip
MAX_FAILURE_LINES = 60


class EventLike(Protocol):
    """What failure_lines reads of an event; parse.events.Event has it."""

    @property
    def kind(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def after(self) -> tuple[str, ...]: ...


def failure_lines(events: Sequence[EventLike], first: int = 0, last: int | None = None) -> list[str]:
    """The lines that describe a failure between two line numbers, with the lines right after each.

    Events are read through a protocol (kind, line, text, after) so that this module needs nothing but text.
    Read from the end: only the last lines are kept, and an event adds lines at most two past its own,
    so once a few more than those are picked, earlier events cannot change which are last.
    """
    picked: dict[int, str] = {}
    for event in reversed(events):
        line = event.line
        if line < first or (last is not None and line > last) or event.kind not in FAILURE_KINDS:
            continue
        picked.setdefault(line, event.text)
        for offset, text in enumerate(event.after[:2], start=1):
            if text.strip():
                picked.setdefault(line + offset, text.strip())
        if len(picked) >= MAX_FAILURE_LINES + 3:
            break
    ordered = [picked[n] for n in sorted(picked)]
    return ordered[-MAX_FAILURE_LINES:]
