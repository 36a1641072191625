"""Python regexes to POSIX extended regexes, for the `grep -E` baseline.

The benchmark compares `buildlog explain` with grep running the rules' own patterns, so grep must
do comparable work: the same alternatives, character classes and repetitions. Constructs ERE has
no word for (lookaround, backreferences, inline flags, patterns that span lines) make a pattern
fall back to its rule's literal anchors, escaped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

_UNSUPPORTED = re.compile(r"\(\?[=!<]|\(\?[aiLmsux]|\\[1-9]|\\[AZzG]|\\n|\\r|\\t")
_CLASS_ESCAPES = {"d": "0-9", "w": "[:alnum:]_", "s": "[:space:]"}
_ESCAPES = {"d": "[0-9]", "D": "[^0-9]", "w": "\\w", "W": "\\W", "s": "\\s", "S": "\\S", "b": "\\b", "B": "\\B"}
_ERE_SPECIAL = set(".[]()*+?{}|^$\\")


class Unsupported(ValueError):
    """The pattern uses a construct that ERE cannot express."""


def to_ere(pattern: str) -> str:
    """Translate one Python regex; raise Unsupported when ERE cannot say the same."""
    if _UNSUPPORTED.search(pattern):
        raise Unsupported(pattern)
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            piece, i = _escape(pattern, i)
            out.append(piece)
        elif ch == "[":
            piece, i = _bracket(pattern, i)
            out.append(piece)
        elif ch == "(" and pattern.startswith("(?:", i):
            out.append("(")
            i += 3
        elif ch == "(" and pattern.startswith("(?P<", i):
            i = pattern.index(">", i) + 1
            out.append("(")
        elif ch == "(" and pattern.startswith("(?", i):
            raise Unsupported(pattern)
        elif ch in "*+?}" and i + 1 < n and pattern[i + 1] in "?+":  # lazy or possessive: same matches per line
            out.append(ch)
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _escape(pattern: str, i: int) -> tuple[str, int]:
    if i + 1 >= len(pattern):
        raise Unsupported(pattern)
    nxt = pattern[i + 1]
    if nxt == "x":
        return _literal(chr(int(pattern[i + 2 : i + 4], 16))), i + 4
    if nxt in _ESCAPES:
        return _ESCAPES[nxt], i + 2
    if nxt.isalnum():
        raise Unsupported(pattern)
    return _literal(nxt), i + 2


def _literal(ch: str) -> str:
    return "\\" + ch if ch in _ERE_SPECIAL else ch


def _bracket(pattern: str, i: int) -> tuple[str, int]:
    """A character class: Python escapes inside become POSIX classes or plain characters."""
    j = i + 1
    negate = pattern.startswith("^", j)
    j += negate
    items: list[str] = []
    dash = close = False
    while True:
        if j >= len(pattern):
            raise Unsupported(pattern)
        ch = pattern[j]
        if ch == "]" and (items or dash or close):
            break
        if ch == "\\":
            nxt = pattern[j + 1]
            if nxt in _CLASS_ESCAPES:
                items.append(_CLASS_ESCAPES[nxt])
            elif nxt == "x":
                items.append(chr(int(pattern[j + 2 : j + 4], 16)))
                j += 2
            elif nxt == "-":
                dash = True
            elif nxt == "]":
                close = True
            elif nxt.isalnum():
                raise Unsupported(pattern)
            else:
                items.append(nxt)
            j += 2
            continue
        items.append(ch)
        j += 1
    body = "".join(items)
    if body.startswith("-"):  # a leading dash is a literal in both dialects; keep it last for ERE
        body, dash = body[1:], True
    return "[" + ("^" if negate else "") + ("]" if close else "") + body + ("-" if dash else "") + "]", j + 1


def escape_literal(text: str) -> str:
    """A literal string as an ERE that matches exactly it."""
    return "".join(_literal(ch) for ch in text)


def patterns_for_grep(rules: Iterable[tuple[str, Iterable[str]]]) -> tuple[list[str], int]:
    """One ERE per rule pattern (anchors where it cannot be translated); also how many fell back."""
    out: list[str] = []
    fallbacks = 0
    for pattern, anchors in rules:
        try:
            out.append(to_ere(pattern))
        except Unsupported:
            fallbacks += 1
            out.extend(escape_literal(a) for a in anchors)
    return list(dict.fromkeys(out)), fallbacks


def plan_groups(patterns: list[str], cost: Callable[[list[str], float | None], float | None]) -> list[list[str]]:
    """Split the patterns into groups that grep runs one after the other, as cheaply as it can.

    GNU grep builds one automaton for all the patterns it is given, and some unions of patterns
    that are each cheap make it far bigger than the parts (the rules' patterns together run
    ~100x slower than their two halves one after the other). A fair baseline is what grep costs
    for the same search done the way a person would do it once they saw that: so the list is
    halved recursively, and a group is kept whole only where running it whole costs no more than
    its best split. `cost(group, limit)` is grep's time for one group on a sample of the log, or
    None when it runs past `limit` seconds (a union is never timed to the end once it loses).
    """
    groups, _ = _plan(patterns, cost)
    return groups


def _plan(
    patterns: list[str], cost: Callable[[list[str], float | None], float | None]
) -> tuple[list[list[str]], float]:
    if len(patterns) == 1:
        return [patterns], cost(patterns, None) or 0.0
    half = len(patterns) // 2
    left, left_cost = _plan(patterns[:half], cost)
    right, right_cost = _plan(patterns[half:], cost)
    split = left_cost + right_cost
    whole = cost(patterns, split)
    if whole is not None and whole <= split:
        return [patterns], whole
    return left + right, split
