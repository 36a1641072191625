"""Synthetic failed-build logs of any size, with root causes buried at known lines.

A verbose flash-attn or xformers build is mostly noise that looks alarming to a naive matcher:
kilobyte-long nvcc and g++ command lines full of `-Werror=...` flags, ninja progress, compiler
warnings with their source excerpts, pip progress bars redrawn with carriage returns, colour codes,
CRLF stretches and CI timestamps. The generator writes that noise in bulk, buries the messages of
real root causes (the `fire` examples of the bundled rules) at random lines, ends the log the way
a failed pip build ends, and writes the ground truth beside the log as JSON.

    python -m bench.gen 100M /tmp/build-100M.log
    python -m bench.gen --kind preambles 100M /tmp/preambles-100M.log   # bench/preambles.py
    python -m bench.gen --kind flood 100M /tmp/flood-100M.log           # bench/flood.py

The other kinds: many repeated build jobs with incidents among them (a CI job that retries, a
matrix of builds), and a flood of distinct compiler errors with a few causes among them.

Generation is deterministic for a seed and size, and fast enough for 1 GB (noise is drawn from
pre-rendered pools).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import BinaryIO

GENERATOR_VERSION = 5
KINDS = ("build", "preambles", "flood")
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}

SITE = "/usr/local/lib/python3.11/site-packages"
TMP = "/tmp/pip-install-k2x8_9qa/flash-attn_5f1c0e2b9a3d4c6e"
BUILD = f"{TMP}/build/temp.linux-x86_64-cpython-311"
KERNELS = [f"flash_{kind}_hdim{d}_{t}_{c}sm80" for kind in ("fwd", "bwd", "fwd_split") for d in (32, 64, 96, 128, 160, 192, 224, 256)
           for t in ("fp16", "bf16") for c in ("", "causal_")]  # fmt: skip
CPP_SOURCES = ["flash_api", "fmha_api", "attention", "swiglu_op", "sparse_softmax", "rope"]


def parse_size(text: str) -> int:
    """`10M`, `1G`, `512K` or a plain number of bytes (binary units)."""
    match = re.fullmatch(r"(\d+)([KMG]?)i?B?", text.strip(), re.IGNORECASE)
    if not match:
        raise ValueError(f"not a size: {text!r}")
    return int(match.group(1)) * UNITS[match.group(2).upper()]


@dataclass(frozen=True)
class Buried:
    """One root cause placed in the log: the cause id the report must name, and where it is."""

    cause: str
    rule: str
    line: int
    text: str


@dataclass
class Truth:
    """What a generated log contains, written beside it as <log>.truth.json."""

    size: int
    seed: int
    version: int = GENERATOR_VERSION
    kind: str = "build"
    lines: int = 0
    bytes: int = 0
    buried: list[Buried] = field(default_factory=list)
    digest: str = ""  # of the generator's source (generator_digest): a changed generator writes its logs again
    attempts: int = 0  # preambles: how many build jobs the log holds
    error_lines: int = 0  # flood: how many distinct compiler error lines it wrote (buried ones apart)

    @property
    def causes(self) -> list[str]:
        return sorted({b.cause for b in self.buried})


# --------------------------------------------------------------------------------------------
# Noise pools: each entry is a block of text ending in a newline.


def _include_flags(rng: random.Random) -> str:
    dirs = [f"{TMP}/csrc/flash_attn", f"{TMP}/csrc/flash_attn/src", f"{TMP}/csrc/cutlass/include",
            f"{SITE}/torch/include", f"{SITE}/torch/include/torch/csrc/api/include", f"{SITE}/torch/include/TH",
            f"{SITE}/torch/include/THC", "/usr/local/cuda/include", "/usr/include/python3.11"]  # fmt: skip
    return " ".join(f"-I{d}" for d in dirs[: rng.randint(6, len(dirs))])


def nvcc_command(rng: random.Random, step: int, total: int) -> str:
    """A ninja step that runs nvcc: about 2-4 KB of flags, as torch.utils.cpp_extension writes them."""
    kernel = rng.choice(KERNELS)
    archs = rng.choice([(80,), (80, 90), (75, 80, 86, 89, 90)])
    gencode = " ".join(f"-gencode arch=compute_{a},code=sm_{a}" for a in archs)
    extra = " ".join(f"-DFLASH_{rng.choice('ABCDEFGH')}{i}=1" for i in range(rng.randint(0, 30)))
    return (
        f"[{step}/{total}] /usr/local/cuda/bin/nvcc --generate-dependencies-with-compile --dependency-output "
        f"{BUILD}/csrc/flash_attn/src/{kernel}.o.d {_include_flags(rng)} -c -c {TMP}/csrc/flash_attn/src/{kernel}.cu "
        f"-o {BUILD}/csrc/flash_attn/src/{kernel}.o -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ "
        "-D__CUDA_NO_BFLOAT16_CONVERSIONS__ -D__CUDA_NO_HALF2_OPERATORS__ --expt-relaxed-constexpr "
        "--compiler-options ''\"'\"'-fPIC'\"'\"'' -O3 -std=c++17 -U__CUDA_NO_HALF_OPERATORS__ "
        "-U__CUDA_NO_HALF_CONVERSIONS__ -U__CUDA_NO_HALF2_OPERATORS__ -U__CUDA_NO_BFLOAT16_CONVERSIONS__ "
        f"--expt-extended-lambda --use_fast_math -Xcompiler -Werror=return-type -Xcompiler -Werror=format "
        f"-Werror=cross-execution-space-call -Wno-deprecated-gpu-targets --ptxas-options=-v --ptxas-options=-O2 "
        f"-lineinfo {gencode} --threads 4 {extra} -DTORCH_API_INCLUDE_EXTENSION_H '-DPYBIND11_COMPILER_TYPE=\"_gcc\"' "
        "'-DPYBIND11_STDLIB=\"_libstdcpp\"' '-DPYBIND11_BUILD_ABI=\"_cxxabi1011\"' "
        "-DTORCH_EXTENSION_NAME=flash_attn_2_cuda -D_GLIBCXX_USE_CXX11_ABI=0 -ccbin g++\n"
    )


def gxx_command(rng: random.Random, step: int, total: int) -> str:
    """A ninja step that runs the host compiler on a .cpp file."""
    src = rng.choice(CPP_SOURCES)
    return (
        f"[{step}/{total}] c++ -MMD -MF {BUILD}/csrc/flash_attn/{src}.o.d -pthread -B /opt/conda/compiler_compat "
        "-Wno-unused-result -Wsign-compare -DNDEBUG -fwrapv -O2 -Wall -fPIC -O2 -isystem /opt/conda/include -fPIC "
        f"{_include_flags(rng)} -c -c {TMP}/csrc/flash_attn/{src}.cpp -o {BUILD}/csrc/flash_attn/{src}.o -O3 "
        "-std=c++17 -Werror -Werror=return-type -Wno-error=deprecated-declarations -DTORCH_API_INCLUDE_EXTENSION_H "
        "'-DPYBIND11_COMPILER_TYPE=\"_gcc\"' '-DPYBIND11_STDLIB=\"_libstdcpp\"' '-DPYBIND11_BUILD_ABI=\"_cxxabi1011\"' "
        "-DTORCH_EXTENSION_NAME=flash_attn_2_cuda -D_GLIBCXX_USE_CXX11_ABI=0\n"
    )


def nvcc_warning(rng: random.Random) -> str:
    """cudafe++ warnings on torch and cutlass headers, with their instantiation context."""
    header = rng.choice(["c10/util/irange.h(54)", "c10/core/TensorImpl.h(77)", "ATen/core/TensorBody.h(247)",
                         "c10/util/Half.h(469)", "ATen/core/boxing/impl/boxing.h(41)"])  # fmt: skip
    number, text = rng.choice([
        (186, "pointless comparison of unsigned integer with zero"),
        (20012, 'host annotation is ignored on a function("optional") that is explicitly defaulted on its first declaration'),
        (177, 'variable "smem_size" was declared but never referenced'),
        (550, 'variable "tidx" was set but never used'),
    ])  # fmt: skip
    depth = rng.randint(1, 4)
    frames = "".join(
        f'            instantiation of "void flash::compute_attn_1rowblock<Kernel_traits,Is_dropout,Is_causal>(const Params &, int, int, int)" '
        f"[with Kernel_traits=Flash_fwd_kernel_traits<{rng.choice((64, 128, 256))}, 128, 64, 4, false, false, cutlass::bfloat16_t>, "
        f"Is_dropout=true, Is_causal=false] at line {rng.randint(30, 900)} of {TMP}/csrc/flash_attn/src/flash_fwd_kernel.h\n"
        for _ in range(depth)
    )
    return (
        f"{SITE}/torch/include/{header}: warning #{number}-D: {text}\n          detected during:\n{frames}\n"
        'Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"\n\n'
    )


def gxx_warning(rng: random.Random) -> str:
    """g++ warnings with the include chain, the source excerpt and the caret line."""
    src = rng.choice(CPP_SOURCES)
    line, col = rng.randint(10, 900), rng.randint(3, 40)
    variable = rng.choice(["num_splits", "seqlen_k", "head_size_og", "softmax_lse", "out_accum"])
    kind = rng.random()
    if kind < 0.5:
        message = f"unused variable '{variable}' [-Wunused-variable]"
        excerpt = f"    const int {variable} = params.{variable};"
    elif kind < 0.8:
        message = "comparison of integer expressions of different signedness: 'int' and 'size_t' [-Wsign-compare]"
        excerpt = f"    for (int i = 0; i < {variable}.size(); ++i) {{"
    else:  # torch's own deprecation warning, very common in extension builds
        message = ("'at::DeprecatedTypeProperties& at::Tensor::type() const' is deprecated: Tensor.type() is deprecated. "
                   "Instead use Tensor.options(), which in many cases (e.g. in a constructor) is a drop-in replacement. "
                   "[-Wdeprecated-declarations]")  # fmt: skip
        excerpt = f'    AT_DISPATCH_FLOATING_TYPES({variable}.type(), "{src}", [&] {{'
    return (
        f"In file included from {SITE}/torch/include/ATen/Tensor.h:3,\n"
        f"                 from {TMP}/csrc/flash_attn/{src}.cpp:5:\n"
        f"{TMP}/csrc/flash_attn/{src}.cpp: In function 'void {src}_forward(at::Tensor&)':\n"
        f"{TMP}/csrc/flash_attn/{src}.cpp:{line}:{col}: warning: {message}\n"
        f"  {line} | {excerpt}\n"
        f"      | {' ' * col}^~~~~~~~~\n"
    )


def ptxas_info(rng: random.Random) -> str:
    """--ptxas-options=-v prints register and shared-memory usage per kernel."""
    kernel = rng.choice(KERNELS)
    return (
        f"ptxas info    : Compiling entry function '_ZN5flash{len(kernel)}{kernel}EvNS_16Flash_fwd_paramsE' for 'sm_80'\n"
        f"ptxas info    : Function properties for _ZN5flash{len(kernel)}{kernel}EvNS_16Flash_fwd_paramsE\n"
        f"    {rng.randint(0, 64)} bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        f"ptxas info    : Used {rng.randint(90, 255)} registers, {rng.randint(400, 600)} bytes cmem[0]\n"
    )


def progress_bar(rng: random.Random, name: str, total_mb: float) -> str:
    """pip's download bar: one line redrawn with carriage returns, in colour."""
    frames = []
    for step in range(1, 9):
        done = total_mb * step / 8
        filled = "━" * (5 * step)
        frames.append(f"   \x1b[38;5;197m{filled}\x1b[0m\x1b[38;5;237m{'━' * (40 - 5 * step)}\x1b[0m "
                      f"\x1b[32m{done:.1f}/{total_mb:.1f} MB\x1b[0m \x1b[31m{rng.uniform(20, 90):.1f} MB/s\x1b[0m "
                      f"eta \x1b[36m0:00:0{8 - step}\x1b[0m")  # fmt: skip
    return f"  Downloading {name} ({total_mb:.1f} MB)\n" + "\r".join(frames) + "\n"


