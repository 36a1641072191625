"""The bundled knowledge, checked and built into one file: buildlog/knowledge/bundled.json.

Built at development time from the TOML sources, the grammars and their parser tables, it is what
every run reads: nothing is validated, parsed from TOML or compiled by lark at run time, and no
run depends on a cache. The file names the hash of its sources; a test fails when it is stale.

    python -m buildlog.knowledge.artefact           # rebuild after changing any knowledge file
    python -m buildlog.knowledge.artefact --check   # exit 1 when it is stale
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
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
            f"buildlog's knowledge artefact cannot be read ({exc}); rebuild it: python -m buildlog.knowledge.artefact"
        ) from None
    if data.get("format") != FORMAT:
        raise BuildlogError("buildlog's knowledge artefact is of another format; rebuild it: python -m buildlog.knowledge.artefact")
    return knowledge_from(data)


def default_path() -> Path:
    import buildlog.knowledge

    return Path(buildlog.knowledge.__file__).resolve().parent / ARTEFACT


def main(argv: Sequence[str] | None = None) -> int:
    """Build (or with --check, verify) the artefact; the exit code says whether it is current."""
    import argparse

    from buildlog.knowledge.load import source_texts

    parser = argparse.ArgumentParser(prog="python -m buildlog.knowledge.artefact", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say whether the artefact is current (exit 1 if not)")
    args = parser.parse_args(argv)
    path = default_path()
    texts = source_texts()
    try:
        if args.check:
            current = json.loads(path.read_text("utf-8")).get("sources") if path.is_file() else None
            stale = current != sources_hash(texts)
            print(f"{path}: {'stale; rebuild with python -m buildlog.knowledge.artefact' if stale else 'up to date'}")
            return 1 if stale else 0
        data = build(texts)
    except BuildlogError as exc:
        print(f"buildlog: {exc}", file=sys.stderr)
        return 2
    path.write_text(dump(data), "utf-8")
    print(f"{path}: {len(data['rules'])} rules, {len(data['facts'])} fact patterns, sources {data['sources']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
