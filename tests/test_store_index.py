"""The bundled corpus index, similarity ranking, and where the store lives on each platform."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from buildlog.knowledge.artefact import bundled
from buildlog.learn.features import idf_from, tfidf, tfidf_counts, tfidf_norm, tokens
from buildlog.pipeline import Options, trace
from buildlog.store.cases import iter_cases
from buildlog.store.index import (
    build_index,
    case_record,
    corpus_hash,
    default_index_path,
    dump_index,
    expanded,
    load_index,
)
from buildlog.store.paths import data_dir, store_path
from buildlog.store.similar import THRESHOLD, Past, PastFailures, corpus_past, rank, rank_corpus
from tests.conftest import CORPUS

REBUILD = "rebuild it: buildlog rebuild corpus/cases corpus/pasted"


def test_bundled_index_matches_the_corpus():
    stored = json.loads(default_index_path().read_text("utf-8"))
    assert stored["corpus_hash"] == corpus_hash(CORPUS), f"corpus_index.json is stale; {REBUILD}"
    index = expanded(stored)
    labelled = {c.slug for c in iter_cases(CORPUS) if c.sidecar.causes and c.sidecar.causes != ["unknown"]}
    assert {c["key"] for c in index["cases"]} == labelled, REBUILD
    assert index["idf"] == pytest.approx(idf_from([c["counts"] for c in index["cases"]]), abs=1e-6)


def test_every_indexed_case_finds_itself():
    """Exact while the index matches the pipeline; at worst its own best neighbour.

    Sessions that ended in success are indexed (their fix is worth showing) but show no neighbours.
    """
    cases = {c.slug: c for c in iter_cases(CORPUS)}
    for record in load_index()["cases"][::4]:
        case = cases.get(record["key"])
        if case is None or case.sidecar.outcome == "success":
            continue  # removed since the index was built (the test above says so), or nothing failed
        failure = trace(case.read_bytes(), bundled(), options=Options(use_model=False)).failure
        found = PastFailures(None, limit=50).seen_before(failure)
        assert found, case.slug
        same = [s for s in found if s.score == found[0].score]
        assert found[0].exact or record["key"] in {s.key for s in same}, (case.slug, found[:2])


def test_ranking_by_postings_is_ranking_every_case():
    """rank_corpus reads only the postings of the query's words: the same list, to the bit, as
    rank over every corpus case with its counts (threshold 0, so that the zeros count too)."""
    idf = expanded(load_index())["idf"]
    pasts = corpus_past(with_norms=True)
    cases = {c.slug: c for c in iter_cases(CORPUS)}
    queries = [["nothing any case says: zzqx"]]
    for record in load_index()["cases"][1::12]:
        case = cases.get(record["key"])
        if case is not None:
            queries.append(trace(case.read_bytes(), bundled(), options=Options(use_model=False)).failure[-8:])
    for lines in queries:
        full = rank(lines, pasts, idf, threshold=0.0, limit=1000)
        assert rank_corpus(lines, threshold=0.0, limit=1000) == full
        assert len(full) == len({p.shape for p in pasts})
    assert rank_corpus([]) == []


def test_builder_is_deterministic_and_check_mode(tmp_path):
    folder = tmp_path / "cases"
    folder.mkdir()
    slugs = sorted({c.slug for c in iter_cases(CORPUS) if c.sidecar.causes and c.sidecar.causes != ["unknown"]})[:3]
    for slug in slugs:
        for path in CORPUS.glob(f"{slug}.*"):
            shutil.copy(path, folder / path.name)
    first, second = build_index(folder), build_index(folder)
    assert dump_index(first) == dump_index(second)
    assert json.loads(dump_index(first)) == first
    assert [c["key"] for c in first["cases"]] == slugs
    records = [case_record(c) for c in iter_cases(folder)]
    assert [c["counts"] for c in expanded(first)["cases"]] == [r["counts"] for r in records]
    before = corpus_hash(folder)
    assert first["corpus_hash"] == before
    (folder / f"{slugs[0]}.toml").write_text((folder / f"{slugs[0]}.toml").read_text() + "\n# edited\n")
    assert corpus_hash(folder) != before  # what `buildlog rebuild DIR --check` compares


def test_ranking_scores_are_the_cosine_of_the_tfidf_vectors():
    """rank looks only at the query's words of each past and may take its length from the index."""
    query = ["ModuleNotFoundError: No module named 'torch'", "error: subprocess-exited-with-error"]
    texts = ["No module named 'torch' torch torch\nerror: x", "nvcc fatal : Unsupported gpu architecture"]
    pasts = [_past(str(i), text) for i, text in enumerate(texts)]
    idf = idf_from([tokens("\n".join(query)), *(tokens(t) for t in texts)])
    q = tfidf(tokens("\n".join(query)), idf)
    scores = []
    for past in pasts:
        full = tfidf_counts(past.counts, idf)
        expected = round(sum(v * full.get(w, 0.0) for w, v in q.items()), 3)
        for known in (None, tfidf_norm(past.counts, idf)):
            scored = rank(query, [replace(past, norm=known)], idf, threshold=0.0)
            assert [s.score for s in scored] == [expected]
        scores.append(expected)
    assert scores[0] > 0.1 and scores[1] == 0.0


