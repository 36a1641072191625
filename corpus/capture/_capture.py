"""Shared helpers for the capture scripts.

A capture runs real commands the way a user's terminal would (a venv "activated" through PATH,
environment variables written inline in the command), records each one as a `$ <command>` line
followed by its combined stdout+stderr, and writes corpus/cases/<slug>.log with its sidecar
corpus/cases/<slug>.toml.

Paths are set through environment variables:
  TOOLCHAINS    scratch folder holding the toolkits, venvs and build folders (see assemble_toolkits.sh)
  CAPTURE_DATE  date written into the sidecars (default: today)
"""
from __future__ import annotations

import datetime
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "corpus" / "cases"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TOOLCHAINS = Path(os.environ.get("TOOLCHAINS", "/work/scratch/toolchain"))
DATE = os.environ.get("CAPTURE_DATE") or datetime.date.today().isoformat()

# Toolkits and venvs, as laid out by assemble_toolkits.sh and make_venvs().
CUDA_13_0 = Path(os.environ.get("CUDA_13_0", "/usr/local/cuda-13.0"))
CUDA_13_2 = TOOLCHAINS / "cuda-13.2"
CUDA_12_4 = TOOLCHAINS / "cuda-12.4"
CUDA_11_8 = TOOLCHAINS / "cuda-11.8"
CLANG_19 = TOOLCHAINS / "llvm-19" / "bin" / "clang++"
VENV_CU130 = TOOLCHAINS / "venv-cu130"   # torch 2.14.1+cu130
VENV_CU124 = TOOLCHAINS / "venv-cu124"   # torch 2.5.1+cu124 (PyPI's default CUDA build of 2.5.1)
VENV_CU117 = TOOLCHAINS / "venv-cu117"   # torch 2.0.1+cu117 (PyPI's default CUDA build of 2.0.1)
SRC = TOOLCHAINS / "src"                 # where fixtures and sdists are unpacked and built

FLASH_ATTN = "flash-attn==2.8.3.post2"    # a real sdist with CUDA extensions
FLASH_ATTN_SDIST = SRC / "sdists" / "flash_attn-2.8.3.post2.tar.gz"

GZIP_ABOVE = 200 * 1024

# Package registries (and mirrors of them) are replaced by this host in every saved log.
PLACEHOLDER_HOST = "index.example"
_REGISTRY_HOSTS = [
    "files.pythonhosted.org", "pypi.org", "pypi.python.org", "test.pypi.org",
    "download.pytorch.org", "pypi.nvidia.com", "pypi.ngc.nvidia.com",
    "deb.debian.org", "security.debian.org", "snapshot.debian.org", "ftp.debian.org",
    "conda.anaconda.org", "repo.anaconda.com",
]
_TOKEN_PATTERNS = [
    (re.compile(r"(https?://)[^/\s:@]+:[^/\s@]+@"), r"\1"),                    # user:token@host
    (re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{20,}|pypi-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{20,})"),
     PLACEHOLDER_HOST),
]


def sanitize(text: str) -> str:
    for pattern, repl in _TOKEN_PATTERNS:
        text = pattern.sub(repl, text)
    for host in _REGISTRY_HOSTS:
        text = re.sub(r"(?<![\w.-])" + re.escape(host) + r"(?![\w-])", PLACEHOLDER_HOST, text)
    return text


