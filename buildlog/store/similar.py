"""Seen before: the past failures most like this log, from the user's store and the bundled corpus.

TF-IDF cosine over the tokens of the failure lines, in pure Python (learn/features), so that
neither `explain` nor opening the store imports scikit-learn. A past failure with exactly the
same failure lines is not a neighbour but the same failure again: it comes first, marked exact,
and is worded as "seen N times" rather than as a similarity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
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
    """The labelled cases of the bundled corpus index, with their counts.

    `with_norms`: carry each case's vector length under the index's own idf, which saves
    computing them when that is the idf the ranking uses.
    """
    return [_corpus_case(c, c["counts"], c["norm"] if with_norms else None) for c in _corpus()["cases"]]


@cache
def _corpus() -> dict:
    from buildlog.store.index import expanded, load_index

    return expanded(load_index())


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

        if not lines:
            return []
        try:
            mine = store_past(self.path) if self.path is not None else []
        except BuildlogError as exc:
            self.note = f"the store was skipped: {exc}"
            mine = []
        if mine:  # the idf then spans the store as well
            return rank(lines, [*mine, *corpus_past()], None, self.threshold, self.limit)
        return rank_corpus(lines, self.threshold, self.limit)


def rank_corpus(lines: Sequence[str], threshold: float = THRESHOLD, limit: int = LIMIT) -> list[Similar]:
    """rank(lines, corpus_past(with_norms=True), the index's idf, ...), reading the postings of
    the lines' own words only: each case's dot product is summed over the query's words in the
    same order as _cosine sums it, so the scores are the same to the bit."""
    from buildlog.store.index import load_index, postings

    if not lines:
        return []
    index = load_index()
    counts = features(lines)
    idf: dict[str, float] = {}
    found: dict[str, list[tuple[int, list[int]]]] = {}
    for word in counts:
        entry = postings(index, word)
        if entry is not None:
            idf[word], found[word] = entry
    query = tfidf_counts(counts, idf)
    cases = index["cases"]
    dots: list[float] = [0] * len(cases)  # an int 0, as sum() starts from
    for word, q in query.items():
        w = idf[word]
        for count, numbers in found[word]:
            part = q * term_weight(count, w)  # the same product for every case with this count
            for n in numbers:
                dots[n] += part
    shape = fingerprint(lines)
    seen: set[str] = set()
    exact, scored = [], []
    for n, c in enumerate(cases):  # first of each shape, as _unique keeps
        if c["shape"] in seen:
            continue
        seen.add(c["shape"])
        if c["shape"] == shape:
            exact.append(n)
        else:
            scored.append((-(dots[n] / c["norm"]), c["key"], n))
    scored.sort()
    out = [_similar(_corpus_case(cases[n]), 1.0, True) for n in exact]
    for minus, _, n in scored[: max(limit - len(out), 0)]:
        if -minus < threshold:
            break
        out.append(_similar(_corpus_case(cases[n]), -minus, False))
    return out[:limit]


def _corpus_case(c: Mapping, counts: Mapping[str, int] | None = None, norm: float | None = None) -> Past:
    return Past(c["key"], c["cause"], c["title"], c["fix"], c["shape"], counts or {}, "corpus", norm=norm)


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
