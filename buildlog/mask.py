"""The one secret mask: every text that leaves buildlog goes through a `Mask`.

The rule set is data (knowledge/secrets.toml): one record per kind of secret, each a Python
regular expression whose named group `secret` is the part replaced by `***`; the rest of the match
is kept, so masked text keeps its shape (`https://***@host/simple`, `Authorization: Bearer ***`).

The mask must stay linear in the length of the text whatever the text holds, so:

- every record names `hints`, literal strings one of which every match contains; a pattern runs
  only near an occurrence of one of its hints (a line with none costs a few substring tests);
- a pattern may only use bounded repetitions (`{20,200}`, never `+` or `*`) and no repetition
  inside another one, so that one attempt costs a bounded amount of work; both are checked when
  the records are loaded, and the longest match a pattern allows bounds the region it runs on;
- the regions around the hints are merged and each is searched once, so no character of the text
  is searched more than once per pattern.

Colour codes and NUL bytes (a UTF-16 log read as a one-byte encoding) are taken out before the
patterns run, so a token split by `\\x1b[31m` is still found; a text in which something is masked
comes back without them, a text with nothing to mask comes back unchanged.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from buildlog.errors import BuildlogError

if sys.version_info >= (3, 11):
    from re import _constants as _sre_constants  # type: ignore[attr-defined]
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
else:  # pragma: no cover - exercised on Python 3.10 only
    import sre_constants as _sre_constants
    import sre_parse as _sre_parse

MASK = "***"

# Lookarounds are zero-width, so the longest match does not count what they look at: a region
# reaches this much further on each side. Lookarounds in secrets.toml look at most 512 characters.
_LOOKAROUND_SLACK = 600
# No pattern may allow a match longer than this (a private key block is the longest).
_MAX_WIDTH = 1 << 16

_FIELDS_REQUIRED = ("id", "title", "pattern", "hints", "examples", "quiet", "source")
_FIELDS = (*_FIELDS_REQUIRED, "flags")
_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}
_ID = re.compile(r"[a-z0-9]{1,40}(?:-[a-z0-9]{1,40}){0,8}")

_REPEATS = tuple(
    getattr(_sre_constants, name)
    for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
    if hasattr(_sre_constants, name)
)
_MAXREPEAT = _sre_constants.MAXREPEAT
_ASSERTS = (_sre_constants.ASSERT, _sre_constants.ASSERT_NOT)


@dataclass(frozen=True, slots=True)
class SecretPattern:
    """One kind of secret, validated: its regex, its hints and the reach of a match around them."""

    id: str
    title: str
    pattern: str
    hints: tuple[str, ...]
    examples: tuple[str, ...]
    quiet: tuple[str, ...]
    source: str
    replacement: str = MASK
    # How far from a hint a match can start or end (its longest match plus the lookaround slack).
    reach: int = 0
    flags: int = 0

    @property
    def regex(self) -> re.Pattern[str]:
        """Compiled on first use: most texts hold none of a pattern's hints, so most never need it."""
        return _compiled(self.pattern, self.flags)


@cache
def _compiled(pattern: str, flags: int) -> re.Pattern[str]:
    return re.compile(pattern, flags)


# ---------------------------------------------------------------------------------------------
# Loading and validating the records


def secret_patterns(doc: Mapping[str, Any], origin: str) -> tuple[SecretPattern, ...]:
    """The records of a parsed secrets.toml, validated.

    A problem (an unknown key, a bad regex, no `secret` group, an unbounded or nested repetition,
    a hint that is not lower-case, an example that is not masked, a quiet text that is) raises
    BuildlogError naming `origin`, the record's id and the field.
    """
    unknown = sorted(set(doc) - {"secret"})
    if unknown:
        raise BuildlogError(f"{origin}: unknown top-level key {unknown[0]!r} (expected [[secret]] records)")
    records = doc.get("secret", [])
    if not isinstance(records, list) or not records:
        raise BuildlogError(f"{origin}: no [[secret]] records")
    patterns: list[SecretPattern] = []
    seen: set[str] = set()
    for index, record in enumerate(records):
        pattern = _one_pattern(record, origin, index)
        if pattern.id in seen:
            raise BuildlogError(f"{origin}: secret {pattern.id!r}: field 'id': the id is used twice")
        seen.add(pattern.id)
        patterns.append(pattern)
    return tuple(patterns)


