"""GitLab CI: the report in the job log's collapsible sections, as a GitLab runner's job gets it."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time

from rich.console import Console

from buildlog.render.gitlab import render_gitlab
from buildlog.report.schema import Evidence, RootCause
from tests.conftest import CORPUS
from tests.sample_report import sample_report

MISMATCH = CORPUS / "apex-pip-no-build-isolation-cuda-13-2-vs-torch-cu130.log"
SESSION = CORPUS / "flash-attn-blackwell-uv-venv-session.log"
PY = sys.executable

# A marker as GitLab's job log reads one: at the start of a line, ESC[0K, section_start or
# section_end, a unix time, a name, options for a start, CR ESC[0K, then the header text.
MARKER = re.compile(r"^\x1b\[0Ksection_(start|end):(\d+):([A-Za-z0-9_.-]+)(\[collapsed=true\])?\r\x1b\[0K(.*)$")

# What GitLab's parser takes for a marker wherever it stands in a line.
ANYWHERE = re.compile(r"section_(?:start|end):\d+:[A-Za-z0-9_.-]+(?:\[[^\]]*\])?\r\x1b\[0K")


def buildlog(*args: str, env: dict[str, str] | None = None, cwd=None) -> subprocess.CompletedProcess:
    """The command's output as the runner keeps it: bytes, a carriage return left a carriage return."""
    base = {k: v for k, v in os.environ.items() if k not in ("GITLAB_CI", "NO_COLOR")}
    proc = subprocess.run(
        [PY, "-m", "buildlog", *args], capture_output=True, timeout=180, cwd=cwd, env={**base, **(env or {})}
    )
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def sections(text: str) -> list[dict]:
    """Every section of a job log, checked as GitLab nests them: each end closes the innermost start."""
    found, stack = [], []
    for number, line in enumerate(text.split("\n")):
        assert len(ANYWHERE.findall(line)) <= 1, line
        match = MARKER.match(line)
        if not match:
            assert not ANYWHERE.search(line), f"a marker GitLab would read inside a line: {line!r}"
            for section in stack:
                section["body"].append(line)
            continue
        kind, when, name, collapsed, header = match.groups()
        if kind == "start":
            assert not header.startswith(" ") and header, line
            section = {"name": name, "time": int(when), "collapsed": bool(collapsed), "header": header, "body": [],
                       "depth": len(stack), "line": number}  # fmt: skip
            assert name not in {s["name"] for s in found}, f"section name used twice: {name}"
            found.append(section)
            stack.append(section)
        else:
            assert stack and stack[-1]["name"] == name, f"section_end of {name} closes {stack and stack[-1]['name']}"
            assert not collapsed and header == "", line
            assert int(when) >= stack[-1]["time"]
            for section in stack:
                section["body"].append("")
            stack.pop()
    assert not stack, f"sections never closed: {[s['name'] for s in stack]}"
    return found


def test_under_gitlab_ci_the_report_is_in_a_section_with_its_evidence_folded():
    before = int(time.time())
    proc = buildlog("explain", str(MISMATCH), env={"GITLAB_CI": "true", "NO_COLOR": "1"})
    after = int(time.time())
    assert proc.returncode == 0, proc.stderr
    found = sections(proc.stdout)
    report, *inner = found
    assert report["depth"] == 0 and not report["collapsed"]  # the verdict stays open where the job failed
    assert "buildlog:" in report["header"] and "CUDA" in report["header"]
    assert all(before <= s["time"] <= after for s in found)
    evidence = [s for s in inner if "_evidence_" in s["name"]]
    assert evidence and all(s["collapsed"] and s["depth"] == 1 for s in evidence)
    assert re.search(r"Evidence: \d+ lines? from line \d+", evidence[0]["header"])
    expected = json.loads(buildlog("explain", str(MISMATCH), "-f", "json").stdout)["root_causes"]
    assert len(evidence) == len([c for c in expected if c["evidence"]])
    body = "\n".join(evidence[0]["body"])
    for line in expected[0]["evidence"]:  # the cause's own evidence lines, with their numbers, are folded here
        assert re.search(rf"^\s*{line['line']} │ ", body, re.MULTILINE) and line["text"][:30] in body
    outside = [line for line in report["body"] if not any(line in s["body"] for s in evidence)]
    assert any(line.strip().startswith("$ ") for line in outside)  # the fix is visible, not folded
    assert "\x1b[" not in proc.stdout.replace("\x1b[0K", "")  # NO_COLOR: markers only


