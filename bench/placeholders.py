"""How many reports hold a fix command that cannot be pasted as written.

A `$` line of a fix (a root cause's, a risk's) holds a placeholder when it keeps a `<...>` (the shell
reads `<` as a redirect), a version left as `X.Y`, a wheel tag left as `cuXYZ`, a compiler left as
`gcc-N`, or an unfilled `{name}`. Run: python -m bench.placeholders corpus/cases corpus/pasted
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from buildlog.knowledge.artefact import bundled
from buildlog.pipeline import Options, analyse
from buildlog.report.schema import Report

PLACEHOLDER = re.compile(r"<|\bX\.Y\b|\bcuXYZ\b|\b(?:gcc|g\+\+)-N\b|\{\w+[|}]|\bN\.M\b")


def commands(fix: str) -> list[str]:
    return [line.strip()[2:] for line in fix.splitlines() if line.strip().startswith("$ ")]


def bad_commands(report: Report) -> list[str]:
    fixes = [c.fix for c in report.root_causes] + [r.fix for r in report.risks]
    return [cmd for fix in fixes for cmd in commands(fix) if PLACEHOLDER.search(cmd)]


def main(folders: list[str]) -> int:
    k = bundled()
    logs = sorted(p for f in folders for p in Path(f).iterdir() if p.name.endswith((".log", ".log.gz")))
    bad = 0
    for path in logs:
        found = bad_commands(
            analyse(
                path.read_bytes()
                if not path.name.endswith(".gz")
                else __import__("gzip").decompress(path.read_bytes()),
                k,
                None,
                Options(use_model=True),
            )
        )
        if found:
            bad += 1
            print(f"{path.name}: {found[0]}")
    print(f"{bad} of {len(logs)} reports ({bad / max(len(logs), 1):.1%}) hold a fix command with a placeholder")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["corpus/cases", "corpus/pasted"]))
