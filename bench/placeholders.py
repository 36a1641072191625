"""How many reports hold a fix command that cannot be pasted as written.

A `$` line of a fix (a root cause's, a risk's) holds a placeholder when it keeps a `<` outside quotes (the
shell reads it as a redirect), a version left as `X.Y`, a wheel tag left as `cuXYZ`, a compiler left as
`gcc-N`, or an unfilled `{name}`; a fix's words, when they keep a `<name>`, `X.Y`, `cuXYZ` or `{name}`. Run: python -m bench.placeholders corpus/cases corpus/pasted
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from buildlog.knowledge.artefact import bundled
from buildlog.pipeline import Options, analyse
from buildlog.report.schema import Report

PLACEHOLDER = re.compile(r"\bX\.Y\b|\bcuXYZ\b|\b(?:gcc|g\+\+)-N\b|\{\w+[|}]|\bN\.M\b")
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")  # a `<` inside quotes is text to the shell ("torch<2.5")


def holds_placeholder(command: str) -> bool:
    """A command that cannot run as written: a `<` the shell would read as a redirect, or a value left open."""
    return "<" in _QUOTED.sub("''", command) or bool(PLACEHOLDER.search(command))


PROSE_HOLE = re.compile(r"<[a-z_]+>|\bX\.Y\b|\bcuXYZ\b|\{\w+[|}]")  # in a fix's words: `<` alone is text there


def commands(fix: str) -> list[str]:
    return [line.strip()[2:] for line in fix.splitlines() if line.strip().startswith("$ ")]


def bad_commands(report: Report) -> list[str]:
    fixes = [c.fix for c in report.root_causes] + [r.fix for r in report.risks]
    return [cmd for fix in fixes for cmd in commands(fix) if holds_placeholder(cmd)]


def bad_words(report: Report) -> list[str]:
    """A fix's lines other than its commands that keep a placeholder (a value the log did not give)."""
    fixes = [c.fix for c in report.root_causes] + [r.fix for r in report.risks]
    return [
        line
        for fix in fixes
        for line in fix.splitlines()
        if not line.strip().startswith("$ ") and PROSE_HOLE.search(line)
    ]


def main(folders: list[str]) -> int:
    k = bundled()
    logs = sorted(p for f in folders for p in Path(f).iterdir() if p.name.endswith((".log", ".log.gz")))
    bad = worded = 0
    for path in logs:
        report = analyse(
            path.read_bytes() if not path.name.endswith(".gz") else __import__("gzip").decompress(path.read_bytes()),
            k,
            None,
            Options(use_model=True),
        )
        found = bad_commands(report)
        if words := bad_words(report):
            worded += 1
            print(f"{path.name}: (words) {words[0]}")
        if found:
            bad += 1
            print(f"{path.name}: {found[0]}")
    print(f"{bad} of {len(logs)} reports ({bad / max(len(logs), 1):.1%}) hold a fix command with a placeholder")
    print(f"{worded} of {len(logs)} reports ({worded / max(len(logs), 1):.1%}) hold a placeholder in a fix's words")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["corpus/cases", "corpus/pasted"]))