def pip_block(rng: random.Random) -> str:
    """A burst of pip resolver output, as a CI job prints before and between builds."""
    pkgs = ["packaging-24.0-py3-none-any.whl", "einops-0.8.0-py3-none-any.whl", "ninja-1.11.1.1-py2.py3-none-manylinux1_x86_64.whl",
            "psutil-5.9.8-cp36-abi3-manylinux_2_17_x86_64.whl", "numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl"]  # fmt: skip
    out = []
    for pkg in rng.sample(pkgs, rng.randint(1, len(pkgs))):
        base = pkg.split("-")[0]
        out.append(f"Collecting {base}\n")
        out.append(progress_bar(rng, pkg, rng.uniform(0.1, 20)))
    return "".join(out)


def noise_unit(rng: random.Random, step: int, total: int) -> str:
    """One ninja step and what the compiler printed for it."""
    parts = [nvcc_command(rng, step, total) if rng.random() < 0.8 else gxx_command(rng, step, total)]
    for _ in range(rng.randint(0, 6)):
        parts.append(nvcc_warning(rng) if rng.random() < 0.6 else gxx_warning(rng))
    if rng.random() < 0.3:
        parts.append(ptxas_info(rng))
    return "".join(parts)


PREAMBLE = """$ MAX_JOBS=8 pip install -v --no-build-isolation flash-attn==2.5.8
Using pip 24.0 from {site}/pip (python 3.11)
Collecting flash-attn==2.5.8
  Downloading flash_attn-2.5.8.tar.gz (2.5 MB)
  Preparing metadata (setup.py): started
  Running command python setup.py egg_info
  torch.__version__  = 2.3.0+cu121
  running egg_info
  Preparing metadata (setup.py): finished with status 'done'
Requirement already satisfied: torch in {site} (from flash-attn==2.5.8) (2.3.0+cu121)
Building wheels for collected packages: flash-attn
  Building wheel for flash-attn (setup.py): started
  Running command python setup.py bdist_wheel
  running bdist_wheel
  Guessing wheel URL:  https://github.com/Dao-AILab/flash-attention/releases/download/v2.5.8/flash_attn-2.5.8+cu122torch2.3cxx11abiFALSE-cp311-cp311-linux_x86_64.whl
  Precompiled wheel not found. Building from source...
  running build
  running build_py
  running build_ext
  building 'flash_attn_2_cuda' extension
  Emitting ninja build file {build}/build.ninja...
  Compiling objects...
  Allowing ninja to set a default number of workers... (overridable by setting the environment variable MAX_JOBS=N)
"""

