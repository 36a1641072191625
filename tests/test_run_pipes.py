"""`buildlog run` without a pseudo-terminal: plain pipes, as on Windows, in CI, or with --no-pty."""

from __future__ import annotations

import importlib
import io
import os
import subprocess
import sys
import time

import pytest

from tests.test_run import _read_until, _under_a_terminal, buildlog

PY = sys.executable
run_module = importlib.import_module("buildlog.cli.run")  # the module (buildlog.cli.run is the console script)
pytestmark = pytest.mark.skipif(os.name != "posix", reason="drives a POSIX terminal to type Ctrl-C")


def test_no_pty_at_a_terminal_streams_live_and_ctrl_c_is_an_interrupted_build(tmp_path):
    script = (
        "import sys, time\n"
        "print('tty' if sys.stdout.isatty() else 'pipe', flush=True)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    pid, fd = _under_a_terminal(["run", "--no-pty", "--log", "p.log", "--", PY, "-c", script], tmp_path)
    try:
        seen = _read_until(fd, b"ready", 60)  # shown while the build still runs
        assert b"pipe" in seen and b"tty" not in seen, seen
        os.write(fd, b"\x03")  # Ctrl-C, typed at the terminal
        seen += _read_until(fd, b"interrupted", 60)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 130 and b"interrupted" in seen
    log = (tmp_path / "p.log").read_bytes()
    assert b"ready" in log and b"KeyboardInterrupt" in log
    assert b"interrupted (Ctrl-C, SIGINT)" in log.splitlines()[-1]


def test_on_pipes_the_log_is_complete_and_the_exit_code_passes_through(tmp_path):
    lines = 200_000  # a few MB through the pipe, in many reads
    script = f"import sys\nfor i in range({lines}): print(f'line {{i}} of the build')\nsys.exit(7)\n"
    proc = buildlog("run", "--no-pty", "--log", "b.log", "--", PY, "-c", script, cwd=tmp_path)
    assert proc.returncode == 7
    shown = [line for line in proc.stdout.splitlines() if line.startswith("line ")]
    logged = [line for line in (tmp_path / "b.log").read_text().splitlines() if line.startswith("line ")]
    assert shown == logged == [f"line {i} of the build" for i in range(lines)]


def test_a_process_left_running_with_the_pipe_does_not_hold_the_build(tmp_path):
    script = (
        "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"  # inherits stdout: the pipe
        "print('done', flush=True)\n"
    )
    start = time.monotonic()
    proc = buildlog("run", "--log", "b.log", "--", PY, "-c", script, cwd=tmp_path)
    assert proc.returncode == 0 and time.monotonic() - start < 25
    assert "done" in proc.stdout and "exited with code 0" in (tmp_path / "b.log").read_text().splitlines()[-1]


def test_the_windows_way_threads_and_no_process_groups(tmp_path, monkeypatch):
    """What Windows runs (no pty, no process group, no killpg), forced here on Linux."""
    monkeypatch.setattr(run_module, "POSIX", False)
    assert not run_module.wants_pty(io.BytesIO(), True)
    script = "import sys, time\nprint('first', flush=True)\ntime.sleep(0.3)\nprint('second')\nsys.exit(5)\n"
    shown = io.BytesIO()
    code, interrupted, _ = run_module.run_build([PY, "-c", script], tmp_path / "w.log", shown)
    assert (code, interrupted) == (5, False)
    assert shown.getvalue().replace(b"\r\n", b"\n") == b"first\nsecond\n"
    log = (tmp_path / "w.log").read_bytes()
    assert b"first\nsecond\n" in log and b"exited with code 5" in log.splitlines()[-1]


def test_pty_is_refused_where_there_is_none(tmp_path, monkeypatch):
    proc = subprocess.run(
        [PY, "-c", "import importlib, sys; importlib.import_module('buildlog.cli.run').POSIX = False; sys.argv = ['buildlog', 'run', '--pty', '--', 'x']; "
         "from buildlog.cli import main; main()"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and "--pty needs a POSIX system" in proc.stderr and "Traceback" not in proc.stderr


def test_output_written_just_before_the_end_of_a_quiet_build_is_kept(tmp_path):
    script = "import sys, time\ntime.sleep(1.5)\nsys.stdout.write('last words\\n' * 20000)\n"
    proc = buildlog("run", "--no-pty", "--log", "q.log", "--", PY, "-c", script, cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout.splitlines().count("last words") == 20000
    assert (tmp_path / "q.log").read_text().splitlines().count("last words") == 20000
