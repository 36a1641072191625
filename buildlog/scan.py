"""One fast pass over the raw bytes that picks the lines worth parsing.

Everything after this stage sees only candidate lines (plus a few lines after each, for messages
that span lines), so the cost of parsing, rules and facts does not grow with the noise in a log.
The anchors are literal byte strings: every rule and fact pattern names one that its lines must
contain, and one compiled alternation finds them all.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

MAX_LINE = 16 * 1024  # longer lines are clipped around the anchor they matched
TAIL_LINES = 40


@dataclass(frozen=True, slots=True)
class Candidate:
    """A selected line: its 1-based number, raw bytes, and the raw lines right after it."""

    number: int
    raw: bytes
    after: tuple[bytes, ...]


@dataclass
class ScanSummary:
    """What the scan learned besides the candidates: size and the last lines of the log."""

    lines: int = 0
    bytes: int = 0
    tail: deque[tuple[int, bytes]] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))


def compile_anchors(anchors: Sequence[bytes]) -> re.Pattern[bytes]:
    """One alternation over the anchors, longest first so that prefixes do not shadow."""
    unique = sorted(set(anchors), key=lambda a: (-len(a), a))
    return re.compile(b"|".join(re.escape(a) for a in unique))


class Scanner:
    """Selects candidate lines from chunks that end on a newline (see ingest.reader)."""

    def __init__(self, anchors: Sequence[bytes], after: int = 4) -> None:
        self.pattern = compile_anchors(anchors)
        self.after = after

    def scan(self, chunks: Iterable[bytes], summary: ScanSummary) -> Iterator[Candidate]:
        """Yield candidates in line order; fill `summary` as the input is consumed."""
        pending: list[tuple[int, bytes, list[bytes]]] = []
        base = 1
        last_chunk = previous = b""
        for chunk in chunks:
            summary.bytes += len(chunk)
            if pending:
                yield from self._complete(pending, chunk)
            for cand in self._scan_chunk(chunk, base):
                if pending or len(cand[2]) < self.after:
                    pending.append(cand)
                else:
                    yield Candidate(cand[0], cand[1], tuple(cand[2]))
            base += chunk.count(b"\n")
            previous, last_chunk = last_chunk, chunk
        for number, raw, after in pending:
            yield Candidate(number, raw, tuple(after))
        summary.lines = base - 1 + (1 if last_chunk and not last_chunk.endswith(b"\n") else 0)
        _fill_tail(summary, previous[-TAIL_LINES * MAX_LINE :] + last_chunk)

    def _scan_chunk(self, chunk: bytes, base: int) -> Iterator[tuple[int, bytes, list[bytes]]]:
        search = self.pattern.search
        pos, number, counted = 0, base, 0
        size = len(chunk)
        while True:
            match = search(chunk, pos)
            if match is None:
                return
            start = chunk.rfind(b"\n", 0, match.start()) + 1
            end = chunk.find(b"\n", match.end())
            end = size if end < 0 else end
            number += chunk.count(b"\n", counted, start)
            counted = start
            raw = _clip(chunk, start, end, match.start(), match.end())
            yield number, raw, _following(chunk, end + 1, self.after)
            pos = end + 1

    def _complete(self, pending: list[tuple[int, bytes, list[bytes]]], chunk: bytes) -> Iterator[Candidate]:
        still: list[tuple[int, bytes, list[bytes]]] = []
        for number, raw, after in pending:
            after.extend(_following(chunk, 0, self.after - len(after)))
            if len(after) < self.after:
                still.append((number, raw, after))
            elif still:
                still.append((number, raw, after))  # keep line order behind an incomplete one
            else:
                yield Candidate(number, raw, tuple(after))
        pending[:] = still


def _clip(chunk: bytes, start: int, end: int, hit_start: int, hit_end: int) -> bytes:
    if end - start <= MAX_LINE:
        return chunk[start:end]
    half = MAX_LINE // 2
    return chunk[max(start, hit_start - half) : min(end, hit_end + half)]


def _following(chunk: bytes, pos: int, count: int) -> list[bytes]:
    lines: list[bytes] = []
    size = len(chunk)
    while len(lines) < count and pos < size:
        end = chunk.find(b"\n", pos)
        end = size if end < 0 else end
        lines.append(chunk[pos : min(end, pos + MAX_LINE)])
        pos = end + 1
    return lines


def _fill_tail(summary: ScanSummary, end: bytes) -> None:
    """Keep the last lines of the log: a cut-off log is often explained by where it stops."""
    if not end:
        return
    body = end[:-1] if end.endswith(b"\n") else end
    lines = body[-TAIL_LINES * MAX_LINE :].split(b"\n")[-TAIL_LINES:]
    lines = lines[-summary.lines :] if summary.lines else []
    first = summary.lines - len(lines) + 1
    for offset, raw in enumerate(lines):
        summary.tail.append((first + offset, raw[:MAX_LINE]))
