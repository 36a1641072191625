"""`buildlog run -- CMD`: run a build as the shell would, keep its whole output, explain a failure.

On POSIX the command runs in its own process group, made the terminal's foreground group when
there is a terminal (what a shell does for a job), so Ctrl-C reaches the build, once, and the
build decides how to stop. A signal sent to buildlog itself (a CI cancelling the job) is passed on
to the build's group. On Windows the console sends Ctrl-C to every process attached to it, the
build included, so buildlog only notes it. Its output is streamed unchanged: through a
pseudo-terminal when stdout is a terminal on POSIX, so colours and progress bars stay; through a
plain pipe otherwise (Windows, a CI job, a redirect, or --no-pty), copied by a thread as it comes.
Every byte also goes to the log, flushed as it comes, after a header with the environment
(buildlog/probe.py) and before a footer with the exit code.
"""

from __future__ import annotations

import datetime as _dt
import errno
import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

import click

from buildlog.cli.base import (
    FORMAT_HELP,
    FORMATS,
    _emit,
    analyse_logs,
    friendly,
    github_summary,
    main,
    output_options,
    rules_option,
    write_outputs,
)  # fmt: skip
from buildlog.errors import BuildlogError

# This module is imported with every command (it registers `run`): what only a build needs
# (subprocess, signal, select, shlex) is imported where it is used.
PROBE_TIMEOUT = 60  # seconds for one probe command (importing torch can take a while)
POSIX = os.name == "posix"
# After the command ends, its output is read until the pipe closes, or until it has been silent
# this long since the end: a process the build left running in the background may hold the pipe
# open for ever.
DRAIN_QUIET = 1.0


def _forwarded() -> tuple[int, ...]:
    """The signals passed on to the build (SIGHUP is POSIX only)."""
    import signal

    return tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def probe_runner(argv: Sequence[str]) -> tuple[int, str] | None:
    """Run one probe command: (exit code, output), or None when it is missing, refused or hangs."""
    import subprocess

    try:
        done = subprocess.run(
            list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            timeout=PROBE_TIMEOUT, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.returncode, done.stdout.decode("utf-8", "replace")


def read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def environment(argv: Sequence[str]) -> Any:
    from buildlog.probe import collect

    return collect(argv, os.environ, probe_runner, read_text)


def _open_log(path: Path) -> BinaryIO:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, "wb")  # noqa: SIM115 - closed in run_build's finally
    except OSError as exc:
        raise BuildlogError(f"{path}: cannot write the log ({exc.strerror or exc})") from None


def wants_pty(echo: BinaryIO | None, choice: bool | None) -> bool:
    """A pseudo-terminal for the build: asked for, or by default when the output is shown on a terminal.

    Only POSIX has them; elsewhere, and when asked not to, the build gets plain pipes."""
    if not POSIX or not hasattr(os, "openpty") or choice is False:
        return False
    return choice is True or (echo is not None and _isatty(echo))