def _one_pattern(record: Any, origin: str, index: int) -> SecretPattern:
    label = f"record {index + 1}"
    if not isinstance(record, Mapping):
        raise BuildlogError(f"{origin}: {label}: a [[secret]] record must be a table")
    rid = record.get("id")
    if isinstance(rid, str) and rid:
        label = f"secret {rid!r}"

    def fail(field: str, problem: str) -> BuildlogError:
        return BuildlogError(f"{origin}: {label}: field {field!r}: {problem}")

    for key in record:
        if key not in _FIELDS:
            raise fail(str(key), f"unknown key (known: {', '.join(_FIELDS)})")
    for key in _FIELDS_REQUIRED:
        if key not in record:
            raise fail(key, "missing")
    for key in ("id", "title", "pattern", "source"):
        if not isinstance(record[key], str) or not record[key].strip():
            raise fail(key, "must be a non-empty string")
    if not _ID.fullmatch(record["id"]):
        raise fail("id", "must be lower-case words joined by '-'")
    for key in ("hints", "examples", "quiet"):
        value = record[key]
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            raise fail(key, "must be a list of non-empty strings")
    if not record["hints"]:
        raise fail("hints", "needs at least one hint")
    if not record["examples"]:
        raise fail("examples", "needs at least one example")
    for hint in record["hints"]:
        if hint != hint.lower():
            raise fail("hints", f"{hint!r} is not lower-case")

    flag_text = record.get("flags", "")
    if not isinstance(flag_text, str) or any(ch not in _FLAGS for ch in flag_text):
        raise fail("flags", f"must be letters from {''.join(_FLAGS)!r}")
    flags = _flags(flag_text)
    try:
        regex = re.compile(record["pattern"], flags)
    except re.error as exc:
        raise fail("pattern", f"not a valid regular expression: {exc}") from None
    if "secret" not in regex.groupindex:
        raise fail("pattern", "has no named group 'secret' (the part that is masked)")
    width = _check_repetitions(record["pattern"], flags, fail)

    pattern = _pattern(record, reach=width + _LOOKAROUND_SLACK)
    alone = Mask([pattern])
    for number, example in enumerate(pattern.examples, 1):
        if alone(example) == example:
            raise fail("examples", f"example {number} is not masked: {example!r}")
        for match in regex.finditer(example):
            if not any(hint in match.group(0).lower() for hint in pattern.hints):
                raise fail("hints", f"the match {match.group(0)!r} of example {number} contains none of the hints")
    for number, text in enumerate(pattern.quiet, 1):
        if alone(text) != text:
            raise fail("quiet", f"quiet text {number} is masked: {text!r} -> {alone(text)!r}")
    return pattern


def _check_repetitions(source: str, flags: int, fail: Any) -> int:
    """The longest match the pattern allows; unbounded or nested repetitions are refused."""
    tree = _sre_parse.parse(source, flags)

    def walk(node: Any, inside_repeat: bool) -> None:
        for op, av in node:
            if op in _REPEATS:
                low, high, item = av
                if high == _MAXREPEAT:
                    raise fail("pattern", "has an unbounded repetition (+, * or {n,}): give it an upper bound")
                if inside_repeat and low != high:
                    raise fail("pattern", "nests a variable repetition inside another repetition")
                walk(item, inside_repeat or high > 1)
            else:
                # A lookaround is atomic: what repeats inside it is never retried from outside.
                inside = inside_repeat and op not in _ASSERTS
                for child in _children(av):
                    walk(child, inside)

    walk(tree, False)
    width = tree.getwidth()[1]
    if width > _MAX_WIDTH:
        raise fail("pattern", f"allows matches of {width} characters (at most {_MAX_WIDTH})")
    return int(width)


def _children(av: Any) -> Iterator[Any]:
    """The sub-patterns held in an opcode's argument (groups, branches, lookarounds)."""
    if isinstance(av, _sre_parse.SubPattern):
        yield av
    elif isinstance(av, (tuple, list)):
        for item in av:
            if isinstance(item, _sre_parse.SubPattern):
                yield item
            elif isinstance(item, (tuple, list)):
                yield from _children(item)


def _flags(letters: str) -> int:
    return sum({_FLAGS[ch] for ch in letters})  # distinct bits: their sum is their union


