"""CI: GitHub annotations and job summary, JUnit XML for GitLab, and the composite action as a runner runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import CORPUS, ROOT

MISMATCH = CORPUS / "apex-pip-no-build-isolation-cuda-13-2-vs-torch-cu130.log"
SESSION = CORPUS / "flash-attn-blackwell-uv-venv-session.log"
BUILDLOG = str(Path(sys.executable).with_name("buildlog"))

# ::level key=value,key=value::message, as GitHub's runner parses a workflow command
COMMAND = re.compile(r"^::(error|warning|notice)((?: [a-z]+=[^,:]*(?:,[a-z]+=[^,:]*)*)?)::(.*)$")


def buildlog(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "buildlog", *args], capture_output=True, text=True, timeout=120,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )  # fmt: skip


def unescape(value: str) -> str:
    for code, char in (("%0A", "\n"), ("%0D", "\r"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        value = value.replace(code, char)
    return value


def annotations(stdout: str) -> list[tuple[str, dict[str, str], str]]:
    found = []
    for line in stdout.splitlines():
        match = COMMAND.match(line)
        if match:
            props = dict(p.split("=", 1) for p in match.group(2).strip().split(",") if p)
            found.append((match.group(1), {k: unescape(v) for k, v in props.items()}, unescape(match.group(3))))
    return found


def report(path: Path) -> dict:
    return json.loads(buildlog("explain", str(path), "-f", "json").stdout)


def test_github_annotations_point_at_the_evidence_and_the_summary_folds_it(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    proc = buildlog("explain", str(MISMATCH), "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == 0
    found = annotations(proc.stdout)
    expected = report(MISMATCH)
    errors = [a for a in found if a[0] == "error"]
    assert len(errors) == len(expected["root_causes"]) == 1
    level, props, message = errors[0]
    assert props["file"] == str(MISMATCH)
    assert int(props["line"]) == expected["root_causes"][0]["evidence"][0]["line"]
    assert "cuda_version_mismatch" in props["title"]
    assert "export CUDA_HOME=" in message  # the fix, whole, on the annotation
    assert all("\n" not in line for line in proc.stdout.splitlines())
    text = summary.read_text()
    assert text.startswith("# earlier step\n")  # appended, never overwritten
    assert "<details><summary>Evidence" in text and "</details>" in text
    evidence_line = expected["root_causes"][0]["evidence"][0]["line"]
    assert re.search(rf"^\s*{evidence_line} \| ", text, re.MULTILINE)


def test_github_risks_are_warnings_and_resolved_causes_are_notices():
    found = annotations(buildlog("explain", str(SESSION), "-f", "github").stdout)
    expected = report(SESSION)
    assert [a for a in found if a[0] == "error"] == []  # the session ended in success
    assert len([a for a in found if a[0] == "notice"]) == len(expected["root_causes"])
    warnings = [a for a in found if a[0] == "warning"]
    assert {a[1]["title"].split(": ", 1)[1] for a in warnings} == {r["id"] for r in expected["risks"]}


def test_no_summary_is_written_outside_github_format(tmp_path):
    summary = tmp_path / "summary.md"
    buildlog("explain", str(MISMATCH), env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert not summary.exists()


def test_junit_is_a_test_report_with_one_case_per_attempt(tmp_path):
    proc = buildlog("explain", str(MISMATCH), str(SESSION), "-f", "junit")
    root = ET.fromstring(proc.stdout)
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [str(MISMATCH), str(SESSION)]
    failed, session = suites
    failures = failed.findall("testcase/failure")
    assert len(failures) == int(failed.get("failures")) >= 1
    assert failures[-1].get("type") == "cuda_version_mismatch" and "CUDA_HOME" in failures[-1].text
    assert len(session.findall("testcase")) == len(report(SESSION)["attempts"])
    assert session.get("failures") == "0"  # resolved on the way: history, not a failure now
    assert "compiler_oom" in "".join(o.text for o in session.iter("system-out"))
    assert int(root.get("tests")) == sum(int(s.get("tests")) for s in suites)


def test_junit_carries_any_byte_of_a_log(tmp_path):
    log = tmp_path / "odd.log"
    log.write_bytes(MISMATCH.read_bytes().replace(b"nvcc", b"nv\x1bcc\x07", 1) + b"\x00\x01 <&> \xff\n")
    ET.fromstring(buildlog("explain", str(log), "-f", "junit").stdout)  # well-formed whatever the log holds


def _action() -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((ROOT / "action.yml").read_text())


def _run_step(step: dict, inputs: dict[str, str], tmp_path: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """One composite step as the runner runs it: expressions filled, env set, under bash."""
    action = _action()
    values = {name: spec.get("default", "") for name, spec in action["inputs"].items()} | inputs

    def fill(text: str) -> str:
        text = re.sub(
            r"\$\{\{\s*inputs\.([\w-]+)\s*\|\|\s*github\.action_path\s*\}\}",
            lambda m: values[m.group(1)] or str(ROOT),
            text,
        )
        return re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: values[m.group(1)], text)

    summary, output = tmp_path / "summary.md", tmp_path / "output"
    env = {**os.environ, "NO_COLOR": "1", "BUILDLOG": BUILDLOG, "GITHUB_STEP_SUMMARY": str(summary),
           "GITHUB_OUTPUT": str(output), "GITHUB_ENV": str(tmp_path / "env"), "RUNNER_TEMP": str(tmp_path)}  # fmt: skip
    env |= {k: fill(v) for k, v in step.get("env", {}).items()}
    assert step["shell"] == "bash"
    proc = subprocess.run(
        ["bash", "-e", "-c", fill(step["run"])], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    return proc, output


def _explain_step() -> dict:
    action = _action()
    assert action["runs"]["using"] == "composite"
    return next(s for s in action["runs"]["steps"] if s.get("id") == "explain")


@pytest.mark.parametrize("fail, code", [("true", 1), ("false", 0)])
def test_the_action_explains_a_log_and_fails_by_input(tmp_path, fail, code):
    proc, output = _run_step(_explain_step(), {"log": f"{SESSION}\n{MISMATCH}", "fail": fail}, tmp_path)
    assert proc.returncode == code, proc.stderr
    assert any(a[0] == "error" for a in annotations(proc.stdout))
    assert "exit-code=1" in output.read_text()
    assert "<details>" in (tmp_path / "summary.md").read_text()


def test_the_action_says_what_it_needs(tmp_path):
    proc, _ = _run_step(_explain_step(), {}, tmp_path)
    assert proc.returncode == 2 and proc.stdout.startswith("::error ")


def test_the_action_declares_what_the_steps_use():
    action = _action()
    used = set()
    for step in action["runs"]["steps"]:
        used |= set(re.findall(r"inputs\.([\w-]+)", json.dumps(step)))
    assert used == set(action["inputs"])


def test_the_action_runs_a_build_and_returns_its_exit_code(tmp_path):
    build = "echo compiling; echo \"nvcc fatal   : Unsupported gpu architecture 'compute_35'\"; exit 4"
    proc, output = _run_step(_explain_step(), {"run": build, "fail": "true"}, tmp_path)
    assert proc.returncode == 4
    assert "compiling" in proc.stdout and any(
        a[0] == "error" and "unsupported_arch" in a[1]["title"] for a in annotations(proc.stdout)
    )
    assert "exit-code=4" in output.read_text() and "log-file=buildlog-build.log" in output.read_text()
    assert (tmp_path / "buildlog-build.log").read_text().startswith("=== buildlog environment")
    assert "<details>" in (tmp_path / "summary.md").read_text()
    ok, _ = _run_step(_explain_step(), {"run": build, "fail": "false"}, tmp_path)
    assert ok.returncode == 0