class Build:
    """The running command: its process, where its output comes from, whether it was interrupted."""

    def __init__(self, argv: Sequence[str], log: BinaryIO, echo: BinaryIO | None, use_pty: bool) -> None:
        import subprocess

        self.log, self.echo = log, echo
        self.interrupted = False
        self.use_pty = use_pty
        self.terminal = _terminal_fd()
        if use_pty:
            self.read_fd, child_out = os.openpty()
            if echo is not None:
                _copy_window_size(echo, child_out)
            kwargs: dict[str, Any] = {"stdout": child_out, "stderr": child_out}
        else:
            kwargs = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "bufsize": 0}
        if POSIX:
            kwargs["preexec_fn"] = os.setpgrp
        try:
            self.process = subprocess.Popen(list(argv), **kwargs)  # noqa: PLW1509
        except FileNotFoundError:
            raise BuildlogError(f"{argv[0]}: command not found") from None
        except PermissionError:
            raise BuildlogError(f"{argv[0]}: permission denied") from None
        except OSError as exc:  # e.g. not an executable (Windows: %1 is not a valid Win32 application)
            raise BuildlogError(f"{argv[0]}: cannot run ({exc.strerror or exc})") from None
        finally:
            if use_pty:
                os.close(child_out)
        self._foreground(self.process.pid)

    def _foreground(self, pgrp: int) -> None:
        """Make `pgrp` the terminal's foreground group (Ctrl-C goes to it), as a shell does."""
        import signal

        if self.terminal is None:
            return
        previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
        try:
            os.tcsetpgrp(self.terminal, pgrp)
        except OSError:
            pass  # the build already ended, or the terminal is not ours
        finally:
            signal.signal(signal.SIGTTOU, previous)

    def forward(self, signum: int, frame: Any) -> None:
        self.interrupted = True
        if not POSIX:  # the console sent Ctrl-C (or Ctrl-Break) to the build as well
            return
        try:
            os.killpg(self.process.pid, signum)
        except OSError:
            pass

    def _write(self, data: bytes) -> None:
        self.log.write(data)
        self.log.flush()
        if self.echo is not None:
            try:
                self.echo.write(data)
                self.echo.flush()
            except OSError:  # the terminal went away: keep logging
                self.echo = None

    def pump(self) -> int:
        """Copy the output to the terminal and the log until the command ends; its exit status."""
        code = self._pump_pty() if self.use_pty else self._pump_pipe()
        self._foreground(os.getpgrp() if POSIX else 0)
        if code < 0:
            self.interrupted = self.interrupted or -code in _forwarded()
            return 128 - code
        return code

    def _pump_pipe(self) -> int:
        """Plain pipes, on any system: a thread copies the output as it comes; this one waits."""
        import subprocess

        lock, done, stopped, last = threading.Lock(), threading.Event(), threading.Event(), [time.monotonic()]

        def copy() -> None:
            out = self.process.stdout
            try:
                while out is not None:
                    data = out.read(65536)  # unbuffered: whatever the build has written so far
                    if not data:
                        break
                    with lock:
                        if stopped.is_set():
                            break
                        self._write(data)
                        last[0] = time.monotonic()
            except (OSError, ValueError):
                pass
            finally:
                done.set()

        reader = threading.Thread(target=copy, name="buildlog-output", daemon=True)
        reader.start()
        while True:
            try:
                code = self.process.wait(timeout=0.2)  # in steps, so Ctrl-C is seen (Windows)
                break
            except subprocess.TimeoutExpired:
                continue
            except KeyboardInterrupt:  # where no handler was installed for SIGINT
                self.interrupted = True
        ended = time.monotonic()
        while not done.wait(0.1) and time.monotonic() - max(last[0], ended) < DRAIN_QUIET:
            pass  # what the build wrote last is still in the pipe: the thread takes it
        with lock:  # a process left behind may still write: not into a closed log
            stopped.set()
        return code

    def _pump_pty(self) -> int:
        import select

        while True:
            ready, _, _ = select.select([self.read_fd], [], [], 0.5)  # retried on a signal (PEP 475)
            if not ready:
                if self.process.poll() is not None and not _pending(self.read_fd):
                    break
                continue
            try:
                data = os.read(self.read_fd, 65536)
            except OSError as exc:
                if exc.errno == errno.EIO:  # the pseudo-terminal closed: the command and its children are done
                    break
                raise
            if not data:
                break
            self._write(data)
        return self.process.wait()


def _pending(fd: int) -> bool:
    import select

    ready, _, _ = select.select([fd], [], [], 0)
    return bool(ready)


def _isatty(stream: Any) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _terminal_fd() -> int | None:
    """stdin's terminal when this process is in its foreground (an interactive shell's job)."""
    if not POSIX:
        return None
    try:
        if os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp():
            return 0
    except OSError:
        pass
    return None


def _copy_window_size(echo: Any, fd: int) -> None:
    try:
        import fcntl
        import termios

        size = fcntl.ioctl(echo.fileno(), termios.TIOCGWINSZ, b"\0" * 8)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, size)
    except (ImportError, OSError, ValueError):
        pass


def run_build(
    argv: Sequence[str], log_path: Path, echo: BinaryIO | None, use_pty: bool | None = None
) -> tuple[int, bool, float]:
    """Header, the command with its output streamed and logged, footer: (exit code, interrupted, seconds)."""
    import shlex
    import signal

    from buildlog.probe import footer, header
    from buildlog.store.records import now_stamp

    found = environment(argv)
    when = now_stamp()
    log = _open_log(log_path)
    start = time.monotonic()
    code, interrupted = 127, False
    try:
        lines = [*header(found, when), f"$ {shlex.join(argv)}"]
        log.write(("\n".join(lines) + "\n").encode("utf-8", "replace"))
        log.flush()
        build = Build(argv, log, echo, wants_pty(echo, use_pty))
        previous = {sig: signal.signal(sig, build.forward) for sig in _forwarded()}
        try:
            code = build.pump()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        interrupted = build.interrupted
    finally:
        seconds = time.monotonic() - start
        log.write(("\n" + footer(code, seconds, interrupted) + "\n").encode("utf-8"))
        log.close()
    return code, interrupted, seconds


@main.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- CMD [ARGS]...")
@click.option("--log", "log", default=None, metavar="FILE",
              help="Save the whole output here (default: a timestamped file in .buildlog/).")  # fmt: skip
