"""A log of many build jobs: a CI job that retries, or a matrix of builds, in one file.

Every job is a pip/setuptools build as pip -v prints it: the command (a CI step, a prompt or a
`bash -x` trace), `Collecting ...` and `Requirement already satisfied: ...` for the dependencies,
`Installing build dependencies ... done`, the package's setup output (`running build_ext`,
`building 'flash_attn_2_cuda' extension`, `Emitting ninja build file ...`, the MAX_JOBS line),
ninja's `[12/85] .../nvcc ...` progress and the link, wheel and install lines. Versions (python,
pip, torch and its CUDA, the package), paths, MAX_JOBS and step counts vary from job to job; some
jobs install a cached wheel, some resume a build. About one job per 100 KB: a thousand in 100 MB.

Among them, at random jobs, incidents: the message of a real root cause (a bundled rule's `fire`
example) with a few lines of the context it comes with: a pip resolver error where pip resolves,
a traceback in the setup code, a failed ninja step, a failing import after the install. The job
with an incident ends the way such a failure ends, and the next one is a retry.

    python -m bench.gen --kind preambles 100M /tmp/preambles-100M.log
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.gen import STYLES, Buried, Example, Truth, Writer, burial_examples, dress, save_truth

INCIDENTS = 20  # at 10 MB and above; fewer in smaller logs
FULL_SIZE = 10 << 20

PYTHONS = [("3.10", "310"), ("3.11", "311"), ("3.12", "312")]
TORCHES = [("2.1.2", "cu118", "11.8"), ("2.2.2", "cu121", "12.1"), ("2.3.1", "cu121", "12.1"),
           ("2.4.1", "cu124", "12.4"), ("2.5.1", "cu124", "12.4"), ("2.6.0", "cu126", "12.6")]  # fmt: skip
PIPS = ["23.3.1", "24.0", "24.2", "24.3.1", "25.0.1"]
ARCH_LISTS = ["8.0", "8.0;9.0", "8.0;8.6;9.0", "7.5;8.0;8.6;8.9;9.0"]
TORCH_DEPS = [("filelock", "", "3.15.4"), ("typing-extensions", ">=4.8.0", "4.12.2"), ("sympy", "", "1.13.1"),
              ("networkx", "", "3.3"), ("jinja2", "", "3.1.4"), ("fsspec", "", "2024.6.1"),
              ("nvidia-cuda-nvrtc-cu12", "==12.1.105", "12.1.105"), ("nvidia-cuda-runtime-cu12", "==12.1.105", "12.1.105"),
              ("nvidia-cuda-cupti-cu12", "==12.1.105", "12.1.105"), ("nvidia-cudnn-cu12", "==9.1.0.70", "9.1.0.70"),
              ("nvidia-cublas-cu12", "==12.1.3.1", "12.1.3.1"), ("nvidia-cufft-cu12", "==11.0.2.54", "11.0.2.54"),
              ("nvidia-curand-cu12", "==10.3.2.106", "10.3.2.106"), ("nvidia-cusolver-cu12", "==11.4.5.107", "11.4.5.107"),
              ("nvidia-cusparse-cu12", "==12.1.0.106", "12.1.0.106"), ("nvidia-nccl-cu12", "==2.20.5", "2.20.5"),
              ("nvidia-nvtx-cu12", "==12.1.105", "12.1.105"), ("triton", "==2.3.1", "2.3.1"),
              ("nvidia-nvjitlink-cu12", "", "12.6.20"), ("MarkupSafe", ">=2.0", "2.1.5"), ("mpmath", "<1.4,>=1.1.0", "1.3.0")]  # fmt: skip


@dataclass(frozen=True)
class Package:
    name: str
    versions: tuple[str, ...]
    extension: str
    sources: tuple[str, ...]
    modules: tuple[str, ...]
    deps: tuple[tuple[str, str], ...]  # (name, version) besides torch


_FA_SRC = tuple(f"csrc/flash_attn/src/flash_{k}_hdim{d}_{t}{c}_sm80.cu" for k in ("fwd", "bwd", "fwd_split")
                for d in (32, 64, 96, 128, 160, 192, 224, 256) for t in ("fp16", "bf16") for c in ("", "_causal"))  # fmt: skip
PACKAGES = [
    Package("flash-attn", ("2.5.6", "2.5.8", "2.5.9.post1", "2.6.3", "2.7.0.post2", "2.7.4.post1"), "flash_attn_2_cuda",
            ("csrc/flash_attn/flash_api.cpp", *_FA_SRC),
            tuple(f"flash_attn/{m}.py" for m in ("__init__", "bert_padding", "flash_attn_interface", "flash_attn_triton",
                  "flash_blocksparse_attention", "fused_softmax", "layers/rotary", "layers/patch_embed", "losses/cross_entropy",
                  "models/gpt", "models/llama", "models/bert", "models/vit", "modules/mha", "modules/mlp", "modules/block",
                  "modules/embedding", "ops/layer_norm", "ops/rms_norm", "ops/fused_dense", "ops/activations",
                  "ops/triton/rotary", "ops/triton/layer_norm", "ops/triton/cross_entropy", "utils/generation",
                  "utils/benchmark", "utils/distributed", "utils/pretrained")),
            (("einops", "0.8.0"),)),
    Package("xformers", ("0.0.26.post1", "0.0.27.post2", "0.0.28.post3"), "xformers._C",
            tuple(f"xformers/csrc/attention/cuda/fmha/kernels/cutlass{d}_{t}_aligned_k{k}.cu" for d in "FB"
                  for t in ("bf16", "f16", "f32") for k in (32, 64, 128, 65536))
            + ("xformers/csrc/attention/attention.cpp", "xformers/csrc/swiglu/cuda/swiglu_packedw.cu"),
            tuple(f"xformers/{m}.py" for m in ("__init__", "info", "ops/fmha/__init__", "ops/fmha/cutlass", "ops/fmha/flash",
                  "ops/fmha/triton_splitk", "ops/swiglu_op", "ops/rmsnorm", "components/attention/core")),
            (("numpy", "1.26.4"),)),
    Package("causal-conv1d", ("1.2.2.post1", "1.4.0", "1.5.0.post8"), "causal_conv1d_cuda",
            ("csrc/causal_conv1d.cpp", "csrc/causal_conv1d_fwd.cu", "csrc/causal_conv1d_bwd.cu", "csrc/causal_conv1d_update.cu"),
            ("causal_conv1d/__init__.py", "causal_conv1d/causal_conv1d_interface.py", "causal_conv1d/cpp_functions.py"),
            (("packaging", "24.1"), ("ninja", "1.11.1.1"))),
    Package("mamba-ssm", ("2.2.2", "2.2.4"), "selective_scan_cuda",
            ("csrc/selective_scan/selective_scan.cpp",
             *(f"csrc/selective_scan/selective_scan_{d}_{t}{c}.cu" for d in ("fwd", "bwd") for t in ("fp32", "fp16", "bf16")
               for c in (("",) if d == "fwd" else ("_real", "_complex"))),),
            tuple(f"mamba_ssm/{m}.py" for m in ("__init__", "modules/mamba_simple", "modules/mamba2", "ops/selective_scan_interface",
                  "ops/triton/layer_norm", "ops/triton/ssd_combined", "models/mixer_seq_simple", "utils/generation")),
            (("einops", "0.8.0"), ("transformers", "4.44.2"), ("packaging", "24.1"))),
]  # fmt: skip
WEIGHTS = [6, 2, 1, 1]

# Where an incident's message stands in a job, by cause (and by rule, where a rule says otherwise).
STAGE_OF_CAUSE = {
    "externally_managed_pip": "resolve", "no_matching_distribution": "resolve", "dependency_conflict": "resolve",
    "cuda_home_missing": "setup", "cuda_version_mismatch": "setup", "missing_build_dependency": "setup",
    "driver_too_old": "run", "abi_mismatch": "run",
}  # fmt: skip
STAGE_OF_RULE = {
    "nvcc-not-found-shell": "compile", "host-compiler-not-found": "compile", "nvcc-too-old-for-torch-std": "compile",
    "torch-gxx-too-old": "setup", "torch-unknown-cuda-arch": "setup", "no-kernel-image": "run",
    "torch-gpu-not-compatible": "run", "flash-attn-gpu-too-old": "run", "driver-container-requirement": "container",
    "ninja-interrupted": "interrupt", "ci-timeout": "interrupt",
}  # fmt: skip
_EXCEPTION = re.compile(r"^(?:[\w.]+(?:Error|Exception)|\w+Error):")


def stage_of(example: Example) -> str:
    return STAGE_OF_RULE.get(example.rule) or STAGE_OF_CAUSE.get(example.cause, "compile")


def pick_incidents(rng: random.Random, examples: Sequence[Example], count: int) -> list[Example]:
    """`count` incidents: every cause once before any cause twice, other rules of a cause before
    other examples of the same rule; in random order."""
    by_cause: dict[str, list[Example]] = {}
    for ex in examples:
        by_cause.setdefault(ex.cause, []).append(ex)
    queues = []
    for cause in rng.sample(sorted(by_cause), len(by_cause)):
        items = rng.sample(by_cause[cause], len(by_cause[cause]))
        seen: dict[str, int] = {}
        ranked = []
        for i, ex in enumerate(items):  # the n-th example of its rule gets rank n
            seen[ex.rule] = seen.get(ex.rule, -1) + 1
            ranked.append((seen[ex.rule], i, ex))
        queues.append([ex for _, _, ex in sorted(ranked, key=lambda t: t[:2])])
    picked: list[Example] = []
    while len(picked) < count and any(queues):
        for queue in queues:
            if queue and len(picked) < count:
                picked.append(queue.pop(0))
    return rng.sample(picked, len(picked))


def default_incidents(size: int) -> int:
    return INCIDENTS if size >= FULL_SIZE else max(1, round(INCIDENTS * size / FULL_SIZE))


def _hex(rng: random.Random, n: int) -> str:
    return f"{rng.getrandbits(4 * n):0{n}x}"


def _token(rng: random.Random, n: int = 8) -> str:
    return "".join(rng.choices("abcdefghijklmnopqrstuvwxyz0123456789_", k=n))


class Job:
    """One build job: its environment, drawn at random, and the text it prints."""

    def __init__(self, rng: random.Random, number: int, retry_of: int | None) -> None:
        self.rng = rng
        self.number = number
        self.retry_of = retry_of
        self.pkg = rng.choices(PACKAGES, WEIGHTS)[0]
        self.version = rng.choice(self.pkg.versions)
        self.py, self.cp = rng.choice(PYTHONS)
        self.torch, self.cu, self.cuda = rng.choice(TORCHES)
        self.pip = rng.choice(PIPS)
        self.jobs = rng.choice((2, 4, 4, 8, 8, 8, 16, 32))
        self.arch = rng.choice(ARCH_LISTS)
        where = rng.randrange(4)
        self.prefix = ("/usr/local", "/opt/conda", f"/home/runner/work/{self.pkg.name}/.venv", f"/builds/ml/train/venv-{self.cp}")[where]  # fmt: skip
        self.site = f"{self.prefix}/lib/python{self.py}/site-packages"
        self.tmp = f"/tmp/pip-install-{_token(rng)}/{self.pkg.name.replace('-', '_')}_{_hex(rng, 32)}"
        self.lib = f"build/lib.linux-x86_64-cpython-{self.cp}"
        self.temp = f"{self.tmp}/build/temp.linux-x86_64-cpython-{self.cp}"
        newer = [c for c in ("12.4", "12.6", "12.8") if c.split(".")[0] == self.cuda.split(".")[0] and c > self.cuda]
        self.toolkit = (
            rng.choice(newer) if newer and rng.random() < 0.3 else self.cuda
        )  # a newer minor: torch only warns
        self.nvcc = f"/usr/local/cuda-{self.toolkit}/bin/nvcc"
        self.isolated = rng.random() < 0.3
        self.spec = f"{self.pkg.name}=={self.version}"
        self.header_style = rng.choice(("gh", "gh", "prompt", "xtrace"))

    # -- sections ------------------------------------------------------------------------------

    def header(self) -> list[str]:
        flags = "" if self.isolated else " --no-build-isolation"
        command = f"pip install -v{flags} {self.spec}"
        out = []
        if self.retry_of is not None:
            out.append(f"##[warning]Attempt {self.retry_of} failed. Reason: Child_process exited with error code 1")
        if self.header_style == "gh":
            out += [f"##[group]Run MAX_JOBS={self.jobs} {command}", f"MAX_JOBS={self.jobs} {command}",
                    "shell: /usr/bin/bash -e {0}", "env:", f"  TORCH_CUDA_ARCH_LIST: {self.arch}",
                    f"  CUDA_HOME: /usr/local/cuda-{self.toolkit}", f"  pythonLocation: {self.prefix}", "##[endgroup]"]  # fmt: skip
        elif self.header_style == "prompt":
            out += [f"(ci) runner@gpu-node-{self.number % 64:02d}:~/src$ export TORCH_CUDA_ARCH_LIST=\"{self.arch}\"",
                    f"(ci) runner@gpu-node-{self.number % 64:02d}:~/src$ MAX_JOBS={self.jobs} {command}"]  # fmt: skip
        else:
            out += [
                f"+ export TORCH_CUDA_ARCH_LIST='{self.arch}'",
                f"+ MAX_JOBS={self.jobs}",
                f"+ python{self.py} -m {command}",
            ]
        out.append(f"Using pip {self.pip} from {self.site}/pip (python {self.py})")
        return out

    def resolve(self) -> list[str]:
        rng, pkg = self.rng, self.pkg
        sdist = f"{pkg.name.replace('-', '_')}-{self.version}.tar.gz"
        mb = rng.uniform(0.05, 9.0)
        out = [f"Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/{self.cu}",
               f"Collecting {self.spec}", f"  Downloading {sdist} ({mb:.1f} MB)",
               f"     {'━' * 40} {mb:.1f}/{mb:.1f} MB {rng.uniform(5, 120):.1f} MB/s eta 0:00:00"]  # fmt: skip
        if self.isolated:
            out += ["  Installing build dependencies ... done", "  Getting requirements to build wheel ... done",
                    "  Preparing metadata (pyproject.toml) ... done"]  # fmt: skip
        else:
            out += ["  Preparing metadata (setup.py) ... done"]
        out.append(f"Requirement already satisfied: torch in {self.site} (from {self.spec}) ({self.torch}+{self.cu})")
        for name, version in pkg.deps:
            if rng.random() < 0.5:
                out.append(f"Requirement already satisfied: {name} in {self.site} (from {self.spec}) ({version})")
            else:
                out += [f"Collecting {name} (from {self.spec})",
                        f"  Using cached {name}-{version}-py3-none-any.whl.metadata ({rng.randint(2, 90)} kB)"]  # fmt: skip
        for name, spec, version in rng.sample(TORCH_DEPS, rng.randint(8, len(TORCH_DEPS))):
            out.append(
                f"Requirement already satisfied: {name}{spec} in {self.site} (from torch->{self.spec}) ({version})"
            )
        return out

    def setup(self) -> list[str]:
        rng, pkg = self.rng, self.pkg
        how = "pyproject.toml" if self.isolated else "setup.py"
        out = [
            f"Building wheels for collected packages: {pkg.name}",
            f"  Building wheel for {pkg.name} ({how}): started",
        ]
        out.append("  Running command python setup.py bdist_wheel" if not self.isolated else
                   f"  Running command Building wheel for {pkg.name} ({how})")  # fmt: skip
        if pkg.name == "flash-attn":
            tag = f"cu{self.cuda.split('.')[0]}torch{'.'.join(self.torch.split('.')[:2])}cxx11abiFALSE"
            out += ["", "", f"  torch.__version__  = {self.torch}+{self.cu}", "", "", "  running bdist_wheel",
                    f"  Guessing wheel URL:  https://github.com/Dao-AILab/flash-attention/releases/download/v{self.version}/"
                    f"flash_attn-{self.version}+{tag}-cp{self.cp}-cp{self.cp}-linux_x86_64.whl",
                    "  Precompiled wheel not found. Building from source..."]  # fmt: skip
        else:
            out.append("  running bdist_wheel")
        out += ["  running build", "  running build_py"]
        dirs = sorted({m.rsplit("/", 1)[0] for m in pkg.modules})
        out += [f"  creating {self.lib}/{d}" for d in dirs]
        out += [f"  copying {m} -> {self.lib}/{m.rsplit('/', 1)[0]}" for m in pkg.modules]
        egg = pkg.name.replace("-", "_")
        out += ["  running egg_info", f"  writing {egg}.egg-info/PKG-INFO",
                f"  writing dependency_links to {egg}.egg-info/dependency_links.txt",
                f"  writing requirements to {egg}.egg-info/requires.txt", f"  writing top-level names to {egg}.egg-info/top_level.txt",
                f"  reading manifest file '{egg}.egg-info/SOURCES.txt'", "  adding license file 'LICENSE'",
                f"  writing manifest file '{egg}.egg-info/SOURCES.txt'", "  running build_ext"]  # fmt: skip
        if self.toolkit != self.cuda:
            out.append(f"  {self.site}/torch/utils/cpp_extension.py:{rng.choice((418, 424, 495))}: UserWarning: The detected "
                       f"CUDA version ({self.toolkit}) has a minor version mismatch with the version that was used to compile "
                       f"PyTorch ({self.cuda}). Most likely this shouldn't be a problem.")  # fmt: skip
        return out

    def compile_intro(self) -> list[str]:
        out = [f"  building '{self.pkg.extension}' extension"]
        out += [f"  creating {self.temp}/{d}" for d in sorted({s.rsplit("/", 1)[0] for s in self.pkg.sources})]
        out += [f"  Emitting ninja build file {self.temp}/build.ninja...", "  Compiling objects..."]
        if self.rng.random() < 0.7:
            out.append(f"  Using envvar MAX_JOBS ({self.jobs}) as the number of workers...")
        else:
            out.append(
                "  Allowing ninja to set a default number of workers... (overridable by setting the environment variable MAX_JOBS=N)"
            )
        return out

    def _flags(self) -> tuple[str, str, str]:
        site, rng = self.site, self.rng
        includes = " ".join(f"-I{d}" for d in (f"{self.tmp}/csrc", f"{self.tmp}/csrc/cutlass/include",
                            f"{site}/torch/include", f"{site}/torch/include/torch/csrc/api/include", f"{site}/torch/include/TH",
                            f"{site}/torch/include/THC", f"/usr/local/cuda-{self.toolkit}/include", f"{self.prefix}/include/python{self.py}"))  # fmt: skip
        archs = [a.replace(".", "") for a in self.arch.split(";")]
        gencode = " ".join(f"-gencode arch=compute_{a},code=sm_{a}" for a in archs)
        defines = f"-DTORCH_API_INCLUDE_EXTENSION_H -DTORCH_EXTENSION_NAME={self.pkg.extension.split('.')[-1]} -D_GLIBCXX_USE_CXX11_ABI=0"
        cuda = (f"-D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ -D__CUDA_NO_BFLOAT16_CONVERSIONS__ "
                f"-D__CUDA_NO_HALF2_OPERATORS__ --expt-relaxed-constexpr --compiler-options ''\"'\"'-fPIC'\"'\"'' -O3 "
                f"-std=c++17 --expt-extended-lambda --use_fast_math {gencode} --threads {rng.choice((1, 2, 4))} {defines} -ccbin g++")  # fmt: skip
        cxx = f"-O3 -std=c++17 {defines}"
        return includes, cuda, cxx

    def chatter(self, count: int) -> list[list[str]]:
        """What compile steps print besides their command: warnings on torch's headers, ptxas usage."""
        rng, site = self.rng, self.site
        out = []
        for _ in range(count):
            kind = rng.random()
            if kind < 0.4:
                header = rng.choice(
                    ("c10/util/irange.h(54)", "c10/core/TensorImpl.h(77)", "ATen/core/TensorBody.h(247)")
                )
                number, text = rng.choice(((186, "pointless comparison of unsigned integer with zero"),
                                           (177, 'variable "smem_size" was declared but never referenced')))  # fmt: skip
                out.append([f"{site}/torch/include/{header}: warning #{number}-D: {text}", "          detected during:",
                            f'            instantiation of "void flash::compute_attn<Kernel_traits,Is_dropout,Is_causal>'
                            f'(const Params &)" at line {rng.randint(30, 900)} of {self.tmp}/csrc/flash_attn/src/flash_fwd_kernel.h',
                            "", 'Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"', ""])  # fmt: skip
            elif kind < 0.7:
                src = rng.choice(self.pkg.sources[:1])
                line, col = rng.randint(10, 900), rng.randint(3, 40)
                var = rng.choice(("num_splits", "seqlen_k", "head_size_og", "softmax_lse", "out_accum"))
                out.append([f"{self.tmp}/{src}: In function 'void run_mha_fwd(Flash_fwd_params&, cudaStream_t, bool)':",
                            f"{self.tmp}/{src}:{line}:{col}: warning: unused variable '{var}' [-Wunused-variable]",
                            f"  {line} |     const int {var} = params.{var};", f"      | {' ' * col}^~~~~~~~~"])  # fmt: skip
            else:
                entry = f"_ZN5flash{rng.randint(10, 99)}compute_attn_{_hex(rng, 6)}EvNS_16Flash_fwd_paramsE"
                out.append([f"ptxas info    : Compiling entry function '{entry}' for 'sm_{self.arch.split(';')[-1].replace('.', '')}'",
                            f"ptxas info    : Function properties for {entry}",
                            f"    {rng.randint(0, 64)} bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
                            f"ptxas info    : Used {rng.randint(90, 255)} registers, {rng.randint(400, 600)} bytes cmem[0]"])  # fmt: skip
        return out

    def step(self, flags: tuple[str, str, str], k: int, n: int, source: str) -> str:
        includes, cuda, cxx = flags
        obj = f"{self.temp}/{source.rsplit('.', 1)[0]}.o"
        if source.endswith(".cu"):
            return (f"[{k}/{n}] {self.nvcc} --generate-dependencies-with-compile --dependency-output {obj}.d {includes} "
                    f"-c -c {self.tmp}/{source} -o {obj} {cuda}")  # fmt: skip
        return f"[{k}/{n}] c++ -MMD -MF {obj}.d -pthread -B {self.prefix}/compiler_compat -fPIC {includes} -c -c {self.tmp}/{source} -o {obj} {cxx}"

    def link_and_install(self) -> list[str]:
        rng, pkg = self.rng, self.pkg
        so = f"{pkg.extension.replace('.', '/')}.cpython-{self.cp}-x86_64-linux-gnu.so"
        objs = " ".join(f"{self.temp}/{s.rsplit('.', 1)[0]}.o" for s in pkg.sources[:12])
        how = "pyproject.toml" if self.isolated else "setup.py"
        egg = pkg.name.replace("-", "_")
        wheel = f"{egg}-{self.version}-cp{self.cp}-cp{self.cp}-linux_x86_64.whl"
        out = [f"  g++ -pthread -B {self.prefix}/compiler_compat -shared -Wl,-rpath,{self.prefix}/lib {objs} "
               f"-L{self.site}/torch/lib -L/usr/local/cuda-{self.toolkit}/lib64 -lc10 -ltorch -ltorch_cpu -ltorch_python -lcudart "
               f"-lc10_cuda -ltorch_cuda -o {self.lib}/{so}",
               "  installing to build/bdist.linux-x86_64/wheel", "  running install", "  running install_lib"]  # fmt: skip
        out += [
            f"  copying {self.lib}/{m} -> build/bdist.linux-x86_64/wheel/{m.rsplit('/', 1)[0]}" for m in pkg.modules
        ]
        out += ["  running install_egg_info",
                f"  Copying {egg}.egg-info to build/bdist.linux-x86_64/wheel/{egg}-{self.version}-py{self.py}.egg-info",
                "  running install_scripts", f"  creating build/bdist.linux-x86_64/wheel/{egg}-{self.version}.dist-info/WHEEL",
                f"  creating '/tmp/pip-wheel-{_token(rng)}/.tmp-{_token(rng)}/{wheel}' and adding 'build/bdist.linux-x86_64/wheel' to it"]  # fmt: skip
        out += [f"  adding '{m}'" for m in (so, *pkg.modules)]
        out += ["  removing build/bdist.linux-x86_64/wheel", f"  Building wheel for {pkg.name} ({how}): finished with status 'done'",
                f"  Created wheel for {pkg.name}: filename={wheel} size={rng.randint(2_000_000, 400_000_000)} sha256={_hex(rng, 64)}",
                f"  Stored in directory: /root/.cache/pip/wheels/{_hex(rng, 2)}/{_hex(rng, 2)}/{_hex(rng, 60)}",
                f"Successfully built {pkg.name}"]  # fmt: skip
        return out + self.installed()

    def cached(self) -> list[str]:
        egg = self.pkg.name.replace("-", "_")
        return [f"Processing /root/.cache/pip/wheels/{_hex(self.rng, 2)}/{_hex(self.rng, 2)}/{_hex(self.rng, 60)}/"
                f"{egg}-{self.version}-cp{self.cp}-cp{self.cp}-linux_x86_64.whl"]  # fmt: skip

    def installed(self) -> list[str]:
        names = [n for n, _ in self.pkg.deps if self.rng.random() < 0.3]
        versions = dict(self.pkg.deps)
        return [f"Installing collected packages: {', '.join([*names, self.pkg.name])}",
                "Successfully installed " + " ".join([*(f"{n}-{versions[n]}" for n in names), f"{self.pkg.name}-{self.version}"])]  # fmt: skip

    def smoke(self) -> list[str]:
        module = self.pkg.modules[0].split("/")[0]
        return [f"+ python{self.py} -c 'import torch, {module}; print(torch.__version__, {module}.__version__)'",
                f"{self.torch}+{self.cu} {self.version}"]  # fmt: skip

    # -- endings after an incident ----------------------------------------------------------------

    def pip_failure(self) -> list[str]:
        how = "pyproject.toml" if self.isolated else "setup.py"
        name = self.pkg.name
        return ["  error: subprocess-exited-with-error", "",
                "  × python setup.py bdist_wheel did not run successfully." if not self.isolated else
                f"  × Building wheel for {name} ({how}) did not run successfully.",
                "  │ exit code: 1", "  ╰─> See above for output.", "",
                "  note: This error originates from a subprocess, and is likely not a problem with pip.",
                f"  Building wheel for {name} ({how}): finished with status 'error'",
                f"  ERROR: Failed building wheel for {name}", f"Failed to build {name}",
                f"ERROR: Could not build wheels for {name}, which is required to install pyproject.toml-based projects"]  # fmt: skip

    def ninja_failure(self) -> list[str]:
        s = self.site
        return ["  ninja: build stopped: subcommand failed.", "  Traceback (most recent call last):",
                f'    File "{s}/torch/utils/cpp_extension.py", line 2107, in _run_ninja_build', "      subprocess.run(",
                f'    File "{self.prefix}/lib/python{self.py}/subprocess.py", line 571, in run',
                "      raise CalledProcessError(retcode, process.args,",
                f"  subprocess.CalledProcessError: Command '['ninja', '-v', '-j', '{self.jobs}']' returned non-zero exit status 1.",
                "", "  The above exception was the direct cause of the following exception:", "",
                "  Traceback (most recent call last):", '    File "<string>", line 2, in <module>',
                f'    File "{s}/torch/utils/cpp_extension.py", line 2123, in _run_ninja_build',
                "      raise RuntimeError(message) from e", "  RuntimeError: Error compiling objects for extension"]  # fmt: skip

    def ci_failure(self) -> list[str]:
        return ["##[error]Process completed with exit code 1."] if self.header_style == "gh" else []