ENDING = """FAILED: {build}/csrc/flash_attn/src/flash_bwd_hdim256_bf16_sm80.o
ninja: build stopped: subcommand failed.
Traceback (most recent call last):
  File "{site}/torch/utils/cpp_extension.py", line 2107, in _run_ninja_build
    subprocess.run(
  File "/opt/conda/lib/python3.11/subprocess.py", line 571, in run
    raise CalledProcessError(retcode, process.args,
subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "<string>", line 2, in <module>
  File "{site}/torch/utils/cpp_extension.py", line 2123, in _run_ninja_build
    raise RuntimeError(message) from e
RuntimeError: Error compiling objects for extension
error: subprocess-exited-with-error

× python setup.py bdist_wheel did not run successfully.
│ exit code: 1
╰─> See above for output.

note: This error originates from a subprocess, and is likely not a problem with pip.
  Building wheel for flash-attn (setup.py): finished with status 'error'
  ERROR: Failed building wheel for flash-attn
Failed to build flash-attn
ERROR: Could not build wheels for flash-attn, which is required to install pyproject.toml-based projects
"""


# --------------------------------------------------------------------------------------------
# Causes to bury: the rules' own examples, limited to rules that prove a cause on their own line.


@dataclass(frozen=True)
class Example:
    cause: str
    rule: str
    text: str


