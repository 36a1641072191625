"""The environment a build will meet: what to ask the machine, how to read the answers, and the header.

`buildlog run` writes this header into the log before the build's output, and `buildlog doctor`
judges it without building; `explain` reads the header's lines as facts (knowledge/facts.toml,
`buildlog-run-header`). Everything here but `collect` is a pure function of the text a tool printed,
so it is tested with recorded outputs, without a GPU. `collect` asks through the `run` callable it
is given and reads only the environment mapping it is given.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

HEADER_BEGIN = "=== buildlog environment (recorded by buildlog before the command) ==="
HEADER_END = "=== end of buildlog environment ==="
PREFIX = "[buildlog env] "
SETTINGS = ("MAX_JOBS", "TORCH_CUDA_ARCH_LIST", "CUDA_HOME", "NVCC_THREADS")
MODULES = ("torch", "ninja", "packaging", "wheel", "setuptools", "psutil", "einops")

# Runs argv, returns (exit code, output) or None when the program is not there or hangs.
Runner = Callable[[Sequence[str]], "tuple[int, str] | None"]

# The interpreter's own report, printed as one JSON line: version, paths, torch and its build.
PYTHON_PROBE = r"""
import json, sys, importlib.util as u
d = {"python": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable,
     "prefix": sys.prefix, "base_prefix": getattr(sys, "base_prefix", sys.prefix),
     "modules": [m for m in MODULES if u.find_spec(m) is not None]}
try:
    import torch
    d["torch"] = torch.__version__
    d["torch_cuda"] = torch.version.cuda
    d["cxx11_abi"] = bool(torch._C._GLIBCXX_USE_CXX11_ABI)
except Exception as e:
    d["torch_error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(d))
"""


@dataclass(frozen=True)
class Gpu:
    name: str
    cc: str | None = None


@dataclass(frozen=True)
class Environment:
    """What the probe found; None where a tool is missing or said nothing."""

    nvcc: str | None = None
    nvcc_path: str | None = None
    cuda_home: str | None = None
    torch: str | None = None
    torch_cuda: str | None = None
    torch_abi: bool | None = None
    torch_error: str | None = None
    driver: str | None = None
    driver_cuda: str | None = None
    gpus: tuple[Gpu, ...] = ()
    gcc: str | None = None
    python: str | None = None
    interpreter: str | None = None
    venv: str | None = None
    ram_gb: int | None = None
    cores: int | None = None
    settings: dict[str, str] = field(default_factory=dict)
    modules: tuple[str, ...] = ()
    ninja: str | None = None  # the ninja program on PATH


def nvcc_release(text: str) -> str | None:
    """`Cuda compilation tools, release 12.8, V12.8.93` -> 12.8."""
    match = re.search(r"release (\d+\.\d+)", text)
    return match.group(1) if match else None


def smi_gpus(text: str) -> tuple[tuple[Gpu, ...], str | None]:
    """`nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader` -> GPUs, driver."""
    gpus, driver = [], None
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 3 or not parts[0] or parts[0].startswith(("name", "NVIDIA-SMI has failed")):
            continue
        cc = parts[1] if re.fullmatch(r"\d+\.\d+", parts[1]) else None
        gpus.append(Gpu(parts[0], cc))
        driver = driver or (parts[2] if re.fullmatch(r"\d+(?:\.\d+)+", parts[2]) else None)
    return tuple(gpus), driver


def smi_driver_cuda(text: str) -> str | None:
    """The `CUDA Version: 12.8` of nvidia-smi's banner: the newest CUDA the driver runs."""
    match = re.search(r"CUDA Version:\s*(\d+\.\d+)", text)
    return match.group(1) if match else None


def gcc_version(text: str) -> str | None:
    """`gcc -dumpfullversion -dumpversion` -> 13.3.0."""
    match = re.match(r"\s*(\d+(?:\.\d+)*)\s*$", text)
    return match.group(1) if match else None


def meminfo_gb(text: str) -> int | None:
    """/proc/meminfo's MemTotal in whole GB."""
    match = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, re.MULTILINE)
    return round(int(match.group(1)) / 1024 / 1024) if match else None


