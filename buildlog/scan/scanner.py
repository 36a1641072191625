"""One fast pass over the raw bytes that picks the lines worth parsing.

Everything after this stage sees only candidate lines (plus a few lines after each, for messages
that span lines), so the cost of parsing, rules and facts does not grow with the noise in a log.
The anchors are literal byte strings: every rule and fact pattern names one that its lines must
contain. An engine (scan_engine) finds them in a whole chunk at once; this module turns what it
finds into numbered lines, in order, without ever holding more than a chunk or two of the input.

Some anchors come with a budget: lines that only such an anchor selects are taken at most that
many times between two commands. A verbose build repeats the same nvcc flags and include paths
on every compile line; the first few say what there is to say, and the rest would only cost time.
The consumer calls `reset_budgets` when it sees a command, while the scan is paused on that
line, so the decision for every later line already knows about it.

Line numbers count newline bytes only: a carriage return inside a progress bar is not a line
break, which is also what an editor shows. A line longer than the reader's limit reaches the scan
in pieces (see ingest.reader); an anchor cut in two by such a piece boundary is not seen.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple

from buildlog.scan.engines import Anchor, Engine, Occurrence, make_engine

MAX_LINE = 16 * 1024  # longer lines are clipped around the anchor they matched
TAIL_LINES = 40
TAIL_BYTES = TAIL_LINES * MAX_LINE


class Candidate(NamedTuple):
    """A selected line: its 1-based number, raw bytes, and the raw lines right after it."""

    number: int
    raw: bytes
    after: tuple[bytes, ...]

    @property
    def size(self) -> int:
        """Bytes of the line and of the lines after it: what keeping the candidate costs."""
        return len(self.raw) + sum(map(len, self.after))


class ScanSummary:
    """What the scan learned besides the candidates: size and the last lines of the log.

    A plain class rather than a dataclass: it is created once, and every module imported at
    start-up adds to the time of the shortest run.
    """

    def __init__(self) -> None:
        self.lines = 0
        self.bytes = 0
        self.tail: deque[tuple[int, bytes]] = deque(maxlen=TAIL_LINES)
        self.skipped = 0  # candidate lines a consumer chose not to analyse (see firstpass)


def essential_anchors(anchors: Iterable[bytes], budgets: Mapping[bytes, int]) -> list[bytes]:
    """Drop anchors that contain an unbudgeted anchor: such lines are selected by that one anyway."""
    raw = sorted(set(anchors))
    parsed = [Anchor.parse(a) for a in raw]
    # All anchor texts in one string (NUL never occurs in an anchor): one find per free anchor.
    joined = b"\0".join(p.text for p in parsed)
    starts = [0]
    for p in parsed[:-1]:
        starts.append(starts[-1] + len(p.text) + 1)
    implied: set[int] = set()
    for i, free in enumerate(parsed):
        if budgets.get(raw[i]):
            continue
        pos = joined.find(free.text)
        while pos >= 0:
            j = bisect_right(starts, pos) - 1
            if j != i and _implies(parsed[j], free, pos - starts[j]):
                implied.add(j)
            pos = joined.find(free.text, pos + 1)
    return [a for j, a in enumerate(raw) if j not in implied]


def _implies(anchor: Anchor, free: Anchor, offset: int) -> bool:
    """Does `free`, found at `offset` in `anchor`'s text, occur on every line where `anchor` does?"""
    if free.line_start:
        return anchor.line_start and offset == 0
    return anchor.text != free.text or anchor.line_start


