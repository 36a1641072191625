"""One fast pass over the raw bytes that picks the lines worth parsing.

Everything after this stage sees only candidate lines (plus a few lines after each, for messages
that span lines), so the cost of parsing, rules and facts does not grow with the noise in a log.
The anchors are literal byte strings: every rule, fact pattern and stage marker names one that its
lines must contain. An engine (scan.engines) finds them in a whole chunk at once; this module
turns what it finds into numbered lines, in order, never holding more than a chunk or two.

The scanner owns two policies that keep a huge log affordable without losing what it says:

* Budgets. Some anchors come with one: lines that only such an anchor selects are taken at most
  that many times between two commands. A verbose build repeats the same nvcc flags and include
  paths on every compile line; the first few say what there is to say.
* Repeats. A line whose text, with numbers, hashes and paths masked, is the same as one already
  taken a few times since the last command is counted, not taken again: a flood of the same error
  costs a counter, and no distinct line is ever dropped.

A command line (one holding a command anchor of knowledge/lines.toml) starts both afresh, so each
attempt of a session is seen whole; past the first FRESH_COMMANDS commands (a CI job that retries
a thousand times is one story) a message taken that often before is only counted, and the lines a
fresh start would have taken (the first few of each message since the command) are kept as quiet
lines instead (ScanSummary.quiet): their text only, for the rules' conditions on the lines of an
attempt (diagnose.engine), and only those holding a text that such a condition needs (`conditions`).
A line that no record reads but a condition may (git's "Submodule path '...': checked out" for a
rule that must not fire after it) is found by one text of what the condition needs, and kept as a
quiet line too (the text around a condition's first match in each attempt, however many attempts
came before).
Line numbers count newline bytes only: a carriage return inside a progress bar is not a line
break, which is also what an editor shows. A line longer than the reader's limit reaches the scan
in pieces (see ingest.reader); an anchor cut in two there is not seen.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from itertools import compress
from pathlib import Path
from typing import NamedTuple

from buildlog.ingest.clean import clean_line
from buildlog.scan.engines import Anchor, Engine, Occurrence, held_texts, make_engine

MAX_LINE = 16 * 1024  # longer lines are clipped around the anchor they matched
TAIL_LINES = 40
TAIL_BYTES = TAIL_LINES * MAX_LINE
REPEATS = 3  # how many times the same message is taken between two commands
FRESH_COMMANDS = 32  # commands that start budgets and repeats afresh; past them a retry loop costs counters
KEY_SPAN = 256  # the bytes of a line's start, and around each anchor on it, that make its message
TOP_REPEATS = 5
MAX_TRACKED = 10_000  # repeated messages whose first text is kept for the report
TAKEN, QUIET = "taken", "quiet"  # what a line's budgeted anchors make of it (Scanner._selects)
CONDITION_WINDOW = 48  # characters kept on each side of what a condition matched on a quiet line
CONDITION_LINES = 8  # lines that each condition's text selects in one attempt (after every command)


class Candidate(NamedTuple):
    """A selected line: its 1-based number, raw bytes, the raw lines right after it, its anchors."""

    number: int
    raw: bytes
    after: tuple[bytes, ...]
    anchors: frozenset[str] = frozenset()


class Repeat(NamedTuple):
    """A message counted rather than taken again: its first text and how often it came."""

    line: int
    text: bytes
    count: int


class QuietLines:
    """Lines counted where a fresh start at their command would have taken them: numbers and raw
    texts, in line order (a long CI log has tens of thousands: no object per line but its text,
    and a text printed by every job is one object)."""

    def __init__(self) -> None:
        self.lines = array("q")
        self.texts: list[bytes] = []

    def add(self, line: int, text: bytes) -> None:
        self.lines.append(line)
        self.texts.append(text)

    def within(self, first: int, last: int) -> list[tuple[int, bytes]]:
        """Those with numbers from `first` to `last`."""
        a, b = bisect_left(self.lines, first), bisect_right(self.lines, last)
        return list(zip(self.lines[a:b], self.texts[a:b], strict=True))

    def __len__(self) -> int:
        return len(self.lines)

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        return zip(self.lines, self.texts, strict=True)


class ScanSummary:
    """What the scan learned besides the candidates: size, counts, repeats, the last lines."""

    def __init__(self) -> None:
        self.lines = 0
        self.bytes = 0
        self.candidates = 0  # lines selected, repeats included
        self.repeated = 0  # of which counted as repeats of a message already taken
        self.tail: deque[tuple[int, bytes]] = deque(maxlen=TAIL_LINES)
        self.repeats: dict[bytes, list[int | bytes]] = {}  # message -> [first line, text, count]
        self.quiet = QuietLines()  # counted where a fresh start would take them

    def top_repeats(self, n: int = TOP_REPEATS) -> list[Repeat]:
        ranked = sorted(self.repeats.values(), key=lambda r: (-int(r[2]), int(r[0])))[:n]
        return [Repeat(int(line), bytes(text), int(count)) for line, text, count in ranked]  # type: ignore[call-overload]


# Volatile parts of a line: hex runs, numbers, and paths (Unix or Windows); masked, two lines that
# differ only there are the same message.
_VOLATILE = re.compile(rb"(?:[A-Za-z]:)?(?:[\\/][^\s\\/:'\"()\[\]]+){2,}[\\/]?|0x[0-9a-fA-F]+|[0-9a-fA-F]{8,}|\d+")


# The digits 1-9 play one part in _VOLATILE (only `0` is also a literal, in `0x`), and every digit
# ends up masked, so a word reads as the same message with them all written as `1`; its words then
# repeat (`file.cu(1111):`), and each is masked once.
_ONES = bytes.maketrans(b"23456789", b"11111111")
_WORDS = 16384  # masked words kept; the set starts afresh when full (a 100 MB flood has about 11,000)


class _MaskedWords(dict):  # type: ignore[type-arg]
    """Word (digits as `1`) -> the word masked: a word not seen before is masked when looked up."""

    __slots__ = ()

    def __missing__(self, word: bytes) -> bytes:
        if len(self) >= _WORDS:
            self.clear()
        masked = self[word] = _VOLATILE.sub(b"#", word)
        return masked


_MASKED = _MaskedWords()


def message_key(raw: bytes, around: Iterable[int] = ()) -> bytes:
    """The line as a message: volatile parts masked, spaces collapsed.

    A long line is read at its start and around each anchor on it (`around`: positions in `raw`),
    which is what rules see of it: masking a 16 KB compile line whole would cost more than the rest.
    No part of _VOLATILE matches a space, so the line is masked word by word, each distinct word
    once: `b" ".join(_VOLATILE.sub(b"#", raw).split())`, at a fifth of the cost on a flood.
    """
    if len(raw) > 4 * KEY_SPAN:
        parts = [raw[: 2 * KEY_SPAN]] + [raw[max(0, p - KEY_SPAN) : p + KEY_SPAN] for p in around]
        raw = b"\x00".join(parts)
    return b" ".join(map(_MASKED.__getitem__, raw.translate(_ONES).split()))


def essential_anchors(
    anchors: Iterable[bytes], budgets: Mapping[bytes, int]
) -> tuple[list[bytes], dict[bytes, list[bytes]]]:
    """Drop anchors that contain an unbudgeted anchor: such lines are selected by that one anyway.

    Returns the anchors kept and, for each, the dropped ones that contain it: those are present on
    a line only if the scanner finds them there when the kept one is.
    """
    raw = sorted(set(anchors))
    parsed = [Anchor.parse(a) for a in raw]
    joined = b"\0".join(p.text for p in parsed)  # NUL never occurs in an anchor: one find per free anchor
    starts = [0]
    for p in parsed[:-1]:
        starts.append(starts[-1] + len(p.text) + 1)
    implied: dict[int, int] = {}
    for i, free in enumerate(parsed):
        if budgets.get(raw[i]):
            continue
        pos = joined.find(free.text)
        while pos >= 0:
            j = bisect_right(starts, pos) - 1
            if j != i and _implies(parsed[j], free, pos - starts[j]):
                implied.setdefault(j, i)
            pos = joined.find(free.text, pos + 1)
    kept = [a for j, a in enumerate(raw) if j not in implied]
    by = {}
    for j, i in implied.items():
        while i in implied:  # A holds B holds C: A is looked for where C, the one kept, is found
            i = implied[i]
        by.setdefault(raw[i], []).append(raw[j])
    return kept, by


def _implies(anchor: Anchor, free: Anchor, offset: int) -> bool:
    """Does `free`, found at `offset` in `anchor`'s text, occur on every line where `anchor` does?"""
    if free.line_start:
        return anchor.line_start and offset == 0
    return anchor.text != free.text or anchor.line_start