def burial_examples() -> list[Example]:
    """Fire examples of cause rules that need no condition beyond their own text.

    Rules with a context, command or facts condition, or that override other causes, depend on
    surroundings the noise does not provide, so their examples would not be fair ground truth.
    """
    from bench.rules import bundled_rules, self_proving

    return [Example(r.cause, r.id, text) for r in bundled_rules() if self_proving(r) for text in r.fire]


def pick_burials(rng: random.Random, examples: Sequence[Example], count: int) -> list[Example]:
    """`count` examples of distinct causes (as many as there are causes when fewer)."""
    by_cause: dict[str, list[Example]] = {}
    for ex in examples:
        by_cause.setdefault(ex.cause, []).append(ex)
    causes = rng.sample(sorted(by_cause), min(count, len(by_cause)))
    return [rng.choice(by_cause[c]) for c in causes]


# --------------------------------------------------------------------------------------------
# Styles: how a stretch of the log is dressed (CI prefix, colour, line ends).

STYLES = ("plain", "plain", "plain", "timestamps", "timestamps", "crlf", "ansi")


def dress(text: str, style: str, rng: random.Random, clock: list[float]) -> str:
    """Apply a segment style to complete lines of text."""
    if style == "crlf":
        return text.replace("\n", "\r\n")
    if style == "ansi":
        text = text.replace("warning:", "\x1b[0;1;35mwarning:\x1b[0m").replace("error:", "\x1b[0;1;31merror:\x1b[0m")
        return text.replace("FAILED:", "\x1b[31mFAILED: \x1b[0m")
    if style == "timestamps":
        clock[0] += rng.uniform(0.001, 2.0)
        stamp = _stamp(clock[0])
        return "".join(f"{stamp} {line}\n" for line in text.split("\n")[:-1])
    return text