def _pattern(r: Mapping[str, Any], reach: int) -> SecretPattern:
    return SecretPattern(
        id=r["id"], title=r["title"], pattern=r["pattern"], flags=_flags(r.get("flags", "")), hints=tuple(r["hints"]),
        examples=tuple(r["examples"]), quiet=tuple(r["quiet"]), source=r["source"], reach=reach,
    )  # fmt: skip


def patterns_from(records: Iterable[Mapping[str, Any]]) -> tuple[SecretPattern, ...]:
    """Records already validated (see secret_patterns) as the knowledge artefact keeps them."""
    return tuple(_pattern(r, r["reach"]) for r in records)


def checked_records(doc: Mapping[str, Any], origin: str) -> list[dict[str, Any]]:
    """A parsed secrets.toml, validated, as plain records with each one's reach worked out."""
    patterns = {p.id: p for p in secret_patterns(doc, origin)}
    return [{**record, "reach": patterns[record["id"]].reach} for record in doc["secret"]]


# ---------------------------------------------------------------------------------------------
# User names, home folders and host names (on request): the same machinery, replaced by a name


def _path_rule(rid: str, pattern: str, hints: Sequence[str], replacement: str) -> SecretPattern:
    width = _check_repetitions(pattern, 0, lambda field, problem: BuildlogError(f"path rule {rid!r}: {problem}"))
    return SecretPattern(
        id=rid, title=rid, pattern=pattern, hints=tuple(hints), examples=(), quiet=(), source="buildlog",
        replacement=replacement, reach=width + _LOOKAROUND_SLACK,
    )  # fmt: skip


_PATH_RULES = (
    # /home/alice, /Users/alice, C:\Users\alice -> .../user
    _path_rule(
        "home-folder",
        r"""(?:/home/|/Users/|(?<![A-Za-z])[A-Za-z]:\\Users\\)(?P<secret>[^/\\\s"':$#;&|<>()\[\]{}]{1,64})""",
        ("/home/", "/users/", ":\\users\\"),
        "user",
    ),
    # /root (a home folder too) -> /home/user
    _path_rule("root-folder", r"(?<![\w.~-])(?P<secret>/root)(?![\w.-])", ("/root",), "/home/user"),
    # alice@gpu-node-7:~/src$  -> user@host:~/src$
    _path_rule(
        "prompt-host",
        r"(?P<secret>[\w.-](?<![\w.@-].)[\w.-]{0,63}@[\w.-]{1,253})(?=:[~/\w.-]{0,256}[$#](?:\s|$))",
        ("@",),
        "user@host",
    ),
)


# ---------------------------------------------------------------------------------------------
# The mask

_ESCAPES = re.compile(
    r"\x1b\[[0-?]{0,64}[ -/]{0,16}[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\](?P<osc>[^\x07\x1b]{0,4096})(?:\x07|\x1b\\)?"  # OSC (a hyperlink's URL is kept)
    r"|\x1b[()*+][0-9A-Za-z]"  # character set designations, as in tput sgr0
    r"|\x1b[@-Z\\-_]?"  # other two-byte escapes, a lone ESC
)
# NULs (a UTF-16 log read as bytes) and byte-order marks are dropped too.
_DROPPED = {0: None, 0xFEFF: None}
_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


def _strip_codes(text: str) -> str:
    if "\x00" in text or "\ufeff" in text:
        text = text.translate(_DROPPED)
    return _ESCAPES.sub(r"\g<osc>", text) if "\x1b" in text else text