class Scanner:
    """Selects candidate lines from chunks that end on a newline (see ingest.reader)."""

    def __init__(
        self,
        anchors: Sequence[str],
        budgets: Mapping[str, int] | None = None,
        resets: Iterable[str] = (),
        after: int = 6,
        engine: str = "auto",
        cache: Path | None = None,
        repeats: int = REPEATS,
        conditions: Sequence[Sequence[bytes]] | None = None,
        condition_anchors: Sequence[tuple[str, Sequence[bytes]]] = (),
    ) -> None:
        """`conditions` gives sets of texts (knowledge.conditions): a quiet line is kept only where it
        holds every text of one set (every quiet line where it is None). `condition_anchors`: each
        condition with the texts that find the lines it may match; a line only such a text finds is
        kept as a quiet line where it matches a condition that no line kept before in its attempt
        matched, and only around what it matched."""
        raw_budgets = {a.encode("utf-8"): n for a, n in (budgets or {}).items() if n}
        # one text of each set is looked for too; such an anchor never stands in for another (as a
        # budgeted one does not), so a line it alone finds is one no record reads
        named = set(anchors)
        finds = [(regex, [t.decode("utf-8") for t in texts]) for regex, texts in condition_anchors]
        only = {name for _, names in finds for name in names} - named
        never = dict.fromkeys((a.encode("utf-8") for a in only), 1)
        kept, implied = essential_anchors([*(a.encode("utf-8") for a in named), *never], {**raw_budgets, **never})
        parsed = [Anchor.parse(a) for a in kept]
        self._names = [a.decode("utf-8") for a in kept]
        self._texts = [p.text for p in parsed]
        self._implied = [[(b.lstrip(b"\n"), b.decode("utf-8")) for b in implied.get(a, ())] for a in kept]
        self._budget = {i: raw_budgets[a] for i, a in enumerate(kept) if raw_budgets.get(a)}
        self._conditional = frozenset(i for i, name in enumerate(self._names) if name in only)
        self._budget.update(dict.fromkeys(self._conditional, CONDITION_LINES))
        index_of = {name: i for i, name in enumerate(self._names)}
        # a condition anchor -> the conditions whose lines it finds (a name dropped as implied by a
        # kept anchor is found where that one is, and selects its line anyway)
        self._reads: dict[int, frozenset[int]] = {}
        for n, (_, names) in enumerate(finds):
            for name in names:
                if name in index_of and index_of[name] in self._conditional:
                    self._reads[index_of[name]] = self._reads.get(index_of[name], frozenset()) | {n}
        self.engine: Engine = make_engine(parsed, engine, frozenset(self._budget), cache)
        self.after = after
        self.repeats = repeats
        reset_names = set(resets)
        self._resets = frozenset(i for i, name in enumerate(self._names) if name in reset_names)
        # command anchors that contain a kept anchor: looked for on a line only when that one is there
        self._reset_implied = {
            i: texts
            for i, pairs in enumerate(self._implied)
            if (texts := [t for t, name in pairs if name in reset_names])
        }
        self._maybe_command = self._resets | self._reset_implied.keys()
        self._alone = [frozenset((i,)) for i in range(len(kept))]  # the anchors of a line with one
        self._plain = [i not in self._budget and i not in self._maybe_command for i in range(len(kept))]
        self._line_start = {i: len(p.text) for i, p in enumerate(parsed) if p.line_start}
        self._used: dict[int, int] = {}
        self._spent: frozenset[int] = frozenset()  # replaced, not changed: it keys the plans of _anchor_names
        # message -> (commands * width + times taken) * width + times taken or kept since the last
        # command, width = repeats + 1: a flood's repeat is one look-up and one comparison
        self._seen: dict[bytes, int] = {}
        self._commands = 0
        self._conditions = conditions
        self._condition_regexes = [re.compile(regex) for regex, _ in finds]
        self._matched: set[int] = set()  # the condition regexes a line kept in this attempt matched
        self._windows: dict[str, bytes] = {}  # a window the jobs of a CI log repeat is one object
        self._needs: _Needs | None = None  # made when a quiet line first needs it
        self._cache = cache
        self._sets: dict[frozenset[str], frozenset[str]] = {}
        # (anchors found, anchors spent) -> (their names, the texts to look for on the line, whose names)
        self._checks: dict[tuple[frozenset[int], frozenset[int]], tuple] = {}

    def _reset(self) -> None:
        """A command started: every budgeted anchor and every message may select lines again
        (for the first FRESH_COMMANDS commands: a CI job retrying a thousand times is one story;
        a condition's text every time)."""
        self._commands += 1
        self._matched.clear()
        if self._commands > FRESH_COMMANDS:  # but a condition reads every attempt whole
            for index in self._conditional.intersection(self._used):
                del self._used[index]
            self._spent = self._spent - self._conditional
            return
        self._used.clear()
        self._spent = frozenset()
        self._seen.clear()

    def scan(self, chunks: Iterable[bytes], summary: ScanSummary) -> Iterator[Candidate]:
        """Yield candidates in line order; fill `summary` as the input is consumed."""
        feed = _Feed(chunks, summary)
        number, continues, last = 1, False, 0
        recent = _Recent()  # the last chunks, enough of them to hold the tail
        for chunk in feed:
            last, number = yield from self._scan_chunk(chunk, number, continues, feed, last, summary)
            continues = not chunk.endswith(b"\n")
            recent.add(chunk)
        summary.lines = number - 1 + (1 if continues else 0)
        _fill_tail(summary, b"".join(recent.chunks)[-TAIL_BYTES - 1 :])

    def _scan_chunk(
        self, chunk: bytes, number: int, continues: bool, feed: _Feed, last: int, summary: ScanSummary
    ) -> Generator[Candidate, None, tuple[int, int]]:
        """Yield the candidates of one chunk; return the last line selected and the next chunk's first line."""
        skipped = self._spent
        found = self._occurrences(chunk, continues and number == last, continues, skipped)
        # A flood is a million lines like `file.cu(12): error: ...`, each selected by unbudgeted
        # anchors, not a command, and most counted as a repeat: that path is kept short (no list
        # of hits, counters kept locally and added to the summary before each candidate leaves, and
        # the newlines before a line counted only when its number is needed).
        budget, maybe_command, seen, repeats = self._budget, self._maybe_command, self._seen, self.repeats
        width = repeats + 1
        since = self._commands * width * width  # where this command's values start
        full = since + repeats * width + repeats  # taken `repeats` times, and as often since this command
        alone, plain, key_of, ones = self._alone, self._plain, _MASKED.__getitem__, _ONES
        budgeted, tracked = budget.keys(), summary.repeats.get
        rfind, find, count = chunk.rfind, chunk.find, chunk.count
        i, counted, size, n, short = 0, 0, len(chunk), len(found), 4 * KEY_SPAN  # `number`: the line at `counted`
        selected = repeated = 0
        last_start = -1  # where the last line selected starts
        while i < n:
            first, index = found[i]
            start = rfind(b"\n", 0, first) + 1
            end = find(b"\n", first)
            if end < 0:
                end = size
            i += 1
            if i < n and found[i][0] < end:  # more anchors on the line
                stop = bisect_left(found, (end, -1), i)  # the first occurrence past this line
                hits = found[i - 1 : stop]
                i = stop
                indices = frozenset(index for _, index in hits)
                chosen = TAKEN if budgeted.isdisjoint(indices) else self._selects(hits)
                simple = False
            else:
                indices = alone[index]
                simple = plain[index]  # one anchor, neither budgeted nor of a command
                if not simple:
                    hits = [(first, index)]
                    chosen = self._selects(hits) if index in budget else TAKEN
            if not simple and chosen is not TAKEN:
                if chosen is QUIET:  # a line only a condition reads: its text kept
                    number += count(b"\n", counted, start)
                    counted = start
                    self._condition_line(chunk, start, end, first, number, summary, indices)
                continue  # or a spent budget's line: the first few of them said it
            last_start = start
            selected += 1
            if not simple and not maybe_command.isdisjoint(indices):
                raw = chunk[start:end] if end - start <= MAX_LINE else _clip(chunk, start, end, first)
                if self._is_command(indices, raw):
                    number += count(b"\n", counted, start)
                    counted = start
                    self._reset()
                    since = self._commands * width * width
                    full = since + repeats * width + repeats
                    if not skipped <= self._spent:  # anchors left out of this search are live again
                        skipped = self._spent
                        found, i = self.engine.find(chunk, end + 1, skipped), 0
                        n = len(found)
                    summary.candidates += selected
                    summary.repeated += repeated
                    selected = repeated = 0
                    yield Candidate(number, raw, self._following(chunk, end, feed), self._anchor_names(indices, raw))
                    continue
            # counted if its message was taken `repeats` times since the last command
            if end - start <= short:  # message_key, inline: the path a flood's every line takes
                raw = chunk[start:end]
                key = b" ".join(map(key_of, raw.translate(ones).split()))
            else:
                raw = chunk[start:end] if end - start <= MAX_LINE else _clip(chunk, start, end, first)
                around = [first] if simple else [p for p, _ in hits]
                key = message_key(raw, [p - start for p in around if start <= p < start + len(raw)])
            value = seen.get(key, 0)
            if value < full:  # not yet seen `repeats` times since the last command
                if value < since:  # not since this command: how often it was taken stays
                    value = since + (value // width % width) * width
                if value - since < repeats * width:  # taken fewer times: taken again
                    seen[key] = value + width + 1
                    value = -1
                else:  # a fresh start would take it: counted, its text kept if a condition may need it
                    seen[key] = value + 1
                    text = self._kept(raw)
                    if text is not None:
                        number += count(b"\n", counted, start)
                        counted = start
                        summary.quiet.add(number, text)
            if value >= 0:  # a repeat: counted, not taken
                repeated += 1
                entry = tracked(key)
                if entry is not None:
                    entry[2] += 1  # type: ignore[operator]
                else:
                    number += count(b"\n", counted, start)
                    counted = start
                    self._track(key, raw, number, summary)
                continue
            number += count(b"\n", counted, start)
            counted = start
            summary.candidates += selected
            summary.repeated += repeated
            selected = repeated = 0
            at = first - start if simple and end - start <= MAX_LINE else -1  # raw is the line whole
            yield Candidate(number, raw, self._following(chunk, end, feed), self._anchor_names(indices, raw, at))
        summary.candidates += selected
        summary.repeated += repeated
        if last_start >= counted:
            number += count(b"\n", counted, last_start)
            counted, last = last_start, number
        elif last_start >= 0:  # a line counted or kept quiet after it was numbered last
            last = number - count(b"\n", last_start, counted)
        return last, number + count(b"\n", counted)

    def _is_command(self, indices: set[int], raw: bytes) -> bool:
        """Does a line with these anchors start a command (a command anchor, found or implied)?"""
        return bool(indices & self._resets) or any(
            text in raw for index in indices & self._reset_implied.keys() for text in self._reset_implied[index]
        )

    def _kept(self, raw: bytes) -> bytes | None:
        """A quiet line's text to keep, if it holds every text of one of the sets of `conditions`."""
        if self._conditions is None:
            return raw
        if self._needs is None:
            self._needs = _Needs(self._conditions, self.engine.name, self._cache)
        return self._needs(raw)

    def _condition_line(
        self, chunk: bytes, start: int, end: int, first: int, number: int, summary: ScanSummary, indices: frozenset[int]
    ) -> None:
        """A line that only a condition's text selected (within its budget, CONDITION_LINES in each
        attempt): kept as a quiet line where it matches a condition that no line kept before in the
        attempt matched (a condition asks only whether its attempt has such a line), as the text
        around what it matched; a text whose conditions all matched is spent for the attempt.
        """
        matched = self._matched
        open_ = {n for index in indices for n in self._reads.get(index, ())} - matched
        if open_:
            line = clean_line(chunk[start:end] if end - start <= MAX_LINE else _clip(chunk, start, end, first))
            spans = []
            for n in sorted(open_):
                match = self._condition_regexes[n].search(line)
                if match:
                    matched.add(n)
                    spans.append(match.span())
            if spans:
                lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
                window = line[max(0, lo - CONDITION_WINDOW) : hi + CONDITION_WINDOW]
                if len(self._windows) >= _KNOWN:
                    self._windows.clear()
                summary.quiet.add(number, self._windows.setdefault(window, window.encode("utf-8")))
        done = frozenset(index for index in indices if index in self._reads and self._reads[index] <= matched)
        if done:
            self._spent = self._spent | done

    def _track(self, key: bytes, raw: bytes, number: int, summary: ScanSummary) -> None:
        """The first repeat of a message: its first text is kept for the report (the first MAX_TRACKED)."""
        if len(summary.repeats) < MAX_TRACKED:
            summary.repeats[key] = [number, _whole_words(raw[:300], False, len(raw) > 300), 1]

    def _anchor_names(self, indices: frozenset[int], raw: bytes, at: int = -1) -> frozenset[str]:
        """Every anchor on the line: those found, those they imply that the line holds too, and
        budgeted ones the search left out once spent (a line selected anyway is read whole).

        `at` (where known) is where in `raw` the one anchor found on the line ends, its text's only
        occurrence in `raw`: an implied anchor holds that text once, so it can be on the line only
        where its own text before the found one is what `raw` has before it, and only the implied
        anchors whose text agrees with the two bytes before are looked for (see _near_plan).
        """
        spent = self._spent
        plan = self._checks.get((indices, spent))
        if plan is None:  # what to look for on a line with these anchors found, while these are spent
            pairs = [(self._texts[i], self._names[i]) for i in sorted(spent)]
            pairs += [pair for i in sorted(indices) for pair in self._implied[i]]
            (one,) = indices if len(indices) == 1 else (-1,)
            near = {} if one >= 0 and self._implied[one] and one not in self._line_start else None
            plan = self._checks[(indices, spent)] = (
                frozenset(self._names[i] for i in indices),
                tuple(t for t, _ in pairs),
                tuple(n for _, n in pairs),
                near,  # by the two bytes before the anchor: what to look for (see _near_plan)
                len(self._texts[one]) - 1 if near is not None else 0,
            )
        found, texts, names, near, shift = plan
        if at >= 0 and near is not None:
            start = at - shift
            before = raw[start - 2 : start] if start >= 2 else raw[:start]
            look = near.get(before)
            if look is None:
                look = near[before] = self._near_plan(next(iter(indices)), before)
            texts, names = look
        if texts:
            held = tuple(compress(names, map(raw.__contains__, texts)))
            if held:
                found = found.union(held)
        return self._sets.setdefault(found, found)  # one object per set: a flood's events share a few

    def _near_plan(self, index: int, before: bytes) -> tuple[tuple[bytes, ...], tuple[str, ...]]:
        """What to look for on a line where `index` is the one anchor found, once, with `before` the
        two bytes before it (fewer: the line starts there): the spent budgeted anchors, and those
        implied by it whose text agrees with `before` (an implied anchor holds its text once)."""
        text = self._texts[index]
        kept = [(self._texts[i], self._names[i]) for i in sorted(self._spent)]
        for implied, name in self._implied[index]:
            offsets = [o for o in range(len(implied) - len(text) + 1) if implied.startswith(text, o)]
            if len(offsets) != 1:  # it holds the text twice (or not at all): not on such a line
                continue
            head = implied[: offsets[0]]
            if len(before) < 2:  # the line starts `len(before)` bytes before the occurrence
                fits = before.endswith(head)
            else:
                fits = head.endswith(before) if len(head) >= 2 else before.endswith(head)
            if fits:
                kept.append((implied, name))
        return tuple(t for t, _ in kept), tuple(n for _, n in kept)

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

    def _selects(self, hits: list[Occurrence]) -> str | None:
        """Do a line's occurrences select it (TAKEN), keep it as a quiet line (QUIET: only a
        condition's texts are on it, and live) or neither (None: a spent budget's line, of which
        the first few said what there is to say, to a condition too)? An unbudgeted anchor always selects;
        budgeted ones only while they are live. Every line is charged to the live budgeted anchors
        on it, so an anchor that mostly rides on lines selected anyway is spent too and stops
        costing scans."""
        budget = self._budget
        live = {index for _, index in hits if index in budget and index not in self._spent}
        for index in live:
            self._used[index] = used = self._used.get(index, 0) + 1
            if used >= budget[index]:
                self._spent = self._spent | {index}
        if any(index not in budget for _, index in hits) or not live <= self._conditional:
            return TAKEN
        return QUIET if live and all(index in self._conditional for _, index in hits) else None

    def _following(self, chunk: bytes, end: int, feed: _Feed) -> tuple[bytes, ...]:
        """Up to `after` lines after the one ending at `end`, from this chunk and the ones after it."""
        if end >= len(chunk) or not self.after:  # the line goes on in the next piece, or the log ends here
            return ()
        lines = chunk[end + 1 : end + 1 + _NEAR].split(b"\n", self.after)
        if len(lines) > self.after:  # the common case, cut in one go: all the lines end within _NEAR bytes
            del lines[self.after]
            return tuple(lines)
        stop, find = end, chunk.find
        for _ in range(self.after):
            stop = find(b"\n", stop + 1)
            if stop < 0:
                break
        else:  # all the lines end in this chunk, none needs clipping
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
                lines.append(_whole_words(source[pos : pos + MAX_LINE], False, len(source) - pos > MAX_LINE))
                break
            lines.append(_whole_words(source[pos : min(stop, pos + MAX_LINE)], False, stop - pos > MAX_LINE))
            pos = stop + 1
        return tuple(lines)


# The bytes that cleaning a line removes (ingest.clean: controls, and so colour codes): text that a
# condition needs may show only once they are gone, so a quiet line holding one is kept too.
_CLEANED = tuple(bytes((b,)) for b in (*range(9), 11, 12, *range(14, 32), 127))
_KNOWN = 4096  # quiet lines whose verdict is kept; afresh when full


class _Needs:
    """Whether a line holds every text of one of some sets of texts, or a byte that cleaning removes."""

    def __init__(self, sets: Sequence[Sequence[bytes]], engine: str, cache: Path | None) -> None:
        texts = sorted({t for texts in sets for t in texts}) + list(_CLEANED)
        index = {t: i for i, t in enumerate(texts)}
        cleaned = range(len(texts) - len(_CLEANED), len(texts))
        self._sets: dict[int, list[frozenset[int]]] = {i: [frozenset((i,))] for i in cleaned}
        for needed in {frozenset(index[t] for t in texts) for texts in sets}:
            for i in needed:
                self._sets.setdefault(i, []).append(needed)
        self._held = held_texts(texts, engine, cache)
        self._known: dict[bytes, bytes | None] = {}  # a CI log's jobs print many a line the same

    def __call__(self, line: bytes) -> bytes | None:
        """The line (one object for each text) if it holds them, else None."""
        if line in self._known:
            return self._known[line]
        held = self._held(line)
        kept = line if held and any(needed <= held for i in held for needed in self._sets[i]) else None
        if len(self._known) >= _KNOWN:
            self._known.clear()
        self._known[line] = kept
        return kept


_NEAR = 8192  # bytes after a candidate that _following cuts its lines from in one go (under MAX_LINE)


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
    low, high = max(start, hit - half), min(end, hit + half)
    return _whole_words(chunk[low:high], cut_start=low > start, cut_end=high < end)


def _whole_words(piece: bytes, cut_start: bool, cut_end: bool) -> bytes:
    """A cut piece of a line without the words the cuts went through: half a token would no longer
    look like one to the secret mask, and could leave the program unmasked."""
    if cut_start:
        space = piece.find(b" ")
        piece = piece[space + 1 :] if space >= 0 else b""
    if cut_end:
        space = piece.rfind(b" ")
        piece = piece[:space] if space >= 0 else b""
    return piece


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
