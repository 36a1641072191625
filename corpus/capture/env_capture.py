#!/usr/bin/env python3
"""Run shell commands, keep their output as a corpus log, and write its sidecar.

The log looks like a terminal paste: each command is printed as `$ <command>` and followed by
its combined stdout and stderr, exactly as the tools printed them. Afterwards:

* package registry host names (and anything that looks like a token) are replaced with
  `index.example`; nothing else in the output is changed;
* a log over ~200 KB is gzipped (`<slug>.log.gz`);
* every key line must occur in the log, otherwise the case is reported as a capture error;
* the sidecar `<slug>.toml` is written in the format of corpus/README.md and parsed back.

The commands run in one `bash` process (so `cd`, `.` activate and `export` carry over) in a
new session; `--interrupt-after` sends a signal to that whole process group after N seconds,
which is what a Ctrl-C at the terminal does to the foreground job.

Example:
  env_capture.py --slug demo --title "demo" --cwd /tmp \
      --cmd 'pip install does-not-exist==0' --cause no_matching_distribution \
      --key 'No matching distribution found' --python python3
"""
from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = Path(os.environ.get("CORPUS_CASES", HERE.parent / "cases"))
DATE = os.environ.get("CAPTURE_DATE") or datetime.date.today().isoformat()  # when it was captured
GZIP_OVER = 200 * 1024

# Registry hosts (and their subdomains) that must not appear in a stored log.
REGISTRY_HOSTS = [
    r"(?:[a-z0-9-]+\.)*pypi\.org",
    r"(?:[a-z0-9-]+\.)*pypi\.python\.org",
    r"(?:[a-z0-9-]+\.)*pythonhosted\.org",
    r"download\.pytorch\.org",
    r"(?:[a-z0-9-]+\.)*deb\.debian\.org",
    r"security\.debian\.org",
    r"ftp\.[a-z.]*debian\.org",
    r"(?:[a-z0-9-]+\.)*pypi\.nvidia\.com",
    r"astral\.sh",
]
EXTRA_HOSTS = [h for h in os.environ.get("SANITIZE_HOSTS", "").split(",") if h]
HOST_RE = re.compile(
    r"(?<![A-Za-z0-9.-])(?:" + "|".join(REGISTRY_HOSTS + [re.escape(h) for h in EXTRA_HOSTS]) + r")(?![A-Za-z0-9-])",
    re.IGNORECASE,
)
TOKEN_RE = re.compile(
    r"(pypi-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|(?<=://)[^/@\s:]+:[^/@\s]+(?=@))"
)


def sanitize(text: str) -> str:
    text = HOST_RE.sub("index.example", text)
    return TOKEN_RE.sub("index.example", text)


def toml_str(s: str) -> str:
    # JSON string escapes are valid TOML basic-string escapes.
    return json.dumps(s, ensure_ascii=False)


def toml_list(items: list[str]) -> str:
    return "[" + ", ".join(toml_str(i) for i in items) + "]"