def _stamp(seconds: float) -> str:
    whole = int(seconds)
    h, m, s = 10 + whole // 3600 % 12, whole // 60 % 60, whole % 60
    return f"2024-05-14T{h:02d}:{m:02d}:{s:02d}.{int((seconds % 1) * 1e7):07d}Z"


# --------------------------------------------------------------------------------------------


class Writer:
    """Writes text to the log, counting lines so that buried causes get their true numbers."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.lines = 0
        self.bytes = 0

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        self.out.write(data)
        self.lines += data.count(b"\n")
        self.bytes += len(data)


def _noise_stream(rng: random.Random) -> Iterator[str]:
    """Endless noise from pre-rendered pools (fast, still varied)."""
    total = 8192
    pool_nvcc = [nvcc_command(rng, 1, total) for _ in range(96)]
    pool_gxx = [gxx_command(rng, 1, total) for _ in range(32)]
    pool_warn = [nvcc_warning(rng) for _ in range(160)] + [gxx_warning(rng) for _ in range(96)]
    pool_ptxas = [ptxas_info(rng) for _ in range(48)]
    step = 2
    yield pip_block(rng)  # a build log opens with pip resolving and downloading (progress bars)
    while True:
        command = rng.choice(pool_nvcc) if rng.random() < 0.8 else rng.choice(pool_gxx)
        parts = [f"[{step % total + 1}/{total}]" + command[command.index("]") + 1 :]]
        parts += rng.choices(pool_warn, k=rng.randint(0, 6))
        if rng.random() < 0.3:
            parts.append(rng.choice(pool_ptxas))
        if rng.random() < 0.01:
            parts.append(pip_block(rng))
        step += 1
        yield "".join(parts)


def generate(path: Path, size: int, seed: int = 1, causes: int = 4) -> Truth:
    """Write a failed-build log of about `size` bytes to `path`; return (and save) the ground truth."""
    rng = random.Random(seed)
    examples = pick_burials(rng, burial_examples(), causes) if causes else []
    truth = Truth(size=size, seed=seed)
    fill = max(0, size - 12_000)
    spots = sorted(rng.uniform(0.02, 0.98) * fill for _ in examples)
    clock = [rng.uniform(0, 3600)]
    with path.open("wb") as raw:
        out = Writer(raw)
        out.write(PREAMBLE.format(site=SITE, build=BUILD))
        noise = _noise_stream(rng)
        pending = list(zip(spots, examples, strict=True))
        first = rng.sample(sorted(set(STYLES)), len(set(STYLES)))  # every style early, even in a small log
        while out.bytes < fill:
            style = first.pop() if first else rng.choice(STYLES)
            segment = "".join(next(noise) for _ in range(rng.randint(2, 25)))
            out.write(dress(segment, style, rng, clock))
            while pending and out.bytes >= pending[0][0]:
                _, example = pending.pop(0)
                _bury(out, example, style, rng, clock, truth)
        for _, example in pending:
            _bury(out, example, "plain", rng, clock, truth)
        out.write(ENDING.format(site=SITE, build=BUILD))
    truth.lines, truth.bytes = out.lines, out.bytes
    return save_truth(path, truth)


def generate_kind(kind: str, path: Path, size: int, seed: int = 1, causes: int | None = None) -> Truth:
    """Write a log of one kind (see KINDS); `causes` is how many incidents to bury (None: the kind's default)."""
    if kind == "build":
        return generate(path, size, seed, 4 if causes is None else causes)
    if kind == "preambles":
        from bench.preambles import generate_preambles

        return generate_preambles(path, size, seed, causes)
    if kind == "flood":
        from bench.flood import generate_flood

        return generate_flood(path, size, seed, causes)
    raise ValueError(f"unknown kind {kind!r} (one of {', '.join(KINDS)})")


MODULES = {"build": ("gen.py",), "preambles": ("gen.py", "preambles.py"), "flood": ("gen.py", "flood.py")}


def generator_digest(kind: str) -> str:
    """A hash of the source files that write a kind of log."""
    import hashlib

    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in MODULES[kind]:
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:16]


