"""Matching a pattern against an event and the lines right after it.

Many real messages span lines: torch prints its CUDA mismatch over three, and a terminal 80
columns wide breaks long messages wherever the edge falls. A multi-line pattern is tried on the
line joined to its successors with newlines, then, where a line fills a typical terminal width,
on the same lines rejoined without a break (a word cut at the edge reads whole again).

No pattern sees more than LIMIT characters of one line: a longer line (a pasted blob, a minified
file, a line crafted against a pattern) is searched only in windows around the anchors the rule
or fact was selected by, so the work one line can cost is bounded whatever the pattern. Where the
caller names no anchors, they are the literal texts the pattern itself requires.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from buildlog.parse.events import Event

try:
    from re import _constants as _sre
    from re import _parser as _sre_parse
except ImportError:  # Python 3.10
    import sre_constants as _sre
    import sre_parse as _sre_parse

TERMINAL_WIDTHS = frozenset({80, 100, 120, 132, 160, 200})
LIMIT = 4096  # the most characters of one line a pattern sees in one search
MAX_WINDOWS = 8  # windows searched in one long line, in line order


@dataclass(frozen=True, slots=True)
class Hit:
    """Where a pattern matched: its named groups and the line numbers it covered."""

    groups: dict[str, str]
    lines: tuple[int, ...]
    texts: tuple[str, ...]
    group_lines: dict[str, int] = field(default_factory=dict)  # line where each named group starts


def _window(event: Event) -> list[str]:
    return [event.text, *(line.strip() for line in event.after)]


def _rejoin(lines: list[str]) -> tuple[str, list[int]]:
    """Join lines, gluing a line that fills a terminal width to the next; return line starts."""
    out, starts = "", []
    for i, line in enumerate(lines):
        starts.append(len(out))
        out += line
        if i < len(lines) - 1:
            out += "" if len(line) in TERMINAL_WIDTHS else "\n"
    return out, starts


def search(
    regex: re.Pattern[str], event: Event, multiline: bool, all_matches: bool = False, anchors: Sequence[str] = ()
) -> list[Hit]:
    """Matches of `regex` that start on the event's own line (later lines only continue them).

    A line longer than LIMIT is searched only within windows around `anchors` (the scanner's, a
    leading newline is taken off; or, when none are given, around the literals the pattern
    requires); later lines are cut to LIMIT characters.
    """
    text = event.text
    if len(text) <= LIMIT:
        if not multiline:  # one short line, searched whole: what nearly every search is
            if not all_matches:
                match = regex.search(text)
                return [Hit(_groups(match), (event.line,), (text,))] if match else []
            return [Hit(_groups(match), (event.line,), (text,)) for match in regex.finditer(text)]
        spans = [(0, len(text))]
    else:
        spans = windows(text, [a.lstrip("\n") for a in anchors] or required_literals(regex.pattern, regex.flags))
    if not multiline:
        hits, done = [], -1  # where the matches of the windows before this one end
        for start, end in spans:
            last = done
            for match in regex.finditer(text, start, end):
                if match.start() < done:
                    continue  # found in the window before
                hits.append(Hit(_groups(match), (event.line,), (text,)))
                if not all_matches:
                    return hits
                last = max(last, match.end())
            done = last
        return hits
    lines = _window(event)
    seen = [lines[0], *(line[:LIMIT] for line in lines[1:])]
    joined = "\n".join(seen)
    starts = [0]
    for line in seen[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    hits = _hits_in(regex, joined, starts, lines, event, all_matches, spans)
    if not hits and any(len(line) in TERMINAL_WIDTHS for line in seen[:-1]):
        joined, starts = _rejoin(seen)
        hits = _hits_in(regex, joined, starts, lines, event, all_matches, spans)
    return hits


def windows(text: str, anchors: Sequence[str]) -> list[tuple[int, int]]:
    """The (start, end) stretches of one line that a pattern is searched in, in line order.

    The whole line when it is at most LIMIT long. Otherwise a window of LIMIT characters centred
    on each anchor, a new one only for an anchor in the last quarter of the one before or beyond
    it, at most MAX_WINDOWS; the first and the last LIMIT characters when no anchor occurs.
    """
    if len(text) <= LIMIT:
        return [(0, len(text))]
    half, spans, pos = LIMIT // 2, [], 0
    while len(spans) < MAX_WINDOWS:
        found = [(at, len(a)) for a in anchors if a and (at := text.find(a, pos)) >= 0]
        if not found:
            break
        at, size = min(found)
        start = max(0, min(at + size // 2 - half, len(text) - LIMIT))
        spans.append((start, start + LIMIT))
        pos = max(at + 1, start + LIMIT - LIMIT // 4)
    return spans or [(0, LIMIT), (len(text) - LIMIT, len(text))]


@lru_cache(maxsize=1024)
def required_literals(pattern: str, flags: int = 0) -> tuple[str, ...]:
    """Literal texts of which every match of `pattern` contains one; () where it has none worth using."""
    if flags & re.IGNORECASE:
        return ()
    try:
        best = _required(_sre_parse.parse(pattern, flags))
    except Exception:  # an unusual tree: search the whole line, as without a window
        return ()
    return tuple(sorted(best)) if best and min(map(len, best)) >= 3 else ()


def _required(items) -> frozenset[str] | None:
    """The best set of literals one of which every match of this node sequence contains."""
    best: frozenset[str] | None = None

    def consider(found: frozenset[str] | None) -> None:
        nonlocal best
        if found and (best is None or min(map(len, found)) > min(map(len, best))):
            best = found

    run: list[str] = []
    for op, av in items:
        if op is _sre.LITERAL:
            run.append(chr(av))
            continue
        consider(frozenset({"".join(run)}) if run else None)
        run = []
        if op is _sre.SUBPATTERN and not av[1] & re.IGNORECASE:
            consider(_required(av[-1]))
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and av[0] >= 1:
            consider(_required(av[2]))
        elif op is _sre.BRANCH:
            alternatives = [_required(alt) for alt in av[1]]
            if all(alternatives):
                consider(frozenset().union(*alternatives))
    consider(frozenset({"".join(run)}) if run else None)
    return best


def _hits_in(
    regex: re.Pattern[str],
    joined: str,
    starts: list[int],
    lines: list[str],
    event: Event,
    all_matches: bool,
    spans: list[tuple[int, int]],
) -> list[Hit]:
    first_end = starts[1] if len(starts) > 1 else len(joined) + 1
    line_end = first_end - 1 if len(starts) > 1 else len(joined)
    hits, done = [], -1  # where the matches of the windows before this one end
    for span_start, span_end in spans:
        # a window that reaches the end of the event's line goes on into the lines after it
        stop = len(joined) if span_end >= line_end else span_end
        last = done
        for match in regex.finditer(joined, span_start, stop):
            if match.start() >= first_end:
                break
            if match.start() < done:
                continue  # found in the window before
            last = max(last, match.end())
            covered = [
                i
                for i, s in enumerate(starts)
                if s <= max(match.end() - 1, match.start()) and _end(starts, i, joined) > match.start()
            ]
            group_lines = {
                name: event.line + bisect_right(starts, match.start(name)) - 1
                for name, value in match.groupdict().items()
                if value is not None
            }
            hits.append(
                Hit(
                    _groups(match),
                    tuple(event.line + i for i in covered),
                    tuple(lines[i] for i in covered),
                    group_lines,
                )
            )
            if not all_matches:
                return hits
        done = last
    return hits


def _end(starts: list[int], i: int, joined: str) -> int:
    return starts[i + 1] if i + 1 < len(starts) else len(joined) + 1


def _groups(match: re.Match[str]) -> dict[str, str]:
    return {k: v for k, v in match.groupdict().items() if v is not None}