def python_report(text: str) -> dict[str, object]:
    """The interpreter's JSON line (see PYTHON_PROBE); {} when it printed something else."""
    for line in reversed(text.strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return {}


def interpreter_for(argv: Sequence[str], which: Callable[[str], str | None]) -> str | None:
    """The Python the command will run in: itself, the one a pip script names, else python3 on PATH."""
    if argv:
        name = os.path.basename(argv[0])
        if re.fullmatch(r"python(?:\d+(?:\.\d+)?)?(?:\.exe)?", name):
            return which(argv[0]) or argv[0]
        if re.fullmatch(r"pip(?:\d+(?:\.\d+)?)?(?:\.exe)?", name):
            script = which(argv[0])
            shebang = _shebang(script) if script else None
            if shebang:
                return shebang
    return which("python3") or which("python")


def _shebang(path: str) -> str | None:
    try:
        with open(path, "rb") as script:
            first = script.readline(400).decode("utf-8", "replace")
    except OSError:
        return None
    match = re.match(r"#!\s*(\S*python[\d.]*)\s*$", first)
    return match.group(1) if match else None


def collect(argv: Sequence[str], env: Mapping[str, str], run: Runner, read: Callable[[str], str | None]) -> Environment:
    """Ask the machine: nvcc, nvidia-smi, gcc, the interpreter the command will use, memory, cores."""
    path = env.get("PATH", os.defpath)

    def which(name: str) -> str | None:
        return shutil.which(name, path=path)

    nvcc_path = which("nvcc")
    cuda_home = env.get("CUDA_HOME") or env.get("CUDA_PATH") or None
    if nvcc_path is None and cuda_home and os.path.exists(os.path.join(cuda_home, "bin", "nvcc")):
        nvcc_path = os.path.join(cuda_home, "bin", "nvcc")
    nvcc = _answer(run, [nvcc_path, "--version"], nvcc_release) if nvcc_path else None
    gpus, driver = (), None
    driver_cuda = None
    smi = which("nvidia-smi")
    if smi:
        found = run([smi, "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"])
        if found and found[0] == 0:
            gpus, driver = smi_gpus(found[1])
        driver_cuda = _answer(run, [smi], smi_driver_cuda)
    gcc = _answer(run, [env.get("CC") or "gcc", "-dumpfullversion", "-dumpversion"], gcc_version)
    interpreter = interpreter_for(argv, which)
    report: dict[str, object] = {}
    if interpreter:
        answer = run([interpreter, "-c", f"MODULES = {MODULES!r}\n{PYTHON_PROBE}"])
        report = python_report(answer[1]) if answer else {}
    prefix, base = report.get("prefix"), report.get("base_prefix")
    venv = env.get("VIRTUAL_ENV") or env.get("CONDA_PREFIX") or (prefix if prefix and prefix != base else None)
    meminfo = read("/proc/meminfo")
    return Environment(
        nvcc=nvcc, nvcc_path=nvcc_path, cuda_home=cuda_home,
        torch=_str(report.get("torch")), torch_cuda=_str(report.get("torch_cuda")),
        torch_abi=report.get("cxx11_abi") if isinstance(report.get("cxx11_abi"), bool) else None,  # type: ignore[arg-type]
        torch_error=_str(report.get("torch_error")), driver=driver, driver_cuda=driver_cuda, gpus=gpus, gcc=gcc,
        python=_str(report.get("python")), interpreter=_str(report.get("executable")) or interpreter,
        venv=_str(venv), ram_gb=meminfo_gb(meminfo) if meminfo else None, cores=_cores(),
        settings={k: env[k] for k in SETTINGS if env.get(k)},
        modules=tuple(m for m in report.get("modules", []) if isinstance(m, str)),  # type: ignore[union-attr]
        ninja=which("ninja"),
    )  # fmt: skip


def _answer(run: Runner, argv: list[str], parse: Callable[[str], str | None]) -> str | None:
    found = run(argv)
    return parse(found[1]) if found and found[0] == 0 else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _cores() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def header(found: Environment, when: str = "") -> list[str]:
    """The header's lines, one fact per line, in the words the `buildlog-run-header` fact pattern reads."""
    lines = [HEADER_BEGIN]

    def add(label: str, value: object | None, note: str = "") -> None:
        lines.append(f"{PREFIX}{label}: " + ("not found" if value is None else f"{value}{note}"))

    if when:
        lines.append(f"{PREFIX}date: {when}")
    add("nvcc", found.nvcc, f" ({found.nvcc_path})" if found.nvcc_path else "")
    add("torch", found.torch)
    if found.torch:
        add("torch CUDA", found.torch_cuda or "None")
        if found.torch_abi is not None:
            add("torch C++ ABI", "_GLIBCXX_USE_CXX11_ABI=" + ("1" if found.torch_abi else "0"))
    elif found.torch_error:
        lines.append(f"{PREFIX}torch import: {found.torch_error[:200]}")
    add("driver", found.driver, f" (CUDA {found.driver_cuda})" if found.driver_cuda else "")
    for gpu in found.gpus:
        add("GPU", gpu.name, f" (compute capability {gpu.cc})" if gpu.cc else "")
    add("gcc", found.gcc)
    add("python", found.python, f" ({found.interpreter})" if found.interpreter else "")
    if found.venv:
        add("venv", found.venv)
    add("RAM GB", found.ram_gb)
    add("cores", found.cores)
    for name in SETTINGS:
        add(name, found.settings.get(name) or "unset")
    add("python modules", ", ".join(found.modules) or "none of " + ", ".join(MODULES))
    add("ninja", found.ninja)
    lines.append(HEADER_END)
    return lines


def footer(code: int | None, seconds: float, interrupted: bool) -> str:
    """The line after the command's output: how it ended."""
    if interrupted:
        return f"=== buildlog: the command was interrupted (Ctrl-C, SIGINT) after {seconds:.1f} s; exit code {code} ==="
    return f"=== buildlog: the command exited with code {code} after {seconds:.1f} s ==="


@dataclass(frozen=True)
class Need:
    """What one package's source build needs, from its own install instructions."""

    package: str
    modules: tuple[str, ...]  # Python modules its build imports, in the environment that builds
    command: str  # how its instructions say to install it from source
    cuda_min: str | None = None  # the oldest CUDA toolkit it builds with
    ninja: bool = True  # builds in parallel only with ninja (else for hours)
    source: str = ""


PACKAGE_NEEDS = {
    need.package: need
    for need in (
        Need("flash-attn", ("torch", "packaging", "ninja", "wheel"), "pip install flash-attn --no-build-isolation",
             cuda_min="12.0", source="https://github.com/Dao-AILab/flash-attention#installation-and-features"),
        Need("xformers", ("torch", "ninja", "wheel"),
             "pip install -v --no-build-isolation -U git+https://github.com/facebookresearch/xformers.git@main#egg=xformers",
             source="https://github.com/facebookresearch/xformers#installing-xformers"),
        Need("apex", ("torch", "packaging", "wheel"),
             'pip install -v --disable-pip-version-check --no-cache-dir --no-build-isolation --config-settings "--build-option=--cpp_ext" --config-settings "--build-option=--cuda_ext" ./',
             source="https://github.com/NVIDIA/apex#from-source"),
        Need("torch-extension", ("torch", "ninja", "setuptools"), "pip install --no-build-isolation .",
             source="https://pytorch.org/docs/stable/cpp_extension.html"),
    )
}  # fmt: skip
CXX17_GCC_MIN = 9  # torch 2.1 and newer build extensions as C++17; gcc 9 is the first with full C++17


@dataclass(frozen=True)
class Problem:
    """Something the probe predicts for a build, before it runs."""

    id: str
    severity: str  # error: the build would fail; warning: it would be slow or break later
    title: str
    fix: str = ""


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def package_problems(found: Environment, need: Need) -> list[Problem]:
    """What stands between this environment and building `need.package` from source."""
    problems = []
    if "torch" in need.modules and not found.torch:
        problems.append(Problem(
            "torch_missing", "error", f"{need.package} builds against torch, which this Python cannot import"
            + (f" ({found.torch_error})" if found.torch_error else ""),
            f"Install the torch you want first (it decides the CUDA to build with), then build without isolation:\n$ pip install torch\n$ {need.command}",
        ))  # fmt: skip
    missing = [m for m in need.modules if m != "torch" and m not in found.modules]
    if need.ninja and "ninja" in missing and found.ninja:
        missing.remove("ninja")  # the program is there; the build finds it on PATH
    if missing:
        severity = "error" if set(missing) - {"ninja", "wheel"} else "warning"
        title = f"{need.package}'s build imports {', '.join(missing)}, missing from this Python"
        if missing == ["ninja"]:
            title = "ninja is missing: the build would compile one file at a time (hours for flash-attn)"
        problems.append(Problem("build_modules_missing", severity, title,
                                f"Install them where the build runs (with --no-build-isolation pip does not):\n$ pip install {' '.join(missing)}"))  # fmt: skip
    if not found.nvcc:
        problems.append(Problem(
            "nvcc_missing", "error", f"No nvcc on PATH or in CUDA_HOME: {need.package}'s CUDA kernels cannot be compiled",
            "Install a CUDA toolkit that matches torch's CUDA and point the build at it:\n$ export CUDA_HOME=/usr/local/cuda-X.Y\n$ export PATH=$CUDA_HOME/bin:$PATH",
        ))  # fmt: skip
    elif need.cuda_min and _version_key(found.nvcc) < _version_key(need.cuda_min):
        problems.append(Problem(
            "cuda_too_old_for_package", "error", f"{need.package} needs CUDA {need.cuda_min} or newer; nvcc here is {found.nvcc}",
            f"Install CUDA {need.cuda_min}+ (the release torch was built with) and point CUDA_HOME at it.",
        ))  # fmt: skip
    if found.gcc and _version_key(found.gcc)[0] < CXX17_GCC_MIN:
        problems.append(Problem(
            "gcc_too_old_for_cxx17", "error", f"gcc {found.gcc} lacks the C++17 that torch's extension headers need",
            "Use gcc 9 or newer (one nvcc supports):\n$ export CC=gcc-12 CXX=g++-12",
        ))  # fmt: skip
    return problems
