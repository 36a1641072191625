"""The command line: exit codes, input forms and messages, through click's runner and a real process."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from buildlog.cli import main

MISMATCH = (
    "$ pip install --no-build-isolation flash-attn\n"
    "torch.__version__  = 2.9.1+cu128\n"
    "RuntimeError:\n"
    "The detected CUDA version (13.0) mismatches the version that was used to compile\n"
    "PyTorch (12.8). Please make sure to use the same CUDA versions.\n"
)


@pytest.fixture
def runner():
    return CliRunner()


def _json(result):
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_explain_file_json(runner, tmp_path):
    log = tmp_path / "build.log"
    log.write_text(MISMATCH)
    data = _json(runner.invoke(main, ["explain", str(log), "--format", "json"]))
    assert data["root_causes"][0]["id"] == "cuda_version_mismatch"
    assert 4 in [e["line"] for e in data["root_causes"][0]["evidence"]]
    assert "CUDA_HOME=/usr/local/cuda-12.8" in data["root_causes"][0]["fix"]


def test_explain_stdin_and_gzip(runner, tmp_path):
    data = _json(runner.invoke(main, ["explain", "-", "-f", "json"], input=MISMATCH))
    assert data["status"] == "failure"
    gz = tmp_path / "build.log.gz"
    gz.write_bytes(gzip.compress(MISMATCH.encode()))
    assert _json(runner.invoke(main, ["explain", str(gz), "-f", "json"]))["lines"] == 5


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_bad_input_exits_2_with_one_line(runner, tmp_path, kind):
    target = tmp_path / "x.log"
    if kind == "directory":
        target.mkdir()
    result = runner.invoke(main, ["explain", str(target)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "buildlog:" in result.output
    assert "Traceback" not in result.output


def test_unreadable_file(runner, tmp_path):
    if sys.platform == "win32" or (hasattr(__import__("os"), "geteuid") and __import__("os").geteuid() == 0):
        pytest.skip("root reads every file")
    target = tmp_path / "secret.log"
    target.write_text("x")
    target.chmod(0)
    assert runner.invoke(main, ["explain", str(target)]).exit_code == 2


def test_empty_and_garbage_input(runner):
    assert "empty" in _json(runner.invoke(main, ["explain", "-", "-f", "json"], input=""))["status"]
    garbage = bytes(range(256)) * 100
    data = _json(runner.invoke(main, ["explain", "-", "-f", "json"], input=garbage))
    assert data["status"] in ("unknown", "empty")


def test_fail_flag_sets_exit_code(runner, tmp_path):
    log = tmp_path / "build.log"
    log.write_text(MISMATCH)
    assert runner.invoke(main, ["explain", str(log), "--fail"]).exit_code == 1


def test_markdown_and_terminal(runner, tmp_path):
    log = tmp_path / "build.log"
    log.write_text(MISMATCH)
    md = runner.invoke(main, ["explain", str(log), "-f", "markdown"])
    assert md.exit_code == 0 and "### Cause 1: `cuda_version_mismatch`" in md.output
    term = runner.invoke(main, ["explain", str(log), "--no-color"])
    assert term.exit_code == 0 and "cuda_version_mismatch" in term.output and "\x1b[" not in term.output


def test_schema_causes_rules_commands(runner):
    schema = json.loads(runner.invoke(main, ["schema"]).output)
    assert schema["title"] == "buildlog report"
    causes = runner.invoke(main, ["causes"]).output
    assert "cuda_version_mismatch" in causes and "build_interrupted" in causes
    assert "torch-cuda-major-mismatch" in runner.invoke(main, ["rules", "--cause", "cuda_version_mismatch"]).output


def test_bad_option_is_a_usage_error(runner):
    assert runner.invoke(main, ["explain", "-", "--format", "yaml"]).exit_code == 2


def test_real_process_module_entry_point(tmp_path):
    log = tmp_path / "build.log"
    log.write_text(MISMATCH)
    proc = subprocess.run([sys.executable, "-m", "buildlog", "explain", str(log)], capture_output=True, text=True)
    assert proc.returncode == 0 and "cuda_version_mismatch" in proc.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "buildlog", "explain", str(tmp_path / "no.log")], capture_output=True, text=True
    )
    assert missing.returncode == 2 and missing.stderr.startswith("buildlog:") and "Traceback" not in missing.stderr
    failed = subprocess.run([sys.executable, "-m", "buildlog", "explain", str(log), "--fail"], capture_output=True)
    assert failed.returncode == 1


def test_a_big_input_draws_a_progress_bar_on_a_terminal_only(tmp_path):
    import os
    import pty

    from buildlog.ingest.reader import PROGRESS_MIN

    log = tmp_path / "big.log"
    with log.open("wb") as f:
        line = b"[12/85] c++ -O3 -Werror=return-type -c x.cpp -o x.o\n"
        f.write(line * (PROGRESS_MIN // len(line) + 1))
    argv = [sys.executable, "-m", "buildlog", "explain", str(log), "-f", "json"]
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    drawn = b""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the terminal closes when the process ends
            break
        if not data:
            break
        drawn += data
    proc.wait()
    os.close(master)
    assert proc.returncode == 0 and b"reading big.log" in drawn
    piped = subprocess.run(argv, capture_output=True)
    assert piped.returncode == 0 and piped.stderr == b""
