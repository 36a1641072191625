"""The bundled corpus as a similarity index: knowledge/corpus_index.json, built from corpus/cases.

`explain` compares a log with every labelled corpus case without reading the corpus (which the
wheel does not carry) or analysing it again: the index holds each case's label, fix and token
counts, the idf over them, and a hash of the corpus so that a test can tell when it is stale.

Rebuild after changing the corpus: `buildlog rebuild corpus/cases`.
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

INDEX_FORMAT = 1
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
    idf = idf_from([c["counts"] for c in cases])
    rounded = {w: round(v, 6) for w, v in idf.items()}
    for case in cases:  # each vector's length under the index's idf, so a run need not work it out
        case["norm"] = round(tfidf_norm(case["counts"], rounded), 6)
    return {
        "format": INDEX_FORMAT,
        "features_version": FEATURES_VERSION,
        "corpus_hash": corpus_hash(folder),
        "idf": {w: round(v, 6) for w, v in sorted(idf.items())},
        "cases": cases,
    }


def dump_index(index: dict[str, Any]) -> str:
    """JSON with one case per line: small, and a changed case is a one-line diff."""
    head = {k: v for k, v in index.items() if k not in ("cases", "idf")}
    lines = ["{", *(f"{json.dumps(k)}: {json.dumps(v)}," for k, v in head.items())]
    lines.append(f'"idf": {json.dumps(index["idf"], sort_keys=True, separators=(",", ":"))},')
    lines.append('"cases": [')
    rows = [json.dumps(c, sort_keys=True, separators=(",", ":")) for c in index["cases"]]
    lines += [row + ("," if i < len(rows) - 1 else "") for i, row in enumerate(rows)]
    lines += ["]", "}"]
    return "\n".join(lines) + "\n"


def default_index_path() -> Path:
    """Where the package reads the index from, in a checkout."""
    import buildlog.knowledge

    return Path(buildlog.knowledge.__file__).resolve().parent / INDEX_FILE


@cache
def load_index() -> dict[str, Any]:
    """The bundled index, each case with its vector length under the index's idf ("norm");
    an empty index when the file is missing or of another format."""
    from importlib import resources

    node = resources.files("buildlog.knowledge").joinpath(INDEX_FILE)
    if not node.is_file():
        return {"cases": [], "idf": {}}
    return _with_norms(json.loads(node.read_bytes()))


def _with_norms(data: dict[str, Any]) -> dict[str, Any]:
    if data.get("format") != INDEX_FORMAT or data.get("features_version") != FEATURES_VERSION:
        return {"cases": [], "idf": {}}
    for case in data["cases"]:
        if "norm" not in case:
            case["norm"] = tfidf_norm(case["counts"], data["idf"])
    return data
