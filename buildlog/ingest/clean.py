"""Turns one raw log line into the text a person would read on screen.

Only lines the scanner selected (and their neighbours) are cleaned: cleaning every line of a
huge log would cost as much as the scan itself.
"""

from __future__ import annotations

import re

# ANSI CSI sequences (colours, cursor moves) and OSC sequences (titles, hyperlinks).
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")

# Prefixes that CI systems, terminals and pasting add in front of what a tool printed.
# Each alternative is one layer; layers can stack (a quoted GitHub Actions log, say).
_PREFIX = re.compile(
    r"""^(?:
        \d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s     # ISO timestamp (GitHub Actions)
      | \[\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\]\s?                  # [ISO timestamp] (Jenkins timestamper)
      | \#\d+\ \d+\.\d+(?:\ |$)                                                    # Docker BuildKit "#12 3.456 "
      | \d{1,5}\.\d{2,3}\ (?=\ *\S)                                                # BuildKit's error excerpt "32.06 "
      | \[\d\d:\d\d:\d\d(?:\.\d+)?\]\s?                                           # [HH:MM:SS]
      | \d\d:\d\d:\d\d(?:\.\d+)?\ {1,2}(?=\S)                                     # HH:MM:SS
      | \[(?:rank|default)\d+\]:\s?                                               # torchrun "[rank0]:"
      | (?:>\ ?)+(?=.)                                                            # markdown quote marks
      | \s*[│┃]\ ?                                                                # box drawing borders (pip, uv, rich)
    )+""",
    re.VERBOSE,
)

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def decode(raw: bytes) -> str:
    """Decode bytes leniently: a log with broken UTF-8 is still a log."""
    return raw.decode("utf-8", "replace")


def screen_text(text: str) -> str:
    """What a terminal shows: the last carriage-return segment, no colour codes."""
    text = text.rstrip("\r\n")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        segments = [s for s in text.split("\r") if s.strip()]
        text = segments[-1] if segments else ""
    if "\x00" in text or _CONTROL.search(text):
        text = _CONTROL.sub("", text)
    return text


def strip_prefixes(text: str) -> str:
    """Remove CI timestamps, quote marks and box borders in front of the tool's own text."""
    match = _PREFIX.match(text)
    return text[match.end() :] if match else text


def clean_line(raw: bytes) -> str:
    """Screen text without prefixes, trailing spaces off; indentation is preserved.

    Secrets are masked where text leaves buildlog (report/mask.py), not here.
    """
    return strip_prefixes(screen_text(decode(raw))).rstrip()