class Mask:
    """Masks secrets in text: `Mask(patterns)(text)`; `paths=True` also masks user names,
    home folders (/home/NAME, /Users/NAME, C:\\Users\\NAME, /root) and user@host in prompts."""

    __slots__ = ("_rules", "_hints", "_gates")

    def __init__(self, patterns: Iterable[SecretPattern], *, paths: bool = False) -> None:
        rules = list(patterns)
        if paths:
            rules.extend(_PATH_RULES)
        self._rules: tuple[SecretPattern, ...] = tuple(rules)
        by_hint: dict[str, list[int]] = {}
        for index, rule in enumerate(self._rules):
            for hint in rule.hints:
                by_hint.setdefault(hint, []).append(index)
        self._hints: tuple[tuple[str, tuple[int, ...]], ...] = tuple(
            (hint, tuple(indexes)) for hint, indexes in sorted(by_hint.items())
        )
        self._gates = _gates(list(by_hint))

    def __call__(self, text: str) -> str:
        if not text:
            return text
        clean = _strip_codes(text) if ("\x1b" in text or "\x00" in text or "\ufeff" in text) else text
        lowered = clean.lower()
        if len(lowered) != len(clean):  # a character that lower-cases to two: keep positions
            lowered = clean.translate(_ASCII_LOWER)
        found = {hint for gate, hints in self._gates if gate in lowered for hint in hints if hint in lowered}
        if not found:
            return text
        present = [(hint, indexes) for hint, indexes in self._hints if hint in found]
        size = len(clean)
        regions: dict[int, list[tuple[int, int]]] = {}
        for hint, indexes in present:
            first = lowered.find(hint)
            for index in indexes:
                regions.setdefault(index, []).extend(
                    _hint_regions(lowered, hint, first, self._rules[index].reach, size)
                )
        spans: list[tuple[int, int, str]] = []
        for index, found in regions.items():
            rule = self._rules[index]
            finditer = rule.regex.finditer
            for start, end in _merged(found):
                for match in finditer(clean, start, end):
                    low, high = match.span("secret")
                    if low < high:
                        spans.append((low, high, rule.replacement))
        if not spans:
            return text
        return _replace(clean, spans)


def _gates(hints: list[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The hints grouped under gates: a text without a gate holds none of its hints.

    A hint that contains a shorter hint is looked for only where the shorter one was found; hints
    that share their first two letters (ghp_, gho_, ghs_ ...) share those letters as a gate. So a
    text holding no hint costs one substring test per gate, not one per hint.
    """
    roots = [h for h in hints if not any(other != h and other in h for other in hints)]
    by_prefix: dict[str, list[str]] = {}
    for root in roots:
        by_prefix.setdefault(root[:2], []).append(root)
    gates: dict[str, set[str]] = {}
    for root in roots:
        shared = by_prefix[root[:2]]
        gate = root[:2] if len(shared) >= 3 else root
        gates.setdefault(gate, set())
    for hint in hints:
        for gate in gates:
            if gate in hint:
                gates[gate].add(hint)
                break
    return tuple((gate, tuple(sorted(members))) for gate, members in sorted(gates.items()))


def _hint_regions(lowered: str, hint: str, first: int, reach: int, size: int) -> Iterator[tuple[int, int]]:
    """Regions of `lowered` within `reach` of an occurrence of `hint`, merged as they are found.

    A region grows by the last occurrence within `reach` past its end, found with one rfind, so
    dense hints cost O(len / reach) searches, not one per occurrence.
    """
    width = len(hint)
    position = first
    while position >= 0:
        start = max(0, position - reach)
        end = min(size, position + width + reach)
        while end < size:
            # Occurrences at q with end - reach - width < q <= end + reach touch the region and
            # carry it further; the last of them carries it furthest.
            last = lowered.rfind(hint, end - reach - width + 1, min(size, end + reach + width))
            if last < 0:
                break
            end = min(size, last + width + reach)
        yield start, end
        position = lowered.find(hint, end - reach - width + 1) if end < size else -1


def _merged(regions: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    regions.sort()
    start, end = regions[0]
    for low, high in regions[1:]:
        if low <= end:
            end = max(end, high)
        else:
            yield start, end
            start, end = low, high
    yield start, end


def _replace(text: str, spans: list[tuple[int, int, str]]) -> str:
    """Replace the spans (overlapping ones as one; a secret wins over a path)."""
    spans.sort()
    pieces: list[str] = []
    done = 0
    cur_start, cur_end, cur_with = spans[0]
    for start, end, replacement in spans[1:]:
        overlaps = start < cur_end or (start == cur_end and replacement == MASK and cur_with == MASK)
        if overlaps:
            cur_end = max(cur_end, end)
            if replacement == MASK:
                cur_with = MASK
            continue
        pieces.append(text[done:cur_start])
        pieces.append(cur_with)
        done = cur_end
        cur_start, cur_end, cur_with = start, end, replacement
    pieces.append(text[done:cur_start])
    pieces.append(cur_with)
    pieces.append(text[cur_end:])
    return "".join(pieces)
