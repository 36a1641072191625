#!/usr/bin/env python3
"""Capture builds stopped with Ctrl-C as a terminal shows them: the ^C echo included.

env_build_interrupted.sh signals the process group, so its logs have no "^C"; here the interrupt
character is typed into a real pty (bash --norc -i), whose line discipline echoes it as ^C and
sends SIGINT to the foreground job, as when a person presses Ctrl-C. A command written
`#ctrl-c N CMD` is typed, and N seconds later Ctrl-C is pressed; others are typed and waited for.
The transcript keeps the prompt and echoed commands; CR LF line ends become LF.

    ctrl_c_echo.py --out RAW.log --cwd DIR --ps1 'user@ws:~/proj$ ' -- 'cmd 1' '#ctrl-c 4 cmd 2'
    ctrl_c_echo.py --demo WORK      # the three captured cases: a CMake+ninja regeneration, a setup.py
                                    # whose build_ext runs a long subprocess (setuptools prints
                                    # "interrupted"), one that runs it before setup() (a traceback)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from pty_session import read_until, run_session, type_plain  # this folder's (on sys.path as the script's)


def type_ctrl_c(master: int, cmd: str, marker: bytes, timeout: float, buf: bytearray) -> bool:
    """`#ctrl-c N CMD`: type CMD, press Ctrl-C N seconds later, then wait for the prompt."""
    if not cmd.startswith("#ctrl-c "):
        return type_plain(master, cmd, marker, timeout, buf)
    _, after, cmd = cmd.split(" ", 2)
    os.write(master, cmd.encode() + b"\n")
    read_until(master, marker, float(after), buf)  # the output so far; the command is still running
    os.write(master, b"\x03")
    return read_until(master, marker, timeout, buf)


def session(out: Path, cwd: Path, ps1: str, commands: list[str], timeout: float = 300) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "MAX_JOBS", "PYTHONPATH")}
    env.update({"PS1": ps1, "TERM": "dumb", "COLUMNS": "120", "LINES": "40", "HISTFILE": "/dev/null"})
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")  # `python` is this one
    text = run_session(str(cwd), env, ps1.encode(), commands, timeout, type_ctrl_c)
    text = text.replace("\r\n", "\n").replace("\r", "")
    out.write_text(text, encoding="utf-8")
    return text


CMAKELISTS = """cmake_minimum_required(VERSION 3.18)
project(kernels LANGUAGES CXX)
# a generator step that takes a while (here: a sleep standing in for a slow find_package / download)
if(EXISTS "${CMAKE_SOURCE_DIR}/regen.stamp")
  execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 60)
endif()
add_library(kernels SHARED kernels.cpp)
"""

SETUP_PY = """import subprocess
from setuptools import setup
from setuptools.command.build_ext import build_ext


class CMakeBuild(build_ext):
    def run(self):
        subprocess.check_call(["cmake", "-E", "sleep", "60"])  # stands in for the long cmake --build


setup(name="fastops", version="0.1.0", cmdclass={"build_ext": CMakeBuild}, ext_modules=[])
"""

# as torch's own setup.py does (build_deps() before setup()): the long step runs outside setuptools,
# so nothing catches the KeyboardInterrupt and Python prints its traceback
SETUP_PY_DEPS = """import subprocess
import sys

from setuptools import setup


def build_deps():
    print("-- Building third_party libraries", flush=True)
    subprocess.check_call(["cmake", "-E", "sleep", "60"])  # stands in for cmake --build build


if "develop" in sys.argv or "install" in sys.argv:
    build_deps()
setup(name="fastops", version="0.1.0")
"""


def demo(work: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    proj = work / "kernels"
    proj.mkdir(exist_ok=True)
    (proj / "CMakeLists.txt").write_text(CMAKELISTS)
    (proj / "kernels.cpp").write_text("int kernels_version() { return 1; }\n")
    (proj / "regen.stamp").unlink(missing_ok=True)
    subprocess.run(["rm", "-rf", str(proj / "build")], check=True)
    subprocess.run(["cmake", "-S", ".", "-B", "build", "-G", "Ninja"], cwd=proj, check=True, capture_output=True)
    subprocess.run(["ninja", "-C", "build"], cwd=proj, check=True, capture_output=True)
    (proj / "regen.stamp").write_text("")
    time.sleep(1.1)
    os.utime(proj / "CMakeLists.txt")
    session(work / "cmake-ninja-regenerate-ctrl-c.raw.log", proj, "user@ws:~/kernels$ ", ["#ctrl-c 4 ninja -C build"])
    pkg = work / "fastops"
    pkg.mkdir(exist_ok=True)
    (pkg / "setup.py").write_text(SETUP_PY)
    subprocess.run(["rm", "-rf", str(pkg / "build")], check=True)
    session(
        work / "setup-py-build-ext-ctrl-c.raw.log", pkg, "(venv) user@ws:~/fastops$ ",
        ["#ctrl-c 4 python setup.py build_ext --inplace"],
    )  # fmt: skip
    deps = work / "fastdeps"
    deps.mkdir(exist_ok=True)
    (deps / "setup.py").write_text(SETUP_PY_DEPS)
    session(
        work / "setup-py-develop-ctrl-c-in-build-deps.raw.log", deps, "(venv) user@ws:~/fastdeps$ ",
        ["#ctrl-c 4 python setup.py develop"],
    )  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--demo", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--cwd", type=Path)
    ap.add_argument("--ps1", default="user@ws:~$ ")
    ap.add_argument("commands", nargs="*")
    args = ap.parse_args()
    if args.demo:
        demo(args.demo)
        return 0
    session(args.out, args.cwd, args.ps1, args.commands)
    return 0


if __name__ == "__main__":
    sys.exit(main())
