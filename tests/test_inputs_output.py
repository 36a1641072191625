"""Inputs as CI hands them out (archives, compressed logs, several at once) and output any console can take."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import pty
import select
import shutil
import subprocess
import sys
import time

import pytest

from tests.conftest import CORPUS

MISMATCH = CORPUS / "apex-pip-no-build-isolation-cuda-13-2-vs-torch-cu130.log"  # cuda_version_mismatch
NO_CUDA = CORPUS / "cmake-no-cuda-compiler-found.log"  # cuda_home_missing
SESSION = CORPUS / "flash-attn-blackwell-uv-venv-session.log"


def buildlog(*args: str, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    full = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "buildlog", *args], capture_output=True, env=full, timeout=120, **kw
    )  # fmt: skip


def causes(report: dict) -> list[str]:
    return [c["id"] for c in report["root_causes"]]


def test_a_github_actions_log_archive_is_every_log_in_it(tmp_path):
    # The layout of GitHub's "Download log archive": the whole job at the top, one file per step.
    job = tmp_path / "layout"
    (job / "build").mkdir(parents=True)
    (job / "0_build.txt").write_bytes(MISMATCH.read_bytes())
    (job / "build" / "1_Set up job.txt").write_text("Current runner version: '2.321.0'\nOperating System\n")
    (job / "build" / "2_Run pip install.txt").write_bytes(MISMATCH.read_bytes())
    (job / "build" / "3_Configure.txt").write_bytes(NO_CUDA.read_bytes())
    (job / "build" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    archive = shutil.make_archive(str(tmp_path / "logs_42"), "zip", job)

    proc = buildlog("explain", archive, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    reports = json.loads(proc.stdout)
    by_name = {r["source"].rsplit(":", 1)[1]: r for r in reports}
    assert set(by_name) == {
        "0_build.txt",
        "build/1_Set up job.txt",
        "build/2_Run pip install.txt",
        "build/3_Configure.txt",
    }
    assert causes(by_name["build/2_Run pip install.txt"]) == causes(by_name["0_build.txt"]) == ["cuda_version_mismatch"]
    assert causes(by_name["build/3_Configure.txt"]) == ["cuda_home_missing"]
    assert by_name["build/1_Set up job.txt"]["status"] != "failure"


@pytest.mark.parametrize("kind", ["gz", "xz", "bz2", "zst"])
def test_compressed_logs_read_as_the_log_inside(tmp_path, kind):
    data = MISMATCH.read_bytes()
    if kind == "zst":
        zstandard = pytest.importorskip("zstandard")
        packed = zstandard.ZstdCompressor().compress(data)
    else:
        packed = {"gz": gzip.compress, "xz": lzma.compress, "bz2": bz2.compress}[kind](data)
    path = tmp_path / "build.bin"  # the name says nothing: the first bytes do
    path.write_bytes(packed)
    plain = json.loads(buildlog("explain", str(MISMATCH), "-f", "json").stdout)
    proc = buildlog("explain", str(path), "-f", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert causes(report) == causes(plain) == ["cuda_version_mismatch"]
    assert report["lines"] == plain["lines"]
    assert [e["line"] for e in report["root_causes"][0]["evidence"]] == [
        e["line"] for e in plain["root_causes"][0]["evidence"]
    ]


def test_a_damaged_archive_is_a_one_line_error(tmp_path):
    path = tmp_path / "broken.xz"
    path.write_bytes(lzma.compress(MISMATCH.read_bytes())[:200])
    proc = buildlog("explain", str(path))
    assert proc.returncode == 2 and proc.stderr.decode().startswith("buildlog: ") and b"Traceback" not in proc.stderr


def test_several_logs_at_once_and_fail_when_any_failed(tmp_path):
    proc = buildlog("explain", str(SESSION), str(NO_CUDA), "-f", "json", "--fail")
    assert proc.returncode == 1
    reports = json.loads(proc.stdout)
    assert [r["status"] for r in reports] == ["success", "failure"]
    assert buildlog("explain", str(SESSION), "--fail").returncode == 0


def test_a_url_says_to_download_it_first():
    proc = buildlog("explain", "https://github.com/o/r/actions/runs/1/job/2")
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "URL" in err and "download" in err and err.count("\n") == 1


def test_stdin_on_a_terminal_gets_a_hint_and_still_reads():
    main, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "buildlog", "explain", "-", "-f", "json"], stdin=secondary,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    os.close(secondary)
    try:
        ready, _, _ = select.select([proc.stderr], [], [], 30)
        assert ready, "no hint on stderr while waiting for the terminal"
        hint = os.read(proc.stderr.fileno(), 4096).decode()
        assert "Ctrl-D" in hint
        os.write(main, b"CMake Error: No CMAKE_CUDA_COMPILER could be found.\n")
        time.sleep(0.2)
        os.write(main, b"\x04")  # end of input, as the user types it
        out, _ = proc.communicate(timeout=60)
    finally:
        os.close(main)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert json.loads(out)["source"] == "<stdin>"


def test_piped_stdin_gets_no_hint():
    proc = buildlog("explain", "-", input=NO_CUDA.read_bytes())
    assert proc.returncode == 0 and b"Ctrl-D" not in proc.stderr


@pytest.mark.parametrize(
    "env",
    [
        {"PYTHONIOENCODING": "ascii"},
        {"PYTHONIOENCODING": "latin-1"},
        {"PYTHONIOENCODING": "cp1252"},
        {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""},
    ],
)
@pytest.mark.parametrize("command", [("explain", str(SESSION)), ("corpus", "list")])
def test_any_console_encoding_gets_a_readable_report(env, command):
    if command[0] == "corpus":
        added = buildlog("corpus", "add", str(MISMATCH), "--fix", "CUDA 13.2 → 13.0 “matched” ✓")
        assert added.returncode == 0, added.stderr
    proc = buildlog(*command, env=env)
    assert proc.returncode == 0, proc.stderr
    encoding = env.get("PYTHONIOENCODING") or "ascii"
    text = proc.stdout.decode(encoding)  # what the console can show, nothing it cannot
    assert len(text.splitlines()) > 3
    if command[0] == "explain":
        assert text.startswith(("v The build succeeded", "✓ The build succeeded"))


def test_output_files_beside_the_terminal_and_quiet(tmp_path):
    proc = buildlog(
        "explain", str(MISMATCH), "-o", f"json:{tmp_path / 'r.json'}", "-o", f"markdown:{tmp_path / 'r.md'}",
        "--output", f"terminal:{tmp_path / 'r.txt'}",
    )  # fmt: skip
    assert proc.returncode == 0 and b"cuda_version_mismatch" in proc.stdout
    assert causes(json.loads((tmp_path / "r.json").read_text())) == ["cuda_version_mismatch"]
    assert (tmp_path / "r.md").read_text().startswith("## ✗")
    assert (
        "\x1b[" not in (tmp_path / "r.txt").read_text() and "cuda_version_mismatch" in (tmp_path / "r.txt").read_text()
    )

    quiet = buildlog("explain", str(MISMATCH), "--quiet", "-o", f"json:{tmp_path / 'q.json'}", "--fail")
    assert quiet.returncode == 1 and quiet.stdout == b"" and quiet.stderr == b""
    assert (tmp_path / "q.json").exists()


@pytest.mark.parametrize("spec", ["json", "yaml:out.yaml", "json:"])
def test_a_bad_output_spec_is_a_usage_error(spec):
    proc = buildlog("explain", str(MISMATCH), "-o", spec)
    assert proc.returncode == 2 and b"FORMAT:FILE" in proc.stderr or b"unknown format" in proc.stderr


def test_columns_is_the_width_when_piped_and_commands_stay_whole():
    proc = buildlog(
        "explain", str(CORPUS / "mamba-ssm-arch-linux-gcc14-cuda-12-6-minor-mismatch-noise.log"), env={"COLUMNS": "40"}
    )
    lines = proc.stdout.decode().splitlines()
    commands = [line.strip()[2:] for line in lines if line.strip().startswith("$ ")]
    prose = [line for line in lines if not line.strip().startswith("$ ")]
    assert commands and max(map(len, prose)) <= 40
    report = json.loads(
        buildlog(
            "explain", str(CORPUS / "mamba-ssm-arch-linux-gcc14-cuda-12-6-minor-mismatch-noise.log"), "-f", "json"
        ).stdout
    )
    solved = {i["cause"] for i in report["incidents"] if i["resolved_by"]}
    shown = [c for c in report["root_causes"] if c["id"] not in solved]  # a solved cause is summarised, not fixed
    fixes = "\n".join(c["fix"] for c in shown) + "\n" + "\n".join(r["fix"] for r in report["risks"])
    wanted = [line[2:] for line in fixes.splitlines() if line.startswith("$ ")]
    assert any(len(c) > 40 for c in wanted)
    assert set(wanted) <= set(commands)  # every command of every fix, on one line