class Scanner:
    """Selects candidate lines from chunks that end on a newline (see ingest.reader)."""

    def __init__(
        self,
        anchors: Sequence[bytes],
        after: int = 4,
        budgets: Mapping[bytes, int] | None = None,
        engine: str | None = None,
    ) -> None:
        budgets = budgets or {}
        kept = essential_anchors(anchors, budgets)
        parsed = [Anchor.parse(a) for a in kept]
        self._budget = {i: budgets[a] for i, a in enumerate(kept) if budgets.get(a)}
        self.engine: Engine = make_engine(parsed, engine, frozenset(self._budget))
        self.after = after
        self._line_start = {i: len(p.text) for i, p in enumerate(parsed) if p.line_start}
        self._used: dict[int, int] = {}
        self._spent: set[int] = set()
        self._reset = False
        self._tail: _Tail | None = None

    def keep_last(self, count: int, max_bytes: int, summary: ScanSummary) -> None:
        """From now on yield nothing until the input ends, then only the last `count` candidates
        (at most `max_bytes` of them, counting the lines after each); the others are counted in
        summary.skipped. Selection goes on exactly as before: only building the candidates (and
        reading the lines after them) is saved, for all but the last of each chunk.
        """
        self._tail = _Tail(count, max_bytes, summary)

    def reset_budgets(self) -> None:
        """A command started: every budgeted anchor may select lines again."""
        self._used.clear()
        self._spent.clear()
        self._reset = True

    def scan(self, chunks: Iterable[bytes], summary: ScanSummary) -> Iterator[Candidate]:
        """Yield candidates in line order; fill `summary` as the input is consumed."""
        feed = _Feed(chunks, summary)
        number, continues, last = 1, False, 0
        recent = _Recent()  # the last chunks, enough of them to hold the tail
        for chunk in feed:
            last, number = yield from self._scan_chunk(chunk, number, continues, feed, last)
            continues = not chunk.endswith(b"\n")
            recent.add(chunk)
        if self._tail is not None:
            yield from self._tail.candidates()
        summary.lines = number - 1 + (1 if continues else 0)
        _fill_tail(summary, b"".join(recent.chunks)[-TAIL_BYTES - 1 :])

    def _scan_chunk(
        self, chunk: bytes, number: int, continues: bool, feed: _Feed, last: int
    ) -> Generator[Candidate, None, tuple[int, int]]:
        """Yield the candidates of one chunk; return the last line selected and the next chunk's first line."""
        skipped = frozenset(self._spent)
        found = self._occurrences(chunk, continues and number == last, continues, skipped)
        i, counted = 0, 0
        if self._tail is not None:
            return self._count_chunk(self._tail, chunk, number, counted, found, feed, last)
        while i < len(found):
            pos = found[i][0]
            start = chunk.rfind(b"\n", 0, pos) + 1
            end = chunk.find(b"\n", pos)
            end = len(chunk) if end < 0 else end
            stop = bisect_left(found, (end, -1), i)  # the first occurrence past this line
            selected = self._selects(found[i:stop])
            i = stop
            if not selected:
                continue
            number += chunk.count(b"\n", counted, start)
            counted = start
            last = number
            yield Candidate(number, _clip(chunk, start, end, pos), self._following(chunk, end, feed))
            if self._reset:
                self._reset = False
                if skipped:  # anchors left out of this search are live again
                    skipped = frozenset(self._spent)
                    found, i = self.engine.find(chunk, end + 1, skipped), 0
            if self._tail is not None:  # the consumer has what it wants from the start: count the rest
                return self._count_chunk(self._tail, chunk, number, counted, found[i:], feed, last)
        return last, number + chunk.count(b"\n", counted)

    def _occurrences(
        self, chunk: bytes, selected_before: bool, continues: bool, skip: frozenset[int]
    ) -> list[Occurrence]:
        """The anchors found in a chunk, in order, leaving out what does not start a line here.

        A chunk that `continues` a line cut by the reader starts mid-line: an anchor that must
        start a line does not, when found at its first byte; and when that line was
        `selected_before`, the rest of it is not looked at again.
        """
        begin = 0
        if selected_before:
            begin = chunk.find(b"\n") + 1
            if not begin:
                return []
        found = self.engine.find(chunk, begin, skip)
        if continues and not begin:
            line_start = self._line_start
            found = [(pos, index) for pos, index in found if line_start.get(index) != pos + 1]
        return found

    def _selects(self, hits: list[Occurrence]) -> bool:
        """Do a line's occurrences select it? An unbudgeted anchor always does; budgeted ones only
        while they are live (see _charged)."""
        budget = self._budget
        return any(index not in budget for _, index in hits) or self._charged(index for _, index in hits)

    def _charged(self, indices: Iterable[int]) -> bool:
        """Charge the budgeted anchors among `indices` that are still live; False when none is."""
        live = {index for index in indices if index not in self._spent}
        self._charge(live)
        return bool(live)

    def _count_chunk(
        self, tail: _Tail, chunk: bytes, number: int, counted: int, found: list[Occurrence], feed: _Feed, last: int
    ) -> tuple[int, int]:
        """keep_last mode: count the selected lines among `found` and build only the last ones.

        `number` is the number of the line that starts at `counted`.

        Nothing is yielded before the input ends, so most selected lines need neither bounds nor
        a number: one walk over the occurrences groups them by line (a newline between two of
        them starts the next line) and keeps the first occurrence of each line selected. This is
        what keeps a log of nothing but error lines from costing microseconds per line.
        """
        firsts: list[int] = []
        budget, find = self._budget, chunk.find
        first, prev, free = -1, -1, False
        live: list[int] = []
        for pos, index in found:
            if prev < 0 or find(b"\n", prev, pos) >= 0:  # the first occurrence on a new line
                if prev >= 0 and (free or self._charged(live)):
                    firsts.append(first)
                first, free, live = pos, False, []
            prev = pos
            if index not in budget:
                free = True
            elif not free:
                live.append(index)
        if prev >= 0 and (free or self._charged(live)):
            firsts.append(first)
        tail.skip(max(0, len(firsts) - tail.count))
        for pos in firsts[-tail.count :]:
            start = chunk.rfind(b"\n", 0, pos) + 1
            end = find(b"\n", pos)
            end = len(chunk) if end < 0 else end
            number += chunk.count(b"\n", counted, start)
            counted = start
            last = number
            tail.add(Candidate(number, _clip(chunk, start, end, pos), self._following(chunk, end, feed)))
        return last, number + chunk.count(b"\n", counted)

    def _charge(self, live: set[int]) -> None:
        for index in live:
            self._used[index] = used = self._used.get(index, 0) + 1
            if used >= self._budget[index]:
                self._spent.add(index)

    def _following(self, chunk: bytes, end: int, feed: _Feed) -> tuple[bytes, ...]:
        """Up to `after` lines after the one ending at `end`, from this chunk and the ones after it."""
        if end >= len(chunk) or not self.after:  # the line goes on in the next piece, or the log ends here
            return ()
        stop, find = end, chunk.find
        for _ in range(self.after):
            stop = find(b"\n", stop + 1)
            if stop < 0:
                break
        else:  # the common case, cut in one go: all the lines end in this chunk, none needs clipping
            if stop - end <= MAX_LINE:
                return tuple(chunk[end + 1 : stop].split(b"\n"))
        return self._following_across(chunk, end, feed)

    def _following_across(self, chunk: bytes, end: int, feed: _Feed) -> tuple[bytes, ...]:
        """_following line by line, into the chunks ahead and clipping long lines."""
        lines: list[bytes] = []
        source, pos, ahead = chunk, end + 1, 0
        while len(lines) < self.after:
            if pos >= len(source):
                nxt = feed.peek(ahead)
                if nxt is None:
                    break
                source, pos, ahead = nxt, 0, ahead + 1
                continue
            stop = source.find(b"\n", pos)
            if stop < 0:  # the last line of the log, or a line that goes on past this chunk
                lines.append(source[pos : pos + MAX_LINE])
                break
            lines.append(source[pos : min(stop, pos + MAX_LINE)])
            pos = stop + 1
        return tuple(lines)