@click.option("-f", "--format", "fmt", type=FORMATS, default=None, help=f"{FORMAT_HELP} [default: terminal]")
@click.option("--color/--no-color", default=None, help="Colour in the report (default: only on a terminal).")
@click.option("--width", type=click.IntRange(40, 400), default=None, help="Report width (default: the terminal's).")
@click.option("--redact-paths", is_flag=True, help="Also mask user names, home folders and host names in the report.")
@click.option("--pty/--no-pty", "use_pty", default=None,
              help="Run the build on a pseudo-terminal (the default when stdout is a terminal, POSIX only), or on plain pipes.")  # fmt: skip
@output_options
@rules_option
@friendly
def run(
    command: tuple[str, ...], log: str | None, fmt: str | None, color: bool | None, width: int | None,
    redact_paths: bool, use_pty: bool | None, outputs: list[tuple[str, str]], quiet: bool, rules: tuple[str, ...],
) -> None:  # fmt: skip
    """Run a build, save its whole output, and explain it if it fails.

    The command runs as the shell would run it, its output shown live and unchanged (colours
    kept on a terminal). Before it starts, the environment that decides GPU builds (nvcc and
    CUDA_HOME, torch and its CUDA and C++ ABI, the driver and GPUs, gcc, python, venv, RAM,
    cores, MAX_JOBS, TORCH_CUDA_ARCH_LIST, NVCC_THREADS) is written at the top of the log, where
    `buildlog explain` reads it as facts. When the command fails, the explanation follows; when
    it succeeds, one line and the risks. Ctrl-C stops the build and is reported as an
    interruption. The exit code is the command's own.

    \b
    Examples:
      buildlog run -- pip install -v flash-attn --no-build-isolation
      buildlog run --log build.log -- bash -c 'pip install packaging ninja && pip install flash-attn'
      buildlog run --format github -- python setup.py bdist_wheel
      buildlog run -o junit:buildlog.xml -- uv pip install xformers
    """
    from buildlog.cli.settings import default_format

    argv = list(command[1:] if command and command[0] == "--" else command)
    fmt = fmt or default_format(os.environ)
    if use_pty and not POSIX:
        raise BuildlogError("--pty needs a POSIX system (Linux, macOS); on Windows the build runs on pipes")
    if not argv:
        raise BuildlogError("give the command to run after --, e.g. buildlog run -- pip install flash-attn")
    log_path = Path(log) if log else Path(".buildlog") / f"build-{_dt.datetime.now():%Y%m%d-%H%M%S}.log"
    if not quiet:
        click.echo(f"buildlog: saving the output to {log_path}", err=True)
    sys.stdout.flush()
    echo = None if quiet else sys.stdout.buffer
    fold = f"buildlog_build_{int(time.time())}" if fmt == "gitlab" and echo is not None else ""
    if fold:  # the build's output in a section of the job log, headed by its command
        import shlex

        from buildlog.render.gitlab import section_end, section_start

        _marker(echo, section_start(fold, f"$ {shlex.join(argv)}", int(time.time())))
    code, interrupted, seconds = run_build(argv, log_path, echo, use_pty)
    if fold:
        _marker(echo, section_end(fold, int(time.time())))
    (analysis,) = analyse_logs((str(log_path),), redact_paths=redact_paths, rules=rules, quiet=quiet)
    report = analysis.report
    write_outputs([report], outputs)
    github_summary([report], fmt, outputs)
    if not quiet:
        _tell(report, code, interrupted, seconds, log_path, fmt, color, width)
    sys.exit(code)


def _tell(
    report: Any, code: int, interrupted: bool, seconds: float, log_path: Path, fmt: str, color: bool | None,
    width: int | None,
) -> None:  # fmt: skip
    if interrupted:
        click.echo(f"buildlog: ✗ the build was interrupted (Ctrl-C or a signal) after {seconds:.0f} s, "
                   f"exit code {code}; nothing in it failed on its own. The log so far: {log_path}", err=True)  # fmt: skip
        if fmt not in ("terminal", "gitlab"):
            _emit(report, fmt, color, width)
        return
    if code != 0:
        click.echo(
            f"buildlog: the command failed with exit code {code} after {seconds:.0f} s; log: {log_path}", err=True
        )
        _emit(report, fmt, color, width)
        return
    risks = "".join(f"\n  ! {r.title}" for r in report.risks)
    click.echo(f"buildlog: ✓ the command succeeded in {seconds:.0f} s; log: {log_path}{risks}", err=True)
    if fmt not in ("terminal", "markdown", "gitlab"):
        _emit(report, fmt, color, width)


def _marker(echo: BinaryIO, line: str) -> None:
    """A GitLab section marker on the terminal only: the log keeps the build's bytes alone."""
    try:
        echo.write((line + "\n").encode("utf-8", "replace"))
        echo.flush()
    except OSError:
        pass
