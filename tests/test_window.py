"""parse/window.py: what a pattern sees of a line and the lines after it, and that a long line is capped."""

from __future__ import annotations

import re

import pytest

from buildlog.parse.events import After, Event
from buildlog.parse.window import LIMIT, MAX_WINDOWS, required_literals, search, windows

SYMBOL = re.compile(r"(?:^|[\s:])(?P<library>[^\s:]+\.so[\w.]{0,32}): undefined symbol: (?P<symbol>\S+)")
LINE = "ImportError: /venv/lib/flash_attn_2_cuda.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"


class Recording:
    """A compiled pattern that records the stretch of text each search was given."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.regex = re.compile(pattern, flags)
        self.pattern, self.flags, self.seen = self.regex.pattern, self.regex.flags, []

    def finditer(self, text: str, pos: int = 0, endpos: int = 2**63):
        endpos = min(endpos, len(text))
        self.seen.append(endpos - pos)
        return self.regex.finditer(text, pos, endpos)

    def search(self, text: str, pos: int = 0, endpos: int = 2**63):
        endpos = min(endpos, len(text))
        self.seen.append(endpos - pos)
        return self.regex.search(text, pos, endpos)


def test_the_old_signature_still_works() -> None:
    hits = search(SYMBOL, Event("text", 7, LINE), False)
    assert [h.groups for h in hits] == [
        {"library": "/venv/lib/flash_attn_2_cuda.so", "symbol": "_ZN3c104cuda9SetDeviceEi"}
    ]
    assert hits[0].lines == (7,) and hits[0].texts == (LINE,)
    assert search(SYMBOL, Event("text", 7, LINE), False, True) == hits
    assert search(SYMBOL, Event("text", 7, "no symbol here"), False) == []


def test_a_multiline_pattern_reads_on_and_reports_the_lines_it_covered() -> None:
    regex = re.compile(r"compile\s+PyTorch \((?P<cuda>\d+\.\d+)\)")
    event = Event(
        "text",
        10,
        "mismatches the version that was used to compile",
        context=After.of(("  PyTorch (12.8). Please", "x")),
    )
    [hit] = search(regex, event, True)
    assert hit.groups == {"cuda": "12.8"} and hit.lines == (10, 11) and hit.group_lines == {"cuda": 11}


def test_a_short_line_is_searched_whole() -> None:
    assert windows("x" * LIMIT, ["x"]) == [(0, LIMIT)]
    regex = Recording(SYMBOL.pattern)
    search(regex, Event("text", 1, LINE), False, anchors=["undefined symbol:"])
    assert regex.seen == [len(LINE)]


@pytest.mark.parametrize("where", [0.0, 0.5, 1.0])
def test_a_long_line_is_searched_around_its_anchor(where: float) -> None:
    pad = 20_000
    at = int(pad * where)
    text = "x" * at + " " + LINE + " " + "y" * (pad - at)
    regex = Recording(SYMBOL.pattern)
    [hit] = search(regex, Event("text", 3, text), False, anchors=["undefined symbol:"])
    assert hit.groups["symbol"] == "_ZN3c104cuda9SetDeviceEi" and hit.texts == (text,)
    assert regex.seen and max(regex.seen) <= LIMIT


def test_without_anchors_the_pattern_s_own_literals_are_used() -> None:
    text = "x" * 10_000 + " " + LINE + " " + "y" * 10_000
    regex = Recording(SYMBOL.pattern)
    [hit] = search(regex, Event("text", 3, text), False)
    assert hit.groups["library"] == "/venv/lib/flash_attn_2_cuda.so"
    assert max(regex.seen) <= LIMIT


def test_an_anchor_repeated_all_along_the_line_gives_a_bounded_number_of_windows() -> None:
    text = "undefined symbol: " * 5_000
    spans = windows(text, ["undefined symbol:"])
    assert len(spans) == MAX_WINDOWS and all(end - start == LIMIT for start, end in spans)
    regex = Recording(SYMBOL.pattern)
    search(regex, Event("text", 1, text), False, anchors=["undefined symbol:"])
    assert len(regex.seen) <= MAX_WINDOWS and sum(regex.seen) <= MAX_WINDOWS * LIMIT


def test_no_anchor_in_a_long_line_means_its_start_and_its_end() -> None:
    text = "a" * 30_000
    assert windows(text, ["missing"]) == [(0, LIMIT), (30_000 - LIMIT, 30_000)]
    middle = "a" * 10_000 + LINE + "a" * 10_000
    assert search(SYMBOL, Event("text", 1, middle), False, anchors=["not in the line"]) == []


def test_all_matches_in_several_windows_are_each_found_once() -> None:
    flag = "-gencode arch=compute_80,code=sm_80"
    text = (
        f"nvcc {flag} " + "x" * 9_000 + f" {flag.replace('80', '90')} " + "x" * 9_000 + f" {flag.replace('80', '120')}"
    )
    regex = re.compile(r"-gencode[= ]arch=compute_\d+,code=(?P<gencode>sm_\d+)")
    hits = search(regex, Event("text", 1, text), False, all_matches=True, anchors=["-gencode"])
    assert [h.groups["gencode"] for h in hits] == ["sm_80", "sm_90", "sm_120"]
    # a window that overlaps the one before reports nothing twice
    close = f"{flag} {flag} " + "x" * 9_000
    hits = search(regex, Event("text", 1, close), False, all_matches=True, anchors=["-gencode"])
    assert [h.groups["gencode"] for h in hits] == ["sm_80", "sm_80"]


def test_a_long_first_line_still_continues_into_the_next_one() -> None:
    regex = re.compile(r"No solution found when resolving dependencies:\n\s*(?:╰─▶\s*)?(?P<why>Because [^\n]+)")
    first = "x" * 10_000 + " × No solution found when resolving dependencies:"
    event = Event(
        "text", 5, first, context=After.of(("  ╰─▶ Because there is no version of flash-attn==9.9.9" + "z" * 10_000,))
    )
    [hit] = search(regex, event, True, anchors=["No solution found when resolving"])
    assert hit.lines == (5, 6) and hit.groups["why"].startswith("Because there is no version")
    assert len(hit.groups["why"]) < LIMIT  # the line after was cut
    assert hit.texts == (first, event.after[0].strip())


def test_a_pattern_that_matches_an_empty_line_still_does() -> None:
    assert search(re.compile(r"^Killed\s*$"), Event("text", 1, "Killed"), False)[0].lines == (1,)
    assert search(re.compile(r"\d*"), Event("text", 1, ""), False, all_matches=True)[0].groups == {}


def test_required_literals() -> None:
    assert required_literals(SYMBOL.pattern) == (": undefined symbol: ",)
    assert required_literals(r"Killed signal terminated program (?P<p>\S+)|'[^']*?' died due to signal 9") == (
        "' died due to signal 9",
        "Killed signal terminated program ",
    )
    assert required_literals(r"(?:abc|de)fgh") == ("fgh",)
    assert required_literals(r"(?:abcd|efgh)x") == ("abcd", "efgh")
    assert required_literals(r"(?:abcd)+x") == ("abcd",)
    assert required_literals(r"(?:abcd)?x") == ()
    assert required_literals(r"hello world", re.IGNORECASE) == ()
    assert required_literals(r"(?i:hello) world") == (" world",)
    assert required_literals(r"\d+\.\d+") == ()