class _Tail:
    """The last candidates of a scan, within a count and a number of bytes (see Scanner.keep_last)."""

    def __init__(self, count: int, max_bytes: int, summary: ScanSummary) -> None:
        self.count, self.max_bytes, self.summary = count, max_bytes, summary
        self._held: deque[tuple[Candidate, int]] = deque()
        self._bytes = 0

    def skip(self, n: int) -> None:
        self.summary.skipped += n

    def add(self, cand: Candidate) -> None:
        size = cand.size
        self._held.append((cand, size))
        self._bytes += size
        while len(self._held) > self.count or (self._bytes > self.max_bytes and len(self._held) > 1):
            self._bytes -= self._held.popleft()[1]
            self.skip(1)

    def candidates(self) -> Iterator[Candidate]:
        return (cand for cand, _ in self._held)


class _Feed:
    """The chunks, with a look-ahead for the lines that follow a candidate near a chunk's end."""

    def __init__(self, chunks: Iterable[bytes], summary: ScanSummary) -> None:
        self._chunks = iter(chunks)
        self._ahead: deque[bytes] = deque()
        self._summary = summary

    def __iter__(self) -> Iterator[bytes]:
        while True:
            chunk = self._ahead.popleft() if self._ahead else self._pull()
            if chunk is None:
                return
            yield chunk

    def peek(self, index: int) -> bytes | None:
        while len(self._ahead) <= index:
            chunk = self._pull()
            if chunk is None:
                return None
            self._ahead.append(chunk)
        return self._ahead[index]

    def _pull(self) -> bytes | None:
        for chunk in self._chunks:
            if chunk:
                self._summary.bytes += len(chunk)
                return chunk
        return None


def _clip(chunk: bytes, start: int, end: int, hit: int) -> bytes:
    if end - start <= MAX_LINE:
        return chunk[start:end]
    half = MAX_LINE // 2
    return chunk[max(start, hit - half) : min(end, hit + half)]


class _Recent:
    """The last chunks read, as few as hold TAIL_BYTES (a running total: chunks may be tiny)."""

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self._held = 0

    def add(self, chunk: bytes) -> None:
        self.chunks.append(chunk)
        self._held += len(chunk)
        while self._held - len(self.chunks[0]) >= TAIL_BYTES:
            self._held -= len(self.chunks.popleft())


def _fill_tail(summary: ScanSummary, end: bytes) -> None:
    """Keep the last lines of the log: a cut-off log is often explained by where it stops."""
    count = min(TAIL_LINES, summary.lines)
    if not end or not count:
        return
    window = (end[:-1] if end.endswith(b"\n") else end)[-TAIL_BYTES:]
    bounds: list[tuple[int, int]] = []
    stop = len(window)
    while len(bounds) < count:  # from the end backwards, without splitting the whole window
        newline = window.rfind(b"\n", 0, stop)
        bounds.append((newline + 1, stop))
        if newline < 0:
            break
        stop = newline
    first = summary.lines - len(bounds) + 1
    for offset, (a, b) in enumerate(reversed(bounds)):
        summary.tail.append((first + offset, window[a : min(b, a + MAX_LINE)]))
