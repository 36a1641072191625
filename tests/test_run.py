"""`buildlog run` as a user runs it: a real subprocess, a real pseudo-terminal, a real Ctrl-C."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from buildlog.probe import HEADER_BEGIN, HEADER_END

PY = sys.executable
FAILING = "import sys; print('building ext'); print(\"nvcc fatal   : Unsupported gpu architecture 'compute_35'\"); sys.exit(3)"


def buildlog(*args: str, cwd: Path, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PY, "-m", "buildlog", *args], capture_output=True, text=True, timeout=180, cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", **(env or {})}, **kw,
    )  # fmt: skip


def test_a_failing_build_streams_logs_explains_and_keeps_its_exit_code(tmp_path):
    proc = buildlog("run", "--log", "b.log", "--", PY, "-c", FAILING, cwd=tmp_path, env={"MAX_JOBS": "7"})
    assert proc.returncode == 3
    out = proc.stdout
    assert out.index("building ext") < out.index("unsupported_arch")  # the build's output, then the explanation
    log = (tmp_path / "b.log").read_text()
    assert log.startswith(HEADER_BEGIN) and HEADER_END in log
    assert "building ext\n" in log and "exited with code 3" in log.splitlines()[-1]
    facts = json.loads(buildlog("facts", "b.log", "-f", "json", cwd=tmp_path).stdout)
    assert facts["max_jobs"]["value"] == "7"
    assert facts["python"]["value"] == ".".join(map(str, sys.version_info[:3]))
    assert int(facts["cores"]["value"]) >= 1
    assert "saving the output to b.log" in proc.stderr


def test_a_successful_build_is_one_line_and_its_risks(tmp_path):
    proc = buildlog("run", "--", PY, "-c", "print('ok')", cwd=tmp_path, env={"TORCH_CUDA_ARCH_LIST": "5.0"})
    assert proc.returncode == 0
    assert proc.stdout == "ok\n"
    assert "succeeded" in proc.stderr and len(proc.stderr.strip().splitlines()) <= 2 + proc.stderr.count("  ! ")
    logs = list((tmp_path / ".buildlog").glob("build-*.log"))
    assert len(logs) == 1 and str(logs[0].relative_to(tmp_path)) in proc.stderr


def test_run_takes_any_format_and_output_files(tmp_path):
    proc = buildlog("run", "--format", "json", "-o", "junit:r.xml", "--", PY, "-c", FAILING, cwd=tmp_path)
    report = json.loads(proc.stdout[proc.stdout.index("{") :])
    assert proc.returncode == 3 and report["root_causes"][0]["id"] == "unsupported_arch"
    assert "<failure" in (tmp_path / "r.xml").read_text()


def test_a_command_that_does_not_exist_is_a_message(tmp_path):
    proc = buildlog("run", "--", "no-such-build-tool-xyz", cwd=tmp_path)
    assert proc.returncode == 2 and "command not found" in proc.stderr and "Traceback" not in proc.stderr


def _read_until(fd: int, wanted: bytes, timeout: float) -> bytes:
    seen = b""
    end = time.monotonic() + timeout
    while wanted not in seen and time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def _under_a_terminal(args: list[str], cwd: Path) -> tuple[int, int]:
    """buildlog started as a shell starts a job: a session on a new pseudo-terminal, as its foreground."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: exec buildlog with the terminal as stdin, stdout and stderr
        os.chdir(cwd)
        os.environ.pop("NO_COLOR", None)
        os.execv(PY, [PY, "-m", "buildlog", *args])
    return pid, fd


def test_on_a_terminal_colours_pass_through_and_ctrl_c_is_an_interrupted_build(tmp_path):
    script = (
        "import sys, time\n"
        "print('tty' if sys.stdout.isatty() else 'pipe', flush=True)\n"
        "print('\\x1b[31mred\\x1b[0m ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    pid, fd = _under_a_terminal(["run", "--log", "t.log", "--", PY, "-c", script], tmp_path)
    try:
        seen = _read_until(fd, b"ready", 60)
        assert b"tty" in seen and b"\x1b[31mred\x1b[0m" in seen, seen  # a terminal for the build, colours unchanged
        os.write(fd, b"\x03")  # Ctrl-C, typed
        seen += _read_until(fd, b"interrupted", 60)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 130
    assert b"interrupted" in seen
    log = (tmp_path / "t.log").read_bytes()
    assert b"KeyboardInterrupt" in log  # the build got the Ctrl-C and stopped on it
    assert b"interrupted (Ctrl-C, SIGINT)" in log.splitlines()[-1]


def test_a_signal_to_buildlog_reaches_the_build_and_the_log_is_complete(tmp_path):
    script = "import time\nprint('started', flush=True)\ntime.sleep(60)\n"
    proc = subprocess.Popen(
        [PY, "-m", "buildlog", "run", "--log", "s.log", "--", PY, "-c", script], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert b"started" in _read_until(proc.stdout.fileno(), b"started", 60)
        proc.send_signal(signal.SIGINT)  # a CI cancelling the job signals buildlog, not the build
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and b"interrupted" in err
    log = (tmp_path / "s.log").read_bytes()
    assert b"started" in log and b"KeyboardInterrupt" in log and b"exit code 130" in log.splitlines()[-1]
