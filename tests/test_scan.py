"""The scanner: candidate lines with the right numbers, whatever the chunking."""

from __future__ import annotations

import io

import pytest

from buildlog.ingest.reader import iter_chunks
from buildlog.scan import MAX_LINE, Scanner, ScanSummary

LOG = b"ok\nerror: one\r\nok\n\x1b[31mFAILED: two\x1b[0m\nprogress 10%\rprogress 100%\nlast error: three"


def _scan(data: bytes, size: int, after: int = 2):
    summary = ScanSummary()
    cands = list(Scanner([b"error:", b"FAILED:"], after=after).scan(iter_chunks(io.BytesIO(data), size=size), summary))
    return cands, summary


@pytest.mark.parametrize("size", [1, 4, 9, 1024])
def test_line_numbers_do_not_depend_on_chunking(size):
    cands, summary = _scan(LOG, size)
    assert [c.number for c in cands] == [2, 4, 6]
    assert summary.lines == 6


def test_following_lines_are_collected_across_chunks():
    cands, _ = _scan(LOG, 3)
    assert cands[0].after == (b"ok", b"\x1b[31mFAILED: two\x1b[0m")


def test_carriage_returns_do_not_shift_numbers():
    cands, _ = _scan(b"a\rb\rc\nerror: x\n", 1024)
    assert cands[0].number == 2


def test_tail_keeps_the_last_lines():
    _, summary = _scan(LOG, 5)
    assert list(summary.tail)[-1] == (6, b"last error: three")


def test_huge_line_is_clipped_around_the_hit():
    data = b"x" * (MAX_LINE * 3) + b" error: here " + b"y" * (MAX_LINE * 3) + b"\n"
    cands, summary = _scan(data, 4096)
    assert len(cands) == 1 and len(cands[0].raw) <= MAX_LINE + 20 and b"error: here" in cands[0].raw
    assert summary.lines == 1


def test_nul_bytes_and_no_newline_at_all():
    cands, summary = _scan(b"\x00" * 10000, 1000)
    assert cands == [] and summary.lines == 1


def test_empty_input():
    cands, summary = _scan(b"", 10)
    assert cands == [] and summary.lines == 0