@dataclass
class Placed:
    """An incident's text as one element of a job's lines."""

    example: Example


def job_lines(job: Job, rng: random.Random, incident: Example | None) -> list[str | Placed]:
    """The lines of one job; the incident (if any) as a Placed element where it happens."""
    stage = stage_of(incident) if incident else None
    lines: list[str | Placed] = list(job.header())
    if stage == "container":
        return [*lines, f"+ docker run --rm --gpus all nvcr.io/nvidia/pytorch:24.0{rng.randint(1, 9)}-py3 nvidia-smi",
                "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
                "runtime create failed: runc create failed: unable to start container process: error during container init: "
                "error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'",
                Placed(incident), *job.ci_failure()]  # fmt: skip
    resolve = job.resolve()
    if stage == "resolve":
        # pip refuses an externally managed interpreter before it resolves anything
        cut = 0 if incident.cause == "externally_managed_pip" else rng.randint(2, len(resolve))
        return [*lines, *resolve[:cut], Placed(incident), *job.ci_failure()]
    lines += resolve
    build = stage in ("setup", "compile", "interrupt") or rng.random() < 0.8
    if not build:
        lines += job.cached() + job.installed()
    else:
        setup = job.setup()
        if stage == "setup":
            context = ["  Traceback (most recent call last):", '    File "<string>", line 2, in <module>',
                       '    File "<pip-setuptools-caller>", line 34, in <module>',
                       f'    File "{job.tmp}/setup.py", line {rng.randint(150, 500)}, in <module>', "      CUDAExtension(",
                       f'    File "{job.site}/torch/utils/cpp_extension.py", line {rng.randint(1000, 1200)}, in CUDAExtension',
                       "      library_dirs += library_paths(cuda=True)"]  # fmt: skip
            if not _EXCEPTION.match(incident.text):
                context = []
            return [*lines, *setup, *context, Placed(incident), *job.pip_failure(), *job.ci_failure()]
        lines += setup + job.compile_intro()
        flags = job._flags()
        resumed = stage is None and rng.random() < 0.2
        sources = (
            rng.sample(job.pkg.sources, rng.randint(1, min(12, len(job.pkg.sources)))) if resumed else job.pkg.sources
        )
        n = len(sources)
        fail_at = rng.randint(1, n) if stage in ("compile", "interrupt") else 0
        chatter = job.chatter(6)
        for k, source in enumerate(sources, start=1):
            lines.append(job.step(flags, k, n, source))
            if rng.random() < 0.5:
                lines += rng.choice(chatter)
            if k == fail_at:
                if stage == "interrupt":
                    return [*lines, Placed(incident)]
                obj = f"{job.temp}/{source.rsplit('.', 1)[0]}.o"
                step = job.step(flags, k, n, source)
                return [*lines, f"FAILED: {obj}", step[step.index("] ") + 2 :], Placed(incident),
                        *job.ninja_failure(), *job.pip_failure(), *job.ci_failure()]  # fmt: skip
        lines += job.link_and_install()
    if stage == "run":
        module = job.pkg.modules[0].split("/")[0]
        return [*lines, f"+ python{job.py} -c 'import torch, {module}; print(torch.cuda.get_device_name())'",
                "Traceback (most recent call last):", '  File "<string>", line 1, in <module>',
                f'  File "{job.site}/{module}/__init__.py", line 3, in <module>',
                f"    from {module}.{job.pkg.modules[2].split('/')[-1][:-3]} import *",
                Placed(incident), *job.ci_failure()]  # fmt: skip
    if rng.random() < 0.5:
        lines += job.smoke()
    return lines


