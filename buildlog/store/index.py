"""The bundled corpus as a similarity index: knowledge/corpus_index.json, built from corpus/cases.

`explain` compares a log with every labelled corpus case without reading the corpus (which the
wheel does not carry) or analysing it again: the index holds each case's label, fix and vector
length, and per word its idf and postings (which cases have it, how often), with a hash of the
corpus so that a test can tell when it is stale. Kept by word, a run parses one short string per
word and reads the postings of the log's own words only (`postings`), not every case's counts.

Rebuild after changing the corpus: `buildlog rebuild corpus/cases corpus/pasted` (the index is built from the first folder).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from buildlog.learn.features import FEATURES_VERSION, idf_from, tfidf_norm

if TYPE_CHECKING:
    from buildlog.store.cases import Case

INDEX_FORMAT = 2
INDEX_FILE = "corpus_index.json"


def corpus_hash(folder: Path) -> str:
    """Changes when any case file (log or sidecar) changes, or the tokenizer does."""
    from buildlog.store.cases import iter_cases

    digest = hashlib.sha256(f"{INDEX_FORMAT}:{FEATURES_VERSION}".encode())
    for case in iter_cases(folder):
        for path in (case.log_path, case.log_path.with_name(case.slug + ".toml")):
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def indexed(case: Case) -> bool:
    """Only failures with a known cause teach anything as a neighbour."""
    return bool(case.sidecar.causes) and case.sidecar.causes[0] != "unknown"


def case_record(case: Case) -> dict[str, Any]:
    """One case as the index keeps it: label, fix, identity and token counts."""
    from buildlog.knowledge.artefact import bundled
    from buildlog.store.intake import entry_from_bytes

    side = case.sidecar
    entry = entry_from_bytes(
        case.slug, case.read_bytes(), bundled(), cause=side.causes[0], title=side.title, fix=side.fix,
        key_lines=side.key_lines, use_model=False,
    )  # fmt: skip
    return {
        "key": case.slug, "cause": entry.cause, "title": side.title, "fix": side.fix,
        "fingerprint": entry.fingerprint, "shape": entry.shape, "counts": dict(sorted(entry.counts.items())),
    }  # fmt: skip


def build_index(folder: Path) -> dict[str, Any]:
    """The whole index for a corpus folder, deterministic for the same files."""
    from buildlog.store.cases import iter_cases

    cases = [case_record(c) for c in iter_cases(folder) if indexed(c)]
    return index_of(cases, corpus_hash(folder))


def index_of(cases: list[dict[str, Any]], digest: str) -> dict[str, Any]:
    """The index of case records (each with its "counts"): the cases without their counts, and per
    word "idf count:n,n,... count:n,..." (n a case's place in "cases"), most words' count being 1
    in most cases; words sorted, counts ascending, case numbers ascending."""
    idf = {w: round(v, 6) for w, v in idf_from([c["counts"] for c in cases]).items()}
    by_count: dict[str, dict[int, list[str]]] = {w: {} for w in sorted(idf)}
    rows = []
    for n, case in enumerate(cases):  # each vector's length under the index's idf, so a run need not work it out
        rows.append(
            {**{k: v for k, v in case.items() if k != "counts"}, "norm": round(tfidf_norm(case["counts"], idf), 6)}
        )
        for word, count in case["counts"].items():
            by_count[word].setdefault(count, []).append(str(n))
    words = {
        w: " ".join([repr(idf[w]), *(f"{c}:{','.join(ns)}" for c, ns in sorted(groups.items()))])
        for w, groups in by_count.items()
    }
    return {
        "format": INDEX_FORMAT,
        "features_version": FEATURES_VERSION,
        "corpus_hash": digest,
        "cases": rows,
        "words": words,
    }


def dump_index(index: dict[str, Any]) -> str:
    """JSON with one case, and one word, per line: a changed case is a few lines of diff."""
    head = [f"{json.dumps(k)}: {json.dumps(v)}," for k, v in index.items() if k not in ("cases", "words")]
    cases = [json.dumps(c, sort_keys=True, separators=(",", ":")) for c in index["cases"]]
    words = [f"{json.dumps(w)}:{json.dumps(p)}" for w, p in sorted(index["words"].items())]
    body = ["{", *head, '"cases": [', ",\n".join(cases), "],", '"words": {', ",\n".join(words), "}", "}"]
    return "\n".join(line for line in body if line) + "\n"


def default_index_path() -> Path:
    """Where the package reads the index from, in a checkout."""
    import buildlog.knowledge

    return Path(buildlog.knowledge.__file__).resolve().parent / INDEX_FILE


@cache
def load_index() -> dict[str, Any]:
    """The bundled index as stored ("cases" without counts, "words"); an empty one when the file
    is missing or of another format."""
    from importlib import resources

    node = resources.files("buildlog.knowledge").joinpath(INDEX_FILE)
    if not node.is_file():
        return {"cases": [], "words": {}}
    data = json.loads(node.read_bytes())
    if data.get("format") != INDEX_FORMAT or data.get("features_version") != FEATURES_VERSION:
        return {"cases": [], "words": {}}
    return data


def postings(index: dict[str, Any], word: str) -> tuple[float, list[tuple[int, list[int]]]] | None:
    """A word's idf and, for each count it has in some case, those cases' numbers; None for a
    word no case has."""
    entry = index["words"].get(word)
    if entry is None:
        return None
    head, *groups = entry.split(" ")
    out = []
    for group in groups:
        count, _, numbers = group.partition(":")
        out.append((int(count), list(map(int, numbers.split(",")))))
    return float(head), out


def expanded(index: dict[str, Any]) -> dict[str, Any]:
    """The index with each case's counts (keys sorted) and the idf, as building it saw them."""
    counts: list[dict[str, int]] = [{} for _ in index["cases"]]
    idf = {}
    for word in sorted(index["words"]):
        idf[word], groups = postings(index, word)  # type: ignore[misc]
        for c, ns in groups:
            for n in ns:
                counts[n][word] = c
    return {"idf": idf, "cases": [{**case, "counts": n} for case, n in zip(index["cases"], counts, strict=True)]}