def save_truth(log: Path, truth: Truth) -> Truth:
    truth.digest = generator_digest(truth.kind)
    truth_path(log).write_text(json.dumps(asdict(truth), indent=1) + "\n", "utf-8")
    return truth


def _bury(out: Writer, example: Example, style: str, rng: random.Random, clock: list[float], truth: Truth) -> None:
    """Write one cause's lines, dressed like the stretch around it, and record where it landed."""
    if example.rule.startswith("compiler-") or rng.random() < 0.5:  # as the failing compile step shows it
        out.write(dress(f"FAILED: {BUILD}/csrc/flash_attn/src/{rng.choice(KERNELS)}.o\n", style, rng, clock))
    text = example.text if example.text.endswith("\n") else example.text + "\n"
    truth.buried.append(Buried(example.cause, example.rule, out.lines + 1, example.text))
    out.write(dress(text, style, rng, clock))


def truth_path(log: Path) -> Path:
    return log.with_name(log.name + ".truth.json")


def load_truth(log: Path) -> Truth | None:
    """The ground truth saved beside a generated log, or None when absent or from another generator."""
    try:
        raw = json.loads(truth_path(log).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if raw.get("version") != GENERATOR_VERSION:
        return None
    raw["buried"] = [Buried(**b) for b in raw.get("buried", [])]
    return Truth(**raw)


def ensure(path: Path, size: int, seed: int = 1, causes: int | None = None, kind: str = "build") -> Truth:
    """Generate unless the same log (kind, size, seed, generator version and source) is already there.

    A log whose buried lines are no longer examples that fire on their own (the rules changed) is
    generated again: its ground truth would no longer be fair.
    """
    truth = load_truth(path)
    fair = {(e.rule, e.text) for e in burial_examples()}
    if (
        truth
        and truth.kind == kind
        and truth.digest == generator_digest(kind)
        and truth.size == size
        and truth.seed == seed
        and (causes is None or len(truth.buried) == causes)
        and path.exists()
        and path.stat().st_size == truth.bytes
        and all((b.rule, b.text) in fair for b in truth.buried)
    ):
        return truth
    return generate_kind(kind, path, size, seed, causes)


def one_long_line(path: Path, size: int) -> None:
    """A single line of `size` bytes and no newline at all: a minified or binary-ish paste."""
    _repeat(path, (b"0123456789abcdef -Werror=format -gencode arch=compute_80,code=sm_80 " * 1024)[: 1 << 16], size)


def nul_file(path: Path, size: int) -> None:
    """`size` NUL bytes: what a truncated or pre-allocated log file reads as."""
    _repeat(path, bytes(1 << 20), size)


def _repeat(path: Path, block: bytes, size: int) -> None:
    """`block` over and over, cut at exactly `size` bytes."""
    with path.open("wb") as out:
        left = size
        while left > 0:
            out.write(block[: min(left, len(block))])
            left -= len(block)


def flood_file(path: Path, size: int) -> None:
    """`size` bytes in which every line is a compiler error: the worst case for the first pass,
    which selects every line (a template error cascading through thousands of instantiations)."""
    with path.open("wb") as out:
        written, n = 0, 0
        while written < size:
            lines = b"".join(
                b'csrc/flash_attn/src/kernel_%d.cu(%d): error: identifier "tile_%d" is undefined\n' % (i, i % 997, i)
                for i in range(n, n + 10_000)
            )
            lines = lines[: size - written]
            out.write(lines)
            written += len(lines)
            n += 10_000


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("size", help="e.g. 10M, 100M, 1G")
    parser.add_argument("path", type=Path)
    parser.add_argument(
        "--kind", choices=KINDS, default="build",
        help="build: one verbose failed build; preambles: many repeated build jobs (a CI retry or matrix) with "
        "incidents among them; flood: distinct compiler errors by the hundred thousand, a few causes among them",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--causes", type=int, default=None, help="how many incidents to bury (default: build 4, preambles 20, flood 5)"
    )
    args = parser.parse_args(argv)
    truth = generate_kind(args.kind, args.path, parse_size(args.size), args.seed, args.causes)
    summary = {"kind": truth.kind, "lines": truth.lines, "bytes": truth.bytes, "causes": truth.causes}
    if truth.attempts:
        summary["attempts"] = truth.attempts
    if truth.error_lines:
        summary["error_lines"] = truth.error_lines
    json.dump(summary, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
