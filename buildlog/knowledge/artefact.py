"""The bundled knowledge, checked and built into one file: buildlog/knowledge/bundled.json.

Built at development time from the TOML sources, the grammars and their parser tables, it is what
every run reads: nothing is validated, parsed from TOML or compiled by lark at run time, and no
run depends on a cache. The file names the hash of its sources; a test fails when it is stale.

    buildlog rebuild            # after changing any knowledge file
    buildlog rebuild --check    # exit 1 when it is stale
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from buildlog.errors import BuildlogError
from buildlog.knowledge.bundle import Knowledge, knowledge_from

ARTEFACT = "bundled.json"
FORMAT = 1


def sources_hash(texts: Mapping[str, str]) -> str:
    digest = hashlib.sha256(f"format {FORMAT}".encode())
    for name in sorted(texts):
        digest.update(name.encode() + b"\0" + texts[name].encode() + b"\0")
    return digest.hexdigest()[:16]


def build(texts: Mapping[str, str]) -> dict[str, Any]:
    """The artefact's content for these source texts."""
    from buildlog.knowledge.load import load_sources

    return {"format": FORMAT, "sources": sources_hash(texts), **load_sources(texts)}


def dump(data: Mapping[str, Any]) -> str:
    """One record per line: small diffs when one rule changes."""
    parts = []
    for key, value in data.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            rows = ",\n".join(json.dumps(v, sort_keys=True, ensure_ascii=False) for v in value)
            parts.append(f"{json.dumps(key)}: [\n{rows}\n]")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value, sort_keys=True, ensure_ascii=False)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


@cache
def bundled() -> Knowledge:
    """The bundled knowledge, read from the artefact once per process."""
    node = resources.files("buildlog.knowledge").joinpath(ARTEFACT)
    try:
        data = json.loads(node.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise BuildlogError(
            f"buildlog's knowledge artefact cannot be read ({exc}); rebuild it: buildlog rebuild"
        ) from None
    if data.get("format") != FORMAT:
        raise BuildlogError("buildlog's knowledge artefact is of another format; rebuild it: buildlog rebuild")
    return knowledge_from(data)


def default_path() -> Path:
    import buildlog.knowledge

    return Path(buildlog.knowledge.__file__).resolve().parent / ARTEFACT


def is_current() -> bool:
    """Whether the artefact was built from the sources as they are."""
    from buildlog.knowledge.load import source_texts

    path = default_path()
    current = json.loads(path.read_text("utf-8")).get("sources") if path.is_file() else None
    return current == sources_hash(source_texts())


def write() -> dict[str, Any]:
    """Check the sources and write the artefact; what it holds."""
    from buildlog.knowledge.load import source_texts

    data = build(source_texts())
    default_path().write_text(dump(data), "utf-8")
    return data
