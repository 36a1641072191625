#!/usr/bin/env python3
"""Capture a multi-attempt session as a person types it: an interactive bash in a real pty.

Each command is typed into `bash --norc -i` only once the prompt is back (as a person waits for
it), so the transcript is what the terminal showed: the prompt (which `source .../activate`
changes itself), the echoed command, and everything the programs printed to the tty, colours and
carriage returns included. The transcript is then written with `script`-style CRLF line ends, the
registry hosts replaced with index.example, and the closing `exit` left out.

    pty_session.py --out RAW.log --cwd DIR --ps1 'root@gpu-box:~/src$ ' -- 'cmd 1' 'cmd 2' ...

A command may be `#wait N`: wait N seconds more for a background job (`nohup ... &`) to finish.
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Callable


def read_until(fd: int, marker: bytes, timeout: float, buf: bytearray) -> bool:
    """Read from the pty into buf until it ends with the prompt marker (or the time runs out)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return False
        if not chunk:
            return False
        buf += chunk
        if buf.rstrip(b" ").endswith(marker.rstrip(b" ")):
            return True
    return False


def type_plain(master: int, cmd: str, marker: bytes, timeout: float, buf: bytearray) -> bool:
    """Type one command and wait for the prompt; `#wait N` waits N seconds more for a background job."""
    if cmd.startswith("#wait "):
        time.sleep(float(cmd.split()[1]))
        os.write(master, b"\n")
        read_until(master, marker, timeout, buf)
        return True
    os.write(master, cmd.encode() + b"\n")
    return read_until(master, marker, timeout, buf)


TypeCommand = Callable[[int, str, bytes, float, bytearray], bool]


def run_session(
    cwd: str,
    env: dict[str, str],
    marker: bytes,
    commands: list[str],
    timeout: float,
    type_command: TypeCommand = type_plain,
) -> str:
    """Type the commands into `bash --norc -i` in a pty, each once the prompt is back; the transcript
    from the first prompt on, the closing `exit` and the last, empty prompt left out."""
    master, slave = pty.openpty()
    os.set_blocking(master, True)
    proc = subprocess.Popen(
        ["bash", "--norc", "--noprofile", "-i"], stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env,
        start_new_session=True,
    )  # fmt: skip
    os.close(slave)
    buf = bytearray()
    read_until(master, marker, 30, buf)
    start = len(buf)  # the first prompt is kept: the session starts there
    for cmd in commands:
        if not type_command(master, cmd, marker, timeout, buf):
            print(f"timed out after: {cmd}", file=sys.stderr)
            break
    os.write(master, b"exit\n")
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    text = bytes(buf[start - len(buf[:start].split(b"\n")[-1]) :]).decode("utf-8", "replace")
    return re.sub(r"\n[^\n]*\$ $", "\n", text)  # the last, empty prompt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cwd", required=True)
    ap.add_argument("--ps1", default="root@gpu-box:~$ ")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--env", action="append", default=[], help="VAR=value for the shell")
    ap.add_argument("commands", nargs="+")
    args = ap.parse_args()

    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "MAX_JOBS", "PYTHONPATH")}
    env.update({"PS1": args.ps1, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40", "HISTFILE": "/dev/null"})
    for kv in args.env:
        k, _, v = kv.partition("=")
        env[k] = v
    text = run_session(args.cwd, env, b"$ ", args.commands, args.timeout)
    text = re.sub(r"files\.pythonhosted\.org|(?<![.a-z])pypi\.org|download\.pytorch\.org", "index.example", text)
    with open(args.out, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
