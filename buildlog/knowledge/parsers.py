"""The lark grammars' LALR parsers, built into the knowledge artefact as plain data.

Building the six parsers from their grammars costs more than explaining a small log, so the
artefact keeps each parser's tables (lark's own serialised form, as JSON) and a run rebuilds the
parser objects from them, each when a line first needs it. Nothing is loaded from a cache or any other place a user or another user
could write: the tables ship inside the package. An artefact made by another lark version is not
trusted to match; the parser is then built from its grammar instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lark import Lark

OPTIONS: Mapping[str, Any] = {"parser": "lalr", "lexer": "contextual"}


def build_parser(text: str) -> Lark:
    from lark import Lark

    return Lark(text, **OPTIONS)


def serialise(text: str) -> dict[str, Any]:
    """A grammar and its parser's tables, as JSON-safe data."""
    import lark
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = build_parser(text).memo_serialize([TerminalDef, Rule])
    return {"lark": lark.__version__, "grammar": text, "tables": json.dumps({"data": data, "memo": memo})}


def _int_keys(pairs: list[tuple[str, Any]]) -> dict[Any, Any]:
    """JSON turns lark's integer keys (states, memo ids) into strings; no other key is all digits."""
    return {int(k) if k.isdigit() else k: v for k, v in pairs}


def parser_from(entry: Mapping[str, Any]) -> Lark:
    """One grammar's parser, from its tables where this lark made them, else from its grammar."""
    import lark
    from lark import Lark

    if entry["lark"] != lark.__version__:
        return build_parser(entry["grammar"])
    parser = Lark.__new__(Lark)
    parser._load(json.loads(entry["tables"], object_pairs_hook=_int_keys))  # lark's own reader of its tables
    return parser