def test_a_session_folds_its_timeline_and_facts_and_keeps_colour_for_the_job_log():
    proc = buildlog("explain", str(SESSION), env={"GITLAB_CI": "true"})
    found = sections(proc.stdout)
    folded = {s["name"].rsplit("_", 1)[-1]: s for s in found if s["collapsed"]}
    assert {"timeline", "facts"} <= set(folded)
    assert "Timeline" in folded["timeline"]["header"] and any("#2" in line for line in folded["timeline"]["body"])
    assert re.search(r"\x1b\[[0-9;]*m", proc.stdout)  # GitLab shows colours, though stdout is no terminal


def test_without_gitlab_ci_or_with_an_explicit_format_there_are_no_markers(tmp_path):
    plain = buildlog("explain", str(MISMATCH), env={"NO_COLOR": "1"})
    forced = buildlog("explain", str(MISMATCH), "--format", "terminal", env={"GITLAB_CI": "true", "NO_COLOR": "1"})
    for proc in (plain, forced):
        assert proc.returncode == 0 and "section_start" not in proc.stdout and "CUDA" in proc.stdout
    asked = buildlog("explain", str(MISMATCH), "--format", "gitlab", "-o", f"gitlab:{tmp_path / 'r.txt'}")
    assert sections(asked.stdout) and sections((tmp_path / "r.txt").read_bytes().decode())
    assert "\x1b[" not in (tmp_path / "r.txt").read_bytes().decode().replace("\x1b[0K", "")  # a file: no colour


def test_run_under_gitlab_puts_the_build_in_a_section_and_keeps_the_log_clean(tmp_path):
    failing = "import sys; print('building ext'); print(\"nvcc fatal   : Unsupported gpu architecture 'compute_35'\"); sys.exit(3)"
    proc = buildlog("run", "--log", "b.log", "--", PY, "-c", failing, cwd=tmp_path, env={"GITLAB_CI": "true"})
    assert proc.returncode == 3
    build, report, *_ = sections(proc.stdout)
    assert build["name"].startswith("buildlog_build_") and build["header"].startswith("$ ") and "-c" in build["header"]
    assert "building ext" in build["body"]
    assert report["name"].startswith("buildlog_report") and report["line"] > build["line"]
    assert "section_" not in (tmp_path / "b.log").read_text()  # markers are for the job log, not the saved log


def _render(report, now=1_700_000_000) -> str:
    console = Console(file=io.StringIO(), width=100, color_system=None, highlight=False)
    return render_gitlab([report], console, now)


def test_the_renderer_is_a_function_of_the_reports_and_the_time():
    report = sample_report()
    first, again, later = _render(report), _render(report), _render(report, now=1_700_000_999)
    assert first == again and first != later
    assert {s["time"] for s in sections(first)} == {1_700_000_000}
    assert first.replace("1700000000", "1700000999") == later
    console = Console(file=io.StringIO(), width=100, color_system=None, highlight=False)
    two = sections(render_gitlab([report, report], console, 1_700_000_000))  # several logs: names stay unique
    assert [s["depth"] for s in two].count(0) == 2


def test_log_text_and_names_cannot_open_or_close_a_section():
    """A GitLab job log explained holds marker text; a name may hold a line break: neither breaks the sections."""
    report = sample_report()
    hostile = "\x1b[0Ksection_end:1700000000:buildlog_report_1\r\x1b[0K"
    cause = RootCause(id="compiler_oom", title="The compiler ran out of memory" + hostile, confidence=0.9,
                      evidence=[Evidence(line=7, text=hostile), Evidence(line=8, text="section_start:1:x\r\x1b[0Kfake")])  # fmt: skip
    tame = RootCause(id="compiler_oom", title="The compiler ran out of memory", confidence=0.9,
                     evidence=[Evidence(line=7, text="killed"), Evidence(line=8, text="fake")])  # fmt: skip
    hostile_report = report.model_copy(
        update={"root_causes": [cause], "source": "job\r\n12.log", "headline": "bad\nnews", "status": "failure"}
    )
    tame_report = report.model_copy(update={"root_causes": [tame], "status": "failure"})
    found = sections(_render(hostile_report))
    assert [s["name"] for s in found] == [s["name"] for s in sections(_render(tame_report))]
    assert "buildlog_report_1700000000_1_evidence_1" in [s["name"] for s in found]
    assert "bad news" in found[0]["header"]
