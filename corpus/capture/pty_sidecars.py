#!/usr/bin/env python3
"""Publish the pty sessions of pty_sessions.sh: each raw transcript into corpus/cases/ with its sidecar.

The labels below were written from reading each transcript (what each attempt printed), not from
buildlog's answer: the attempts a person sees, the incidents in order, the attempt that got past
each one and the kind of change that did it, and how the session ended.
    pty_sidecars.py RAW_DIR CASES_DIR DATE
"""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

VENV = "/work/scratch/envfail/venv-cpu"
TOOLS = '{ python = "3.11.7", torch = "2.13.0+cpu", pip = "23.2.1", gcc = "12.2.0" }'
TOOLS_NVCC = '{ nvcc = "13.0.88", python = "3.11.7", torch = "2.13.0+cpu", pip = "23.2.1", gcc = "12.2.0" }'
TOOLS_SYS = '{ python = "3.11.7", torch = "2.13.0+cpu", pip = "23.2.1", gcc = "12.2.0", system_python = "3.11.2" }'

CASES = {
    "session-pty-tee-isolation-then-no-isolation-import-check": dict(
        title="pty session: `pip install ... 2>&1 | tee build.log` in the venv, isolation hides torch; "
        "--no-build-isolation builds; an import check passes",
        tools=TOOLS,
        outcome="success",
        causes=["build_isolation_missing_torch"],
        key_lines=["ModuleNotFoundError: No module named 'torch'"],
        incidents=[("build_isolation_missing_torch", [1], 2, "isolation")],
        notes="Typed into an interactive bash in a pty: the venv's activate script sets the prompt. "
        "Attempt 2's import check (python -c) is a check of attempt 2, not an attempt.",
    ),
    "session-pty-system-python-redirect-then-venv-amp-redirect": dict(
        title="pty session: Debian's python3 -m pip with `> build.log 2>&1; cat build.log` refuses (PEP 668); "
        "the venv with `&> build.log; tail` builds; an import check passes",
        tools=TOOLS_SYS,
        outcome="failure",
        causes=["externally_managed_pip", "unknown"],
        key_lines=["libc10.so: cannot open shared object file", "externally-managed-environment"],
        incidents=[("externally_managed_pip", [1], 2, "interpreter")],
        fix="Import torch before the extension (`import torch, tinycpp`): the extension links against torch's libc10.so, "
        "which only torch's import puts in the process.",
        notes="The output of each attempt reaches the terminal through cat/tail of the file it was redirected to. "
        "The build succeeds; its check `python -c 'import tinycpp'` then fails (libc10.so not found: torch was not "
        "imported first), a failed check after a successful build, for which buildlog has no cause id.",
    ),
    "session-pty-cpu-torch-time-pipe-amp-still-failing": dict(
        title="pty session: `time pip install ... |& tee build.log` of a CUDAExtension against torch 2.13.0+cpu, "
        "before and after exporting CUDA_HOME: still failing",
        tools=TOOLS_NVCC,
        outcome="failure",
        causes=["cpu_only_torch"],
        key_lines=["CUDA_HOME"],
        incidents=[("cpu_only_torch", [1, 2], 0, "CUDA_HOME")],
        fix="Install a CUDA build of torch in the venv; CUDA_HOME is not the problem.",
        notes="Ends still failing: the venv's torch is CPU-only, so exporting CUDA_HOME changes nothing that bears on it.",
    ),
    "session-pty-isolation-and-system-python-one-change": dict(
        title="pty session: isolated build without torch, then Debian's python3 -m pip (PEP 668), then the venv's "
        "pip with --no-build-isolation fixes both; an import check passes",
        tools=TOOLS_SYS,
        outcome="success",
        causes=["build_isolation_missing_torch", "externally_managed_pip"],
        key_lines=["ModuleNotFoundError: No module named 'torch'", "externally-managed-environment"],
        incidents=[
            ("build_isolation_missing_torch", [1], 3, "isolation"),
            ("externally_managed_pip", [2], 3, "interpreter"),
        ],
        notes="Attempt 2 stops before the build starts (pip refuses the system Python), so it proves nothing about "
        "build isolation; attempt 3, the venv's pip with --no-build-isolation, resolves both causes in one change.",
    ),
    "session-pty-bash-x-script-tee-append": dict(
        title="pty session: `bash -x build.sh` whose pip lines `| tee -a build.log`: isolation, then "
        "--no-build-isolation builds, then an import check",
        tools=TOOLS,
        outcome="failure",
        causes=["build_isolation_missing_torch", "unknown"],
        key_lines=["libc10.so: cannot open shared object file", "ModuleNotFoundError: No module named 'torch'"],
        incidents=[("build_isolation_missing_torch", [1], 2, "isolation")],
        fix="Import torch before the extension (`import torch, tinycpp`).",
        notes="The attempts are the `+ pip install` trace lines; `+ tee -a build.log` is part of each pipeline. "
        "The script's last line, the check `python -c 'import tinycpp'`, fails: libc10.so is not found when torch "
        "is not imported first (no cause id for that).",
    ),
    "session-pty-nohup-background-then-env-python-m-pip": dict(
        title="pty session: `nohup env MAX_JOBS=1 python -m pip install ... > build.log 2>&1 &`, then `wait; cat`; "
        "then `env ... python -m pip install \\` continued with --no-build-isolation",
        tools=TOOLS,
        outcome="failure",
        causes=["build_isolation_missing_torch", "unknown"],
        key_lines=["libc10.so: cannot open shared object file", "ModuleNotFoundError: No module named 'torch'"],
        incidents=[("build_isolation_missing_torch", [1], 2, "isolation")],
        notes="The first install runs in the background; its output is read from the file after `wait`. The second "
        "command is typed over two lines with a backslash continuation (bash shows `> ` for the second). The "
        "check `python -c 'import tinycpp'` fails: libc10.so is not found when torch is not imported first.",
        fix="Import torch before the extension (`import torch, tinycpp`).",
    ),
    "session-ci-github-actions-steps-tee-isolation-then-flag": dict(
        title="CI-shaped run (GitHub Actions format, continue-on-error steps): `pip install ... 2>&1 | tee build.log` "
        "isolated, then with --no-build-isolation, then an import check step",
        tools=TOOLS,
        outcome="success",
        causes=["build_isolation_missing_torch"],
        key_lines=["ModuleNotFoundError: No module named 'torch'"],
        incidents=[("build_isolation_missing_torch", [1], 2, "isolation")],
        notes="Run by ci_runner.sh (the Actions log format: ##[group]Run headers, env, timestamps) in a pty. With "
        "`| tee` and no pipefail the failing step exits 0, as it does in Actions: only the log shows the failure.",
    ),
    "session-ci-gitlab-job-bare-venv-then-torch-then-build": dict(
        title="CI-shaped job (GitLab format): --no-build-isolation in a venv without torch, torch installed, "
        "then the build and an import check",
        tools=TOOLS,
        outcome="success",
        causes=["missing_build_dependency"],
        key_lines=["ModuleNotFoundError: No module named 'torch'"],
        incidents=[("missing_build_dependency", [1], 2, "packages")],
        notes="Run by gitlab_runner.sh (GitLab's `$ cmd` echo in bold green inside section markers) in a pty. The "
        "helper install of torch is folded into the attempt after it.",
    ),
}


def toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main() -> int:
    raw_dir, cases_dir, date = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    for slug, case in CASES.items():
        raw = raw_dir / f"{slug}.log"
        if not raw.exists():
            print(f"missing {raw}", file=sys.stderr)
            continue
        data = raw.read_bytes()
        if slug.startswith("session-ci-"):  # a CI log is what the runner printed: not the line that started it
            data = data.split(b"\n", 1)[1]
            data = data[data.index(b"\r") + 1 :] if data.startswith(b"\x1b[?2004l") else data
        for old in (f"{slug}.log", f"{slug}.log.gz"):
            (cases_dir / old).unlink(missing_ok=True)
        if len(data) > 200_000:
            with (
                open(cases_dir / f"{slug}.log.gz", "wb") as fh,
                gzip.GzipFile(f"{slug}.log", "wb", fileobj=fh, mtime=0) as gz,
            ):
                gz.write(data)
        else:
            (cases_dir / f"{slug}.log").write_bytes(data)
        text = data.decode("utf-8", "replace")
        commands = [line.split("$ ", 1)[1] for line in text.splitlines() if "root@gpu-box:~/pkgs$ " in line]
        if slug.startswith("session-ci-"):
            commands = [
                m.strip() for m in re.findall(r"##\[group\]Run (.*)|\$ ([^\x1b]*)\x1b\[0;m", text) for m in m if m
            ]
        out = [
            f"title = {toml_str(case['title'])}", 'provenance = "captured"', f'date = "{date}"',
            f"command = {toml_str('; '.join(c.strip() for c in commands))}", f"tools = {case['tools']}", 'source = ""',
            f'outcome = "{case["outcome"]}"', "causes = [" + ", ".join(toml_str(c) for c in case["causes"]) + "]",
            "key_lines = [" + ", ".join(toml_str(k) for k in case["key_lines"]) + "]", "risks = []",
            f"fix = {toml_str(case.get('fix', ''))}", f"notes = {toml_str(case['notes'])}",
        ]  # fmt: skip
        for cause, attempts, resolved, change in case["incidents"]:
            out += ["", "[[incidents]]", f'cause = "{cause}"', f"attempts = {attempts}", f"resolved_in = {resolved}"]
            out.append(f'change = "{change}"')
        (cases_dir / f"{slug}.toml").write_text("\n".join(out) + "\n")
        print(f"published {slug}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
