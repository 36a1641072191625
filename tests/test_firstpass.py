"""The first pass selects with the plan the knowledge files give, remembered or not."""

from __future__ import annotations

import subprocess
import sys

from buildlog.firstpass import anchor_plan, work_out_plan


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
        "from buildlog.scan import ScanSummary\n"
        "events = parse_events([b'$ pip install flash-attn\\nerror: externally-managed-environment\\n'], ScanSummary())\n"
        "assert [e.kind for e in events][0] == 'command', events\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('pydantic', 'buildlog.diagnose', 'buildlog.models')))\n"
        "print(' '.join(heavy))\n"
    )
    env = {"BUILDLOG_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert "buildlog.diagnose" in first.stdout  # the first run works the plan out from the rules
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert second.stdout.strip() == ""
