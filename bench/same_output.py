"""Every corpus case and paste rendered as json, terminal and markdown, to compare two commits.

    cd /tmp && PYTHONPATH=/path/to/this python -m bench.same_output /tmp/out-new
    cd /tmp && PYTHONPATH=/path/to/old:/path/to/this python -m bench.same_output /tmp/out-old
    diff -r /tmp/out-old /tmp/out-new && echo same

(from outside a checkout, so that PYTHONPATH says whose buildlog runs; the corpus is this one's)

Each log goes through the command line's own functions (settings, knowledge, "seen before" from
the bundled corpus, no user store); the terminal report without colour at width 100, and the
JSON as `explain --format json` writes it to stdout. One digest of everything is printed.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    os.environ["BUILDLOG_STORE"] = str(out / "no-store.sqlite")  # never the user's store
    os.environ.pop("NO_COLOR", None)
    from buildlog.cli.base import analyse_logs, render_reports

    digest = hashlib.sha256()
    logs = sorted([*REPO.glob("corpus/cases/*.log"), *REPO.glob("corpus/pasted/*.log")])
    for log in logs:
        reports = [a.report for a in analyse_logs((str(log),))]
        for fmt, text in (
            ("json", render_reports(reports, "json")),
            ("terminal", render_reports(reports, "terminal", False, 100)),
            ("markdown", render_reports(reports, "markdown")),
        ):
            data = text.encode("utf-8")
            (out / f"{log.parent.name}--{log.name}.{fmt}").write_bytes(data)
            digest.update(data)
    print(f"{len(logs)} logs, 3 formats: {digest.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
