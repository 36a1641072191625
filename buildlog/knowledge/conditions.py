"""What text a rule's conditions need on a line: read from their regexes, for the scanner's plan.

A rule's `context` / `not_context` is searched in the joined lines of its attempt. The scanner picks
lines by literal anchors, so a line that only a condition reads would never be seen: from each
condition's parsed regex come sets of texts such that every match holds all the texts of one set
within one line (`condition_texts`), and the scanner keeps the lines holding one as quiet text
(scan.scanner). None where a condition cannot be so reduced (it can match across a line break,
looks at where the text starts or ends, ignores case, or needs no text at all).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from functools import cache
from typing import Any

from buildlog.knowledge.records import Rule

if sys.version_info >= (3, 11):
    from re import _constants as _sre  # type: ignore[attr-defined]
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
else:  # pragma: no cover - exercised on Python 3.10 only
    import sre_constants as _sre
    import sre_parse as _sre_parse


def condition_anchors(rules: Iterable[Rule]) -> tuple[tuple[str, tuple[bytes, ...]], ...]:
    """Each context / not_context regex with the texts that find the lines it may match: the
    rarest text of each of its sets (a line without one of them holds no match). A condition that
    cannot be reduced to texts is left out: it reads the lines selected for other reasons."""
    out = []
    for regex in sorted({r for rule in rules for r in (rule.context, rule.not_context) if r}):
        needed = _needed_texts(regex)
        if needed is None:
            continue
        out.append((regex, tuple(sorted({_rarest(texts).encode("utf-8") for texts in needed}))))
    return tuple(out)


# Texts on nearly every line of a verbose build (compile lines, include flags, paths): a set's other
# texts find its lines at a fraction of the cost.
_EVERYWHERE = frozenset({"site-packages", "torch", "include", "lib", "Lib", ".tmp", "python", "build", "/"})


def _rarest(texts: frozenset[str]) -> str:
    """The text of a set that its lines are looked for by: the longest of those not everywhere."""
    return max(sorted(texts), key=lambda t: (t not in _EVERYWHERE, len(t)))


def condition_texts(rules: Iterable[Rule]) -> tuple[tuple[bytes, ...], ...] | None:
    """Sets of texts such that every line that any rule's context or not_context can match holds
    all the texts of one set.

    The scanner looks for one text of each set on every line and keeps a line that holds a whole
    set as quiet text (see scan.scanner): the conditions read an attempt's lines joined, and a line
    that holds no such set can be no part of any match. None where a condition cannot be reduced to
    texts (see above): then the conditions see the lines taken and every quiet line.
    """
    terms: list[frozenset[str]] = []
    for regex in sorted({r for rule in rules for r in (rule.context, rule.not_context) if r}):
        needed = _needed_texts(regex)
        if needed is None:
            return None
        terms += needed
    terms.sort(key=lambda t: (len(t), sorted(t)))
    kept: list[frozenset[str]] = []
    for term in terms:  # a set that holds each text of one kept (inside one of its own) adds nothing
        if not any(all(any(k in t for t in term) for k in other) for other in kept):
            kept.append(term)
    return tuple(tuple(sorted(t.encode("utf-8") for t in term)) for term in kept)


class _Unsafe(Exception):
    """A pattern whose matches cannot be tied to the texts of single lines."""


@cache  # the plan asks for each condition's texts twice (condition_texts, condition_anchors)
def _needed_texts(regex: str) -> tuple[frozenset[str], ...] | None:
    """Sets of texts, one set of which every match of `regex` holds whole (each text within one
    line); None when no text is needed or a match may reach past its line."""
    tree = _sre_parse.parse(regex)
    try:
        found = _needed(list(tree), tree.state.flags)
    except _Unsafe:
        return None
    return tuple(found) if found is not None else None


_NO_BREAK = {_sre.CATEGORY_NOT_SPACE, _sre.CATEGORY_DIGIT, _sre.CATEGORY_WORD}  # classes without "\n"
_LINE_EDGES = {_sre.AT_BOUNDARY, _sre.AT_NON_BOUNDARY}  # the same after a line break as at the text's edge
_REPEATS = {_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", _sre.MAX_REPEAT)}
_MAX_SETS = 16  # alternatives of one pattern kept apart; past them a part of a pattern's sequence is left out


def _needed(items: list[tuple[Any, Any]], flags: int) -> list[frozenset[str]] | None:
    """For a sequence of parsed items: sets of texts, one of which a match holds whole (None: no
    text needed); raises _Unsafe where a match may reach past its line."""
    sets: list[frozenset[str]] | None = None
    run: list[str] = []

    def also(found: list[frozenset[str]] | None) -> None:  # the sequence needs what an item needs too
        nonlocal sets
        if found is None:
            return
        both = [a | b for a in sets for b in found] if sets is not None else found
        sets = both if len(both) <= _MAX_SETS else min(sets or found, found, key=len)  # either alone is needed

    for op, av in [*items, (None, None)]:
        if op is _sre.LITERAL and av != 10:
            run.append(chr(av))
            continue
        if run and not flags & re.IGNORECASE:
            also([frozenset({"".join(run)})])
        run = []
        if op is None:
            break
        if op is _sre.SUBPATTERN or op is getattr(_sre, "ATOMIC_GROUP", None):
            sub, inner = (av[3], (flags | av[1]) & ~av[2]) if op is _sre.SUBPATTERN else (av, flags)
            also(_needed(list(sub), inner))
        elif op is _sre.BRANCH:
            branches = [_needed(list(b), flags) for b in av[1]]
            either = None if None in branches else [t for b in branches for t in b]  # type: ignore[union-attr]
            also(either if either is not None and len(either) <= _MAX_SETS else None)
        elif op in _REPEATS:
            found = _needed(list(av[2]), flags)
            also(found if av[0] >= 1 else None)
        elif op is _sre.AT:
            multiline = av in (_sre.AT_BEGINNING, _sre.AT_END) and flags & re.MULTILINE
            if not multiline and av not in _LINE_EDGES:
                raise _Unsafe  # `^`, `$`, `\A`, `\Z` of the whole text
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT):
            _needed(list(av[1]), flags)  # only for what it may match: a look-around needs no text
        elif not _one_line(op, av, flags):
            raise _Unsafe
    return sets


def _one_line(op: Any, av: Any, flags: int) -> bool:
    """Can this one-character item (or back-reference) never match a line break?"""
    if op is _sre.LITERAL:
        return av != 10
    if op is _sre.NOT_LITERAL:
        return av == 10
    if op is _sre.ANY:
        return not flags & re.DOTALL
    if op is _sre.IN:
        negate = av[:1] == [(_sre.NEGATE, None)]
        breaks = any(
            (kind is _sre.LITERAL and value == 10)
            or (kind is _sre.RANGE and value[0] <= 10 <= value[1])
            or (kind is _sre.CATEGORY and value not in _NO_BREAK)
            for kind, value in av[1 if negate else 0 :]
        )
        return breaks if negate else not breaks
    return op is _sre.GROUPREF  # a group's own items are checked where it is
