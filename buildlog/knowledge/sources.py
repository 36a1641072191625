"""The one place that reads package data (grammars, rules, tables) via importlib.resources.

Going through importlib.resources keeps the data working from a wheel, a zip or a checkout alike.
"""

from __future__ import annotations

import sys
from functools import cache
from importlib import resources
from typing import Any

from buildlog.cache import remembered

if sys.version_info >= (3, 11):
    from importlib.resources.abc import Traversable
else:  # pragma: no cover - exercised on Python 3.10 only
    from importlib.abc import Traversable


def grammar_text(name: str) -> str:
    """The text of grammars/<name>.lark."""
    return resources.files("buildlog.knowledge").joinpath("grammars", f"{name}.lark").read_text("utf-8")


def knowledge_file(*parts: str) -> Traversable:
    """A file under buildlog/knowledge."""
    node = resources.files("buildlog.knowledge")
    for part in parts:
        node = node.joinpath(part)
    return node


@cache
def load_toml(*parts: str) -> dict[str, Any]:
    """Parse a TOML file under buildlog/knowledge (cached: the data never changes in a run)."""
    return parse_toml(knowledge_file(*parts).read_text("utf-8"), ".".join(parts))


def parse_toml(text: str, name: str) -> dict[str, Any]:
    """tomllib.loads, remembered between runs in the user cache (see cache.remembered).

    `name` (e.g. rules.compile.toml) only labels the cache entries: each file keeps its own.
    """
    label = name.removesuffix(".toml").replace("-", ".")  # a dash would end the label (cache.write_cache)
    return remembered(f"toml.{label}", text.encode("utf-8"), lambda: parse_toml_now(text))


def parse_toml_now(text: str) -> dict[str, Any]:
    """tomllib.loads; the parser is loaded only when a file is not in the cache yet."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    return tomllib.loads(text)


def toml_texts(folder: str) -> list[tuple[str, str]]:
    """Every TOML file in a knowledge sub-folder, by name, as text."""
    node = knowledge_file(folder)
    files = sorted((p for p in node.iterdir() if p.name.endswith(".toml")), key=lambda p: p.name)
    return [(p.name, p.read_text("utf-8")) for p in files]


def toml_files(folder: str) -> list[tuple[str, dict[str, Any]]]:
    """Every TOML file in a knowledge sub-folder, by name, parsed."""
    return [(name, parse_toml(text, f"{folder}.{name}")) for name, text in toml_texts(folder)]


def knowledge_text(*parts: str) -> str:
    """The text of a file under buildlog/knowledge."""
    return knowledge_file(*parts).read_text("utf-8")
