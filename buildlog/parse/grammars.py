"""Compiles the lark grammars once per process (LALR, cached on disk between runs)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from buildlog.knowledge.sources import grammar_text

if TYPE_CHECKING:
    from lark import Lark

GRAMMARS = ("command", "diagnostic", "python", "ninja", "pip", "banner")


@cache
def parser(name: str) -> Lark:
    """The LALR parser for grammars/<name>.lark."""
    if name not in GRAMMARS:
        raise KeyError(f"no grammar named {name!r}")
    from lark import Lark

    return Lark(grammar_text(name), parser="lalr", lexer="contextual", cache=True)
