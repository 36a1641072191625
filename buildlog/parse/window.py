"""Matching a pattern against an event and the lines right after it.

Many real messages span lines: torch prints its CUDA mismatch over three, and a terminal 80
columns wide breaks long messages wherever the edge falls. A multi-line pattern is tried on the
line joined to its successors with newlines, then, where a line fills a typical terminal width,
on the same lines rejoined without a break (a word cut at the edge reads whole again).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from buildlog.parse.events import Event

TERMINAL_WIDTHS = frozenset({80, 100, 120, 132, 160, 200})


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


def search(regex: re.Pattern[str], event: Event, multiline: bool, all_matches: bool = False) -> list[Hit]:
    """Matches of `regex` that start on the event's own line (later lines only continue them)."""
    if not multiline:
        matches = regex.finditer(event.text) if all_matches else filter(None, [regex.search(event.text)])
        return [Hit(_groups(m), (event.line,), (event.text,)) for m in matches]
    lines = _window(event)
    joined = "\n".join(lines)
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    hits = _hits_in(regex, joined, starts, lines, event, all_matches)
    if not hits and any(len(line) in TERMINAL_WIDTHS for line in lines[:-1]):
        joined, starts = _rejoin(lines)
        hits = _hits_in(regex, joined, starts, lines, event, all_matches)
    return hits


def _hits_in(
    regex: re.Pattern[str], joined: str, starts: list[int], lines: list[str], event: Event, all_matches: bool
) -> list[Hit]:
    first_end = starts[1] if len(starts) > 1 else len(joined) + 1
    hits = []
    for match in regex.finditer(joined):
        if match.start() >= first_end:
            break
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
            Hit(_groups(match), tuple(event.line + i for i in covered), tuple(lines[i] for i in covered), group_lines)
        )
        if not all_matches:
            break
    return hits


def _end(starts: list[int], i: int, joined: str) -> int:
    return starts[i + 1] if i + 1 < len(starts) else len(joined) + 1


def _groups(match: re.Match[str]) -> dict[str, str]:
    return {k: v for k, v in match.groupdict().items() if v is not None}