def _past(key, text, origin="corpus", seen=1):
    lines = text.splitlines()
    from buildlog.learn.features import fingerprint

    return Past(key, "cause_" + key, key, "fix " + key, fingerprint(lines), Counter(tokens(text)), origin, seen)


def test_rank_exact_first_threshold_limit_and_dedupe():
    query = ["ModuleNotFoundError: No module named 'psutil'", "error: subprocess-exited-with-error"]
    pasts = [
        _past("same", "\n".join(query), "store", seen=4),
        _past("copy", "\n".join(query)),  # the same failure in the corpus: shown once, as the store's
        _past("near", "ModuleNotFoundError: No module named 'wheel'\nerror: subprocess-exited-with-error"),
        _past("far", "nvcc fatal : Unsupported gpu architecture 'compute_120'"),
        _past("near2", "No module named 'packaging'\nerror: subprocess-exited-with-error"),
    ]
    found = rank(query, pasts, threshold=0.0, limit=10)
    assert [s.key for s in found][:2] == ["same", "near"]
    assert found[0].exact and found[0].seen == 4 and found[0].origin == "store"
    assert "copy" not in {s.key for s in found}
    assert [s.key for s in rank(query, pasts)] == [s.key for s in found if s.score >= THRESHOLD][:3]
    assert "far" not in {s.key for s in rank(query, pasts)}
    assert len(rank(query, pasts, threshold=0.0, limit=2)) == 2
    assert rank([], pasts) == []


def test_data_dir_per_platform():
    home = Path("/h")
    assert data_dir("linux", {}, home) == Path("/h/.local/share/buildlog")
    assert data_dir("linux", {"XDG_DATA_HOME": "/x"}, home) == Path("/x/buildlog")
    assert data_dir("linux", {"XDG_DATA_HOME": "relative"}, home) == Path("/h/.local/share/buildlog")
    assert data_dir("darwin", {}, home) == Path("/h/Library/Application Support/buildlog")
    assert data_dir("win32", {"LOCALAPPDATA": "C:/Users/u/AppData/Local"}, home) == Path(
        "C:/Users/u/AppData/Local/buildlog"
    )
    assert data_dir("win32", {}, home) == Path("/h/AppData/Local/buildlog")


def test_store_path_precedence():
    assert store_path("/opt/s.sqlite", {"BUILDLOG_STORE": "/env.sqlite"}) == Path("/opt/s.sqlite")
    assert store_path(None, {"BUILDLOG_STORE": "/env.sqlite"}) == Path("/env.sqlite")
    assert store_path(None, {"BUILDLOG_STORE": "", "XDG_DATA_HOME": "/x"}) == Path("/x/buildlog/store.sqlite")
