"""Seen before: the past failures most like this log, from the user's store and the bundled corpus.

TF-IDF cosine over the tokens of the failure lines, in pure Python (learn/features), so that
neither `explain` nor opening the store imports scikit-learn. A past failure with exactly the
same failure lines is not a neighbour but the same failure again: it comes first, marked exact,
and is worded as "seen N times" rather than as a similarity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from buildlog.learn.features import fingerprint, idf_from, term_weight, tfidf_counts, tfidf_norm
from buildlog.report.schema import Similar
from buildlog.store.intake import features

THRESHOLD = 0.5  # corpus cases of different causes rarely reach it; same-cause neighbours often do
LIMIT = 3


@dataclass(frozen=True)
class Past:
    """A past failure as similarity sees it, whichever place it comes from."""

    key: str
    cause: str
    title: str
    fix: str
    shape: str
    counts: Mapping[str, int]
    origin: str
    seen: int = 1
    last_seen: str = ""
    norm: float | None = None  # length of its tf-idf vector, where known for the idf in use


def corpus_past(with_norms: bool = False) -> list[Past]:
    """The labelled cases of the bundled corpus index.

    `with_norms`: carry each case's vector length under the index's own idf, which saves
    computing them when that is the idf the ranking uses.
    """
    from buildlog.store.index import load_index

    return [
        Past(c["key"], c["cause"], c["title"], c["fix"], c["shape"], c["counts"], "corpus",
             norm=c["norm"] if with_norms else None)
        for c in load_index()["cases"]
    ]  # fmt: skip


def store_past(path: Path | str) -> list[Past]:
    """The incidents of the store at `path` (or URL); none when there is no store (one is never created here)."""
    from buildlog.store.backend import open_store

    store = open_store(path, create=False)
    if store is None:
        return []
    with store:
        rows = store.incidents()
    return [
        Past(r.fingerprint[:8], r.cause, r.title, r.fix, r.shape, r.counts, "store", r.seen, r.last_seen[:10])
        for r in rows
    ]  # fmt: skip


def rank(
    lines: Sequence[str], pasts: Iterable[Past], idf: Mapping[str, float] | None = None,
    threshold: float = THRESHOLD, limit: int = LIMIT,
) -> list[Similar]:  # fmt: skip
    """Exact repeats first, then neighbours above the threshold, best first; at most `limit`.

    Pasts with the same failure lines as one already listed are dropped, so a corpus case that
    was also imported into the store shows once (the store's, which counts sightings).
    `idf` defaults to one computed over the pasts themselves.
    """
    if not lines:
        return []
    pasts = _unique(pasts)
    shape = fingerprint(lines)
    exact = [p for p in pasts if p.shape == shape]
    others = [p for p in pasts if p.shape != shape]
    idf = idf if idf is not None else idf_from([p.counts for p in pasts])
    query = tfidf_counts(features(lines), idf)
    scored = sorted(
        ((_cosine(query, p, idf), p) for p in others),
        key=lambda sp: (-sp[0], sp[1].origin != "store", sp[1].key),
    )
    found = [_similar(p, 1.0, True) for p in exact]
    found += [_similar(p, s, False) for s, p in scored if s >= threshold]
    return found[:limit]


class PastFailures:
    """ "Seen before" as a stage: the store at `path` (if it exists) and the bundled corpus.

    Given to the pipeline (pipeline.Recall); a store that cannot be read is skipped with a note
    rather than stopping the explanation.
    """

    def __init__(self, path: Path | str | None, threshold: float = THRESHOLD, limit: int = LIMIT) -> None:
        self.path, self.threshold, self.limit = path, threshold, limit
        self.note = ""

    def seen_before(self, lines: Sequence[str]) -> list[Similar]:
        from buildlog.errors import BuildlogError
        from buildlog.store.index import load_index

        if not lines:
            return []
        try:
            mine = store_past(self.path) if self.path is not None else []
        except BuildlogError as exc:
            self.note = f"the store was skipped: {exc}"
            mine = []
        if mine:  # the idf then spans the store as well
            return rank(lines, [*mine, *corpus_past()], None, self.threshold, self.limit)
        return rank(lines, corpus_past(with_norms=True), load_index()["idf"], self.threshold, self.limit)


def _unique(pasts: Iterable[Past]) -> list[Past]:
    """First of each shape; the store's pasts come first, so they win over corpus copies."""
    out: dict[str, Past] = {}
    for p in sorted(pasts, key=lambda p: p.origin != "store"):
        out.setdefault(p.shape, p)
    return list(out.values())


def _cosine(query: Mapping[str, float], past: Past, idf: Mapping[str, float]) -> float:
    """cosine(query, tfidf_counts(past.counts, idf)), touching only the query's words of the past."""
    counts = past.counts
    dot = sum(q * term_weight(counts[w], idf[w]) for w, q in query.items() if w in counts)
    return dot / (past.norm or tfidf_norm(counts, idf))


def _similar(past: Past, score: float, exact: bool) -> Similar:
    return Similar(
        key=past.key, cause=past.cause, title=past.title, score=round(score, 3), fix=past.fix, seen=past.seen,
        last_seen=past.last_seen, origin="store" if past.origin == "store" else "corpus", exact=exact,
    )  # fmt: skip