def probe(cmd: list[str], env: dict[str, str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def tool_versions(args, env: dict[str, str]) -> dict[str, str]:
    tools: dict[str, str] = {}
    if args.nvcc:
        out = probe([args.nvcc, "--version"], env)
        m = re.search(r"V(\d+\.\d+\.\d+)", out)
        if m:
            tools["nvcc"] = m.group(1)
    if args.python:
        py = args.python
        v = probe([py, "-c", "import platform; print(platform.python_version())"], env)
        if v:
            tools["python"] = v
        v = probe([py, "-c", "import torch; print(torch.__version__)"], env)
        if v:
            tools["torch"] = v.splitlines()[-1]
        v = probe([py, "-m", "pip", "--version"], env)
        if v:
            tools["pip"] = v.split()[1]
        if args.setuptools:
            v = probe([py, "-c", "import setuptools; print(setuptools.__version__)"], env)
            if v:
                tools["setuptools"] = v
    if args.uv:
        v = probe([args.uv, "--version"], env)
        if v:
            tools["uv"] = v.split()[1]
    if args.gcc:
        v = probe(["gcc", "-dumpfullversion"], env)
        if v:
            tools["gcc"] = v
    for kv in args.tool:
        k, _, v = kv.partition("=")
        if v:
            tools[k] = v
        else:
            tools.pop(k, None)
    return tools


def build_script(args) -> str:
    lines = ["set +e", f"cd {shlex.quote(args.cwd)}"]
    for cmd in args.cmd:
        lines.append("printf '%s\\n' " + shlex.quote("$ " + cmd))
        lines.append(cmd)
        if args.mode == "and":
            lines.append("rc=$?; if [ $rc -ne 0 ]; then exit $rc; fi")
        else:
            lines.append("rc=$?")
    lines.append("exit $rc")
    return "\n".join(lines) + "\n"


def run(args) -> tuple[int, str]:
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    env["PYTHONUNBUFFERED"] = "1"  # keep stdout and stderr in the order they were written
    for name in args.unset:
        env.pop(name, None)
    for kv in args.env:
        k, _, v = kv.partition("=")
        env[k] = v
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "case.sh"
        script.write_text(build_script(args))
        out_path = Path(tmp) / "out.txt"
        argv = ["bash", "-c", script.read_text()]  # bash's own errors then read "bash: line N: ..."
        if args.hide or args.tmpfs:
            # A private mount namespace: the machine looks as if these paths were absent (or
            # small), for this run only. The mounts' own messages go to mounts.txt, not the log.
            pre = [f"exec 3>&2 2>{shlex.quote(str(Path(tmp) / 'mounts.txt'))}"]
            for path in args.hide:
                if os.path.isdir(path):
                    pre.append(f"mount -t tmpfs -o size=1m,mode=755 tmpfs {shlex.quote(path)} || exit 99")
                else:
                    pre.append(f"mount --bind /dev/null {shlex.quote(path)} || exit 99")
            for spec in args.tmpfs:
                path, _, size = spec.partition(":")
                pre.append(f"mkdir -p {shlex.quote(path)} && mount -t tmpfs -o size={size} tmpfs {shlex.quote(path)} || exit 99")
            pre.append(f"exec 2>&3 3>&-; exec bash -c \"$(cat {shlex.quote(str(script))})\"")
            argv = ["unshare", "-m", "--propagation", "private", "bash", "-c", "\n".join(pre)]
        with open(out_path, "wb") as out:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, env=env, start_new_session=True,
            )
            start = time.monotonic()
            sent = False
            while proc.poll() is None:
                time.sleep(0.2)
                elapsed = time.monotonic() - start
                if args.interrupt_after and not sent and elapsed >= args.interrupt_after:
                    target = os.getpgid(proc.pid)
                    if args.interrupt_pattern:
                        # signal only the processes whose command line matches (e.g. ninja)
                        pids = subprocess.run(
                            ["pgrep", "-g", str(target), "-f", args.interrupt_pattern],
                            capture_output=True, text=True).stdout.split()
                        if not pids:
                            continue
                        for pid in pids:
                            os.kill(int(pid), getattr(signal, "SIG" + args.interrupt_signal))
                    else:
                        os.killpg(target, getattr(signal, "SIG" + args.interrupt_signal))
                    sent = True
                if elapsed > args.timeout:
                    os.killpg(os.getpgid(proc.pid), signal.SIGKILL)
                    proc.wait()
                    print(f"[{args.slug}] capture timed out after {args.timeout}s", file=sys.stderr)
                    break
            rc = proc.wait()
        raw = out_path.read_bytes().decode("utf-8", errors="replace")
        mounts = Path(tmp) / "mounts.txt"
        if rc == 99 and mounts.exists():
            sys.exit(f"[{args.slug}] could not set up mounts: {mounts.read_text().strip()}")
    return rc, (env, raw)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--slug", required=True)
    ap.add_argument("--title", required=True)
    ap.add_argument("--cwd", default=os.getcwd())
    ap.add_argument("--cmd", action="append", required=True, help="a command, shown as `$ CMD` (repeatable)")
    ap.add_argument("--mode", choices=["and", "seq"], default="and",
                    help="and: stop at the first failing command (command field joined with &&); seq: run all")
    ap.add_argument("--env", action="append", default=[], help="K=V set for the run but not shown")
    ap.add_argument("--unset", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--interrupt-after", type=float, default=0)
    ap.add_argument("--interrupt-signal", default="INT")
    ap.add_argument("--interrupt-pattern", default="")
    ap.add_argument("--hide", action="append", default=[],
                    help="path made to look absent for this run (dir: empty tmpfs over it; file: /dev/null)")
    ap.add_argument("--tmpfs", action="append", default=[], help="DIR:SIZE, a small tmpfs mounted for this run")
    ap.add_argument("--expect", choices=["fail", "ok", "any"], default="fail")
    ap.add_argument("--outcome", choices=["failure", "success", "unknown"], default="failure")
    ap.add_argument("--cause", action="append", default=[])
    ap.add_argument("--key", action="append", default=[])
    ap.add_argument("--risk", action="append", default=[])
    ap.add_argument("--fix", default="")
    ap.add_argument("--notes", default="")
    ap.add_argument("--incident", action="append", default=[],
                    help="cause:attempt,attempt:resolved_in:change")
    ap.add_argument("--python", default="", help="interpreter whose python/pip/torch versions are recorded")
    ap.add_argument("--setuptools", action="store_true")
    ap.add_argument("--nvcc", default="")
    ap.add_argument("--uv", default="")
    ap.add_argument("--gcc", action="store_true")
    ap.add_argument("--tool", action="append", default=[], help="k=v to set, k= to drop")
    args = ap.parse_args()
    # CAPTURE_SIDECAR_ONLY=1 rewrites sidecars from the stored logs without running anything.
    only = os.environ.get("CAPTURE_ONLY", "").replace(",", " ").split()
    if only and args.slug not in only:
        return 0  # CAPTURE_ONLY="slug ..." re-captures just those cases

    problems = []
    if os.environ.get("CAPTURE_SIDECAR_ONLY"):
        # keep the stored log, only rewrite its sidecar (after editing a title, key or fix)
        old_log = CASES / f"{args.slug}.log"
        if old_log.exists():
            raw = old_log.read_text()
        else:
            raw = gzip.open(CASES / f"{args.slug}.log.gz", "rt").read()
        rc, env = None, dict(os.environ)
    else:
        rc, (env, raw) = run(args)
    text = sanitize(raw)
    if args.expect == "fail" and rc == 0:
        problems.append("expected a failure but the commands succeeded")
    if args.expect == "ok" and rc not in (0, None):
        problems.append(f"expected success but exit status was {rc}")
    for key in args.key:
        if key not in text:
            problems.append(f"key line not in log: {key!r}")

    CASES.mkdir(parents=True, exist_ok=True)
    for old in (CASES / f"{args.slug}.log", CASES / f"{args.slug}.log.gz"):
        old.unlink(missing_ok=True)
    data = text.encode("utf-8")
    if len(data) > GZIP_OVER:
        log_path = CASES / f"{args.slug}.log.gz"
        with open(log_path, "wb") as fh:
            with gzip.GzipFile(filename=f"{args.slug}.log", mode="wb", fileobj=fh, mtime=0) as gz:
                gz.write(data)
    else:
        log_path = CASES / f"{args.slug}.log"
        log_path.write_bytes(data)

    tools = tool_versions(args, env)
    joiner = " && " if args.mode == "and" else "; "
    out = [
        f"title = {toml_str(args.title)}",
        'provenance = "captured"',
        f"date = {toml_str(DATE)}",
        f"command = {toml_str(joiner.join(args.cmd))}",
        "tools = { " + ", ".join(f"{k} = {toml_str(v)}" for k, v in tools.items()) + " }",
        'source = ""',
        f"outcome = {toml_str(args.outcome)}",
        f"causes = {toml_list(args.cause)}",
        f"key_lines = {toml_list(args.key)}",
        f"risks = {toml_list(args.risk)}",
        f"fix = {toml_str(args.fix)}",
        f"notes = {toml_str(args.notes)}",
    ]
    for inc in args.incident:
        cause, attempts, resolved, change = inc.split(":", 3)
        out += ["", "[[incidents]]", f"cause = {toml_str(cause)}",
                "attempts = [" + ", ".join(a for a in attempts.split(",") if a) + "]",
                f"resolved_in = {int(resolved)}", f"change = {toml_str(change)}"]
    toml_text = "\n".join(out) + "\n"
    tomllib.loads(toml_text)
    (CASES / f"{args.slug}.toml").write_text(toml_text)

    status = "OK" if not problems else "PROBLEM"
    print(f"[{args.slug}] {status} rc={rc} {log_path.name} ({len(data)} bytes)")
    for p in problems:
        print(f"[{args.slug}]   {p}")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