def base_env(venv: Path | None) -> dict[str, str]:
    """A plain login-shell environment; with `venv`, as if it had been activated."""
    path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    env = {
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "PATH": path,
        # pip: only PyPI, no machine-specific configuration files
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    for keep in ("PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "TMPDIR"):
        if keep in os.environ:
            env[keep] = os.environ[keep]
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = f"{venv}/bin:{path}"
    return env


class Session:
    """One terminal session: commands run one after another, their output is concatenated."""

    def __init__(self, venv: Path | None = None, cwd: Path | None = None):
        self.env = base_env(venv)
        self.cwd = Path(cwd) if cwd else Path.cwd()
        self.parts: list[str] = []
        self.rcs: list[int] = []
        self.commands: list[str] = []

    def export(self, name: str, value: str, shown: str | None = None) -> None:
        """`export NAME=VALUE`; `shown` is how the value was typed (e.g. "$CUDA_HOME/bin:$PATH")."""
        self.parts.append(f"$ export {name}={shown or value}\n")
        self.env[name] = value

    def cd(self, path: Path, show: bool = True) -> None:
        if show:
            self.parts.append(f"$ cd {path}\n")
        self.cwd = Path(path)

    def run(self, cmd: str, timeout: int = 4 * 3600, record: bool = True) -> int:
        """Run `cmd` with bash exactly as written; record `$ cmd` and its output."""
        print(f"  $ {cmd}", file=sys.stderr, flush=True)
        p = subprocess.run(["bash", "-c", cmd], cwd=self.cwd, env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        out = p.stdout.decode("utf-8", "replace")
        if record:
            self.parts.append(f"$ {cmd}\n")
            self.parts.append(out if out.endswith("\n") or not out else out + "\n")
            self.commands.append(cmd)
            self.rcs.append(p.returncode)
        return p.returncode

    def quiet(self, cmd: str) -> str:
        """Run a helper command (not recorded) and return its stdout."""
        p = subprocess.run(["bash", "-c", cmd], cwd=self.cwd, env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return p.stdout.decode("utf-8", "replace").strip()

    @property
    def text(self) -> str:
        return "".join(self.parts)

    # -- tool versions for the sidecar -----------------------------------------------------
    def versions(self, nvcc: Path | None = None, torch: bool = True, cxx: str = "gcc",
                 extra: dict[str, str] | None = None) -> dict[str, str]:
        tools: dict[str, str] = {}
        if nvcc is not None:
            if Path(nvcc).is_dir():       # a CUDA_HOME
                nvcc = Path(nvcc) / "bin" / "nvcc"
            m = re.search(r"V(\d+\.\d+\.\d+)", self.quiet(f"{nvcc} --version"))
            if m:
                tools["nvcc"] = m.group(1)
        if torch and "VIRTUAL_ENV" in self.env:
            v = self.quiet("python -c 'import torch; print(torch.__version__)' 2>/dev/null")
            if v:
                tools["torch"] = v.splitlines()[-1]
        if "VIRTUAL_ENV" in self.env:
            tools["python"] = self.quiet("python -c 'import platform; print(platform.python_version())'")
            m = re.search(r"pip (\S+)", self.quiet("pip --version"))
            if m:
                tools["pip"] = m.group(1)
            st = self.quiet("python -c 'import setuptools; print(setuptools.__version__)' 2>/dev/null")
            if st:
                tools["setuptools"] = st
        if cxx == "gcc":
            tools["gcc"] = self.quiet("gcc -dumpfullversion")
        elif cxx:
            m = re.search(r"clang version (\S+)", self.quiet(f"{cxx} --version"))
            if m:
                tools["clang"] = m.group(1)
        for name, cmd in (extra or {}).items():
            tools[name] = self.quiet(cmd)
        return tools


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _toml_value(v) -> str:
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(type(v))


def write_case(slug: str, session: Session, *, title: str, command: str, tools: dict[str, str],
               outcome: str, causes: list[str], key_lines: list[str], fix: str = "",
               notes: str = "", risks: list[str] | None = None, must_contain: list[str] = ()) -> Path:
    """Check the capture against its expected answer, then write <slug>.log(.gz) and <slug>.toml.

    `must_contain` lists lines that are checked like key lines but not written (e.g. the warning a
    near-miss case is about, where no cause is expected)."""
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", slug):
        raise SystemExit(f"bad slug {slug!r}: lower-case words joined by '-'")
    text = sanitize(session.text)
    lines = text.splitlines()
    missing = [k for k in [*key_lines, *must_contain] if not any(k in line for line in lines)]
    if missing:
        raise SystemExit(f"{slug}: key lines not found in the log: {missing}")
    if command not in session.commands:
        raise SystemExit(f"{slug}: sidecar command was not run: {command!r}")
    rc = session.rcs[session.commands.index(command)]
    if (rc == 0) != (outcome == "success"):
        raise SystemExit(f"{slug}: outcome {outcome!r} but `{command}` exited with {rc}")

    CASES.mkdir(parents=True, exist_ok=True)
    for old in (CASES / f"{slug}.log", CASES / f"{slug}.log.gz"):
        old.unlink(missing_ok=True)
    data = text.encode("utf-8")
    if len(data) > GZIP_ABOVE:
        log = CASES / f"{slug}.log.gz"
        with gzip.GzipFile(log, "wb", mtime=0) as f:
            f.write(data)
    else:
        log = CASES / f"{slug}.log"
        log.write_bytes(data)

    fields = [
        ("title", title), ("provenance", "captured"), ("date", DATE), ("command", command),
        ("tools", tools), ("source", ""), ("outcome", outcome), ("causes", causes),
        ("key_lines", key_lines), ("risks", risks or []), ("fix", fix), ("notes", notes),
    ]
    toml = "".join(f"{k} = {_toml_value(v)}\n" for k, v in fields)
    tomllib.loads(toml)  # must parse
    (CASES / f"{slug}.toml").write_text(toml, encoding="utf-8")
    print(f"wrote {log.relative_to(ROOT)} ({len(data)} bytes, rc={rc})", file=sys.stderr)
    return log


def fresh_copy(fixture: str, dest_name: str | None = None) -> Path:
    """Copy a fixture project into SRC (a clean copy, no build leftovers)."""
    dest = SRC / (dest_name or fixture)
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(FIXTURES / fixture, dest)
    return dest


def fresh_sdist(tarball: Path) -> Path:
    """Unpack an sdist into SRC and return its folder."""
    import tarfile
    with tarfile.open(tarball) as tf:
        top = tf.getnames()[0].split("/")[0]
        dest = SRC / top
        if dest.exists():
            shutil.rmtree(dest)
        tf.extractall(SRC, filter="data")
    return dest


def clear_jit_cache() -> None:
    """Forget extensions built by earlier load() calls, so each JIT capture starts clean."""
    shutil.rmtree(Path(os.environ.get("HOME", "/root")) / ".cache" / "torch_extensions", ignore_errors=True)


def fetch_flash_attn_sdist() -> None:
    """Download the flash-attn sdist once (its metadata step needs torch, hence the cu130 venv)."""
    if FLASH_ATTN_SDIST.exists():
        return
    FLASH_ATTN_SDIST.parent.mkdir(parents=True, exist_ok=True)
    s = Session(VENV_CU130, FLASH_ATTN_SDIST.parent)
    s.env["CUDA_HOME"] = str(CUDA_13_0)
    s.run(f"pip download --no-deps --no-binary :all: --no-build-isolation {FLASH_ATTN}", record=False)


def make_venvs() -> None:
    """Create the three torch venvs if missing (torch from PyPI, CUDA builds)."""
    specs = {
        VENV_CU130: ["torch==2.14.1", "setuptools", "ninja", "packaging", "psutil", "numpy"],
        VENV_CU124: ["torch==2.5.1", "setuptools<76", "wheel", "ninja", "packaging", "psutil", "numpy<2"],
        VENV_CU117: ["torch==2.0.1", "setuptools<70", "wheel", "ninja", "packaging", "numpy<2"],
    }
    for venv, pkgs in specs.items():
        if (venv / "bin" / "python").exists():
            continue
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--no-cache-dir", *pkgs], check=True)


def selected(names: list[str]) -> set[str] | None:
    """Slugs named on the command line (None: all)."""
    return set(names) if names else None
