"""The first pass selects with the plan the knowledge files give, remembered or not."""

from __future__ import annotations

import subprocess
import sys

from buildlog.firstpass import anchor_plan, parse_events, work_out_plan
from buildlog.scan.scanner import ScanSummary


def test_remembered_plan_is_the_plan_the_knowledge_gives(tmp_path, monkeypatch):
    monkeypatch.setenv("BUILDLOG_CACHE_DIR", str(tmp_path))
    anchor_plan.cache_clear()
    try:
        fresh = anchor_plan()
        assert list(tmp_path.glob("anchors-*"))
        anchor_plan.cache_clear()
        again = anchor_plan()
    finally:
        anchor_plan.cache_clear()
    words, budgets = work_out_plan()
    assert fresh == again == (tuple(words), budgets)
    assert set(budgets) < set(words) and all(n > 0 for n in budgets.values())


def test_a_remembered_plan_needs_neither_rules_engine_nor_report_models(tmp_path):
    """What lets a run start reading before the rest of buildlog is loaded."""
    code = (
        "import sys\n"
        "from buildlog.firstpass import parse_events\n"
        "from buildlog.scan.scanner import ScanSummary\n"
        "events = parse_events([b'$ pip install flash-attn\\nerror: externally-managed-environment\\n'], ScanSummary())\n"
        "assert [e.kind for e in events][0] == 'command', events\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('pydantic', 'buildlog.diagnose', 'buildlog.report.schema')))\n"
        "print(' '.join(heavy))\n"
    )
    env = {"BUILDLOG_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert "buildlog.diagnose" in first.stdout  # the first run works the plan out from the rules
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert second.stdout.strip() == ""


def _flood(n: int, width: int = 40) -> bytes:
    lines = [b"$ pip install flash-attn"]
    lines += [b"src/kernel_%d.cu(%d): error: identifier %s is undefined" % (i, i, b"x" * width) for i in range(n)]
    lines += [b"ninja: build stopped: subcommand failed."]
    return b"\n".join(lines) + b"\n"


def test_a_flooded_log_keeps_its_first_and_last_candidates(monkeypatch):
    from buildlog import firstpass

    monkeypatch.setattr(firstpass, "KEEP_FIRST", 50)
    monkeypatch.setattr(firstpass, "KEEP_LAST", 20)
    summary = ScanSummary()
    events = parse_events([_flood(1000)], summary)
    numbers = [e.line for e in events]
    assert len(events) == 70 and summary.skipped == 1002 - 70
    assert numbers[:3] == [1, 2, 3] and numbers[49] == 50
    assert numbers[50] == 1002 - 19 and numbers[-1] == 1002  # the last twenty, up to ninja's last word
    assert events[0].kind == "command" and "build stopped" in events[-1].text
    assert summary.lines == 1002


def test_the_bound_counts_bytes_too(monkeypatch):
    from buildlog import firstpass

    monkeypatch.setattr(firstpass, "KEEP_FIRST_BYTES", 20_000)
    monkeypatch.setattr(firstpass, "KEEP_LAST_BYTES", 10_000)
    summary = ScanSummary()
    events = parse_events([_flood(400, width=2_000)], summary)
    kept = sum(len(e.text) for e in events)
    assert summary.skipped > 0 and kept < 40_000 and events[-1].line == 402


def test_a_log_below_the_bound_loses_nothing():
    summary = ScanSummary()
    events = parse_events([_flood(300)], summary)
    assert summary.skipped == 0 and len(events) == 302


def test_the_last_candidates_are_the_same_whatever_the_chunks(monkeypatch):
    """Only the last candidates of each chunk are built once the first ones are in: the result
    must not depend on where the chunks end (the lines after a candidate may be in the next one)."""
    import io

    from buildlog import firstpass
    from buildlog.ingest.reader import iter_chunks

    monkeypatch.setattr(firstpass, "KEEP_FIRST", 30)
    monkeypatch.setattr(firstpass, "KEEP_LAST", 25)
    data = _flood(500)
    whole, pieces = ScanSummary(), ScanSummary()
    expected = parse_events([data], whole)
    got = parse_events(iter_chunks(io.BytesIO(data), size=997), pieces)
    assert got == expected and pieces.skipped == whole.skipped == 502 - 55
    assert [e.line for e in got[30:]] == list(range(478, 503))
    assert all(len(e.after) == 6 for e in got[30:-6])