def generate_preambles(path: Path, size: int, seed: int = 1, causes: int | None = None) -> Truth:
    """Write about `size` bytes of build jobs with incidents among them; return (and save) the truth."""
    rng = random.Random(f"preambles:{seed}")
    count = default_incidents(size) if causes is None else causes
    incidents = pick_incidents(rng, burial_examples(), count)
    truth = Truth(size=size, seed=seed, kind="preambles")
    spots = sorted(rng.uniform(0.02, 0.97) * size for _ in incidents)
    pending = list(zip(spots, incidents, strict=True))
    clock = [rng.uniform(0, 3600)]
    with path.open("wb") as raw:
        out = Writer(raw)
        number, retry_of = 0, None
        # stop where the next job would overshoot `size` by more than it falls short (jobs are ~100 KB)
        while out.bytes + (out.bytes / number if number else 0) / 2 < size or pending:
            number += 1
            incident = pending.pop(0)[1] if pending and out.bytes >= pending[0][0] else None
            if incident is None and out.bytes >= size:  # the log is full: what is left gets a job of its own
                incident = pending.pop(0)[1]
            job = Job(rng, number, retry_of)
            style = rng.choice(STYLES)
            lines = job_lines(job, rng, incident)
            # jobs run from a few KB to ~200 KB: near the end, a plain job that would pass the size carries
            # the next incident still due instead, and one that would overshoot by more than the log still
            # falls short is left out (how large the log gets must not hang on the last draws)
            if incident is None and out.bytes and out.bytes + _approx_bytes(lines) > size:
                if pending:
                    incident = pending.pop(0)[1]
                    lines = job_lines(job, rng, incident)
                elif out.bytes + _approx_bytes(lines) - size > size - out.bytes:
                    number -= 1
                    break
            _write_job(out, lines, style, rng, clock, truth)
            retry_of = number if incident else None
    truth.lines, truth.bytes, truth.attempts = out.lines, out.bytes, number
    return save_truth(path, truth)


def _approx_bytes(lines: list[str | Placed]) -> int:
    return sum(len(item.example.text if isinstance(item, Placed) else item) + 1 for item in lines)


def _write_job(
    out: Writer, lines: list[str | Placed], style: str, rng: random.Random, clock: list[float], truth: Truth
) -> None:
    texts: list[str] = []
    at = out.lines
    for item in lines:
        if isinstance(item, Placed):
            ex = item.example
            truth.buried.append(Buried(ex.cause, ex.rule, at + 1, ex.text))
            texts.append(ex.text.rstrip("\n"))
            at += ex.text.rstrip("\n").count("\n") + 1
        else:
            texts.append(item)
            at += 1
    out.write(dress("\n".join(texts) + "\n", style, rng, clock))
