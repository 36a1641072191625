"""A flood of distinct compiler errors: a template error cascading through a whole build.

About 100,000 error diagnostics per 100 MB, every one a different line: nvcc's
`path(123): error: ...` with its `detected during:` instantiation frames, and gcc's
`path:12:5: error: ...` with the `In instantiation of` / `required from here` lines, the source
excerpt and the caret. Files, line numbers, columns and identifiers vary (no two error lines are
the same text; many still read alike once numbers are masked, as a cascade does). The translation
units are ninja steps that fail one after another. A few real root causes (bundled rules' `fire`
examples) are buried among the errors at random places.

The ground truth also says how many error lines were written (`error_lines`, the buried ones
apart), so a report can be checked for losing none of them from its counts.

    python -m bench.gen --kind flood 100M /tmp/flood-100M.log
"""

from __future__ import annotations

import random
from pathlib import Path

from bench.gen import (
    BUILD,
    ENDING,
    KERNELS,
    SITE,
    TMP,
    Buried,
    Truth,
    Writer,
    burial_examples,
    pick_burials,
    save_truth,
)

ERRORS_PER_100M = 100_000
BURIED = 5

_A = ("smem", "tile", "acc", "frag", "gmem", "tOrO", "tSrS", "row", "col", "lse", "scale", "mask", "block", "warp",
      "thread", "seqlen", "head", "softmax", "dropout", "alibi", "rotary", "page", "split", "cache", "bias", "qk", "pv",
      "dq", "dk", "dv")  # fmt: skip
_B = ("ptr", "idx", "size", "stride", "offset", "tmp", "max", "sum", "m", "n", "k", "q", "v", "o", "acc", "layout",
      "shape", "copy", "iter", "base")  # fmt: skip
TYPES = ("cutlass::half_t", "cutlass::bfloat16_t", "float", "at::Half", "c10::BFloat16", "int64_t", "const Params &",
         "cute::Tensor<cute::ViewEngine<cute::half_t *>, Layout>", "Flash_fwd_params", "uint32_t")  # fmt: skip
NAMESPACES = ("cute", "cutlass", "flash", "at", "c10", "torch")
CLASSES = ("Flash_fwd_params", "Flash_bwd_params", "Kernel_traits", "BlockInfo<true>", "Softmax<2>", "Mask<true, false>",
           "cute::TiledMMA<MMA_Atom, Layout>", "at::TensorOptions")  # fmt: skip
NVCC_MESSAGES = (
    'identifier "{a}" is undefined',
    'no instance of overloaded function "{ns}::{a}" matches the argument list',
    'class "{cls}" has no member "{a}"',
    'namespace "{ns}" has no member "{a}"',
    "expression must have a constant value",
    'a value of type "{t1}" cannot be used to initialize an entity of type "{t2}"',
    "too few arguments in function call",
    'no suitable conversion function from "{t1}" to "{t2}" exists',
    'incomplete type "{cls}" is not allowed',
    'argument of type "{t1}" is incompatible with parameter of type "{t2}"',
)
GCC_MESSAGES = (
    "'{a}' was not declared in this scope",
    "'{a}' is not a member of '{ns}'",
    "no matching function for call to '{a}({t1}&, {t2}&)'",
    "expected ';' before '{a}'",
    "invalid conversion from '{t1}' to '{t2}' [-fpermissive]",
    "'class at::Tensor' has no member named '{a}'",
    "request for member '{a}' in '{b}', which is of non-class type 'int'",
    "cannot convert '{t1}' to '{t2}' in initialization",
)
HEADERS = ("flash_fwd_kernel.h", "flash_bwd_kernel.h", "softmax.h", "utils.h", "mask.h", "rotary.h", "block_info.h",
           "kernel_traits.h", "flash_fwd_launch_template.h", "flash_bwd_launch_template.h", "alibi.h", "dropout.h")  # fmt: skip
HOST = ("flash_api.cpp", "fmha_api.cpp", "attention.cpp", "rope.cpp", "sparse_softmax.cpp", "swiglu_op.cpp")


def default_errors(size: int) -> int:
    return max(1, round(ERRORS_PER_100M * size / (100 << 20)))


GCC_SHARE = 0.3  # of the error lines, in gcc's form


def _files() -> tuple[list[str], list[str]]:
    """The files an nvcc error and a gcc error can point into."""
    src = f"{TMP}/csrc/flash_attn/src"
    cutlass = f"{TMP}/csrc/cutlass/include"
    nvcc = [f"{src}/{k}.cu" for k in KERNELS] + [f"{src}/{h}" for h in HEADERS]
    nvcc += [f"{cutlass}/cute/{h}" for h in ("tensor.hpp", "algorithm/copy.hpp", "algorithm/gemm.hpp", "atom/mma_atom.hpp",
                                            "atom/copy_atom.hpp", "layout.hpp", "swizzle.hpp", "arch/mma_sm80.hpp")]  # fmt: skip
    gcc = [f"{TMP}/csrc/flash_attn/{h}" for h in HOST]
    gcc += [f"{SITE}/torch/include/{h}" for h in (
        "ATen/core/TensorBody.h", "ATen/Dispatch.h", "ATen/ops/empty.h", "ATen/core/Tensor.h", "ATen/TensorIndexing.h",
        "ATen/core/ivalue.h", "ATen/core/boxing/impl/boxing.h", "ATen/cuda/CUDAContext.h", "c10/core/TensorImpl.h",
        "c10/util/Half.h", "c10/util/Optional.h", "c10/core/ScalarType.h", "c10/cuda/CUDAStream.h",
        "torch/csrc/api/include/torch/types.h", "torch/csrc/api/include/torch/nn/module.h", "torch/extension.h",
        "pybind11/pybind11.h", "pybind11/cast.h", "pybind11/detail/common.h")]  # fmt: skip
    return nvcc, gcc


def _frames(rng: random.Random, count: int) -> list[str]:
    """Pre-rendered nvcc `instantiation of` lines (the bulk of a cascade)."""
    src = f"{TMP}/csrc/flash_attn/src"
    out = []
    for _ in range(count):
        fn = rng.choice(
            ("compute_attn_1rowblock", "compute_attn", "compute_dq_dk_dv_1colblock", "compute_attn_1rowblock_splitkv")
        )
        traits = f"Flash_fwd_kernel_traits<{rng.choice((32, 64, 96, 128, 256))}, {rng.choice((64, 128))}, {rng.choice((32, 64, 128))}, 4, false, false, {rng.choice(TYPES[:2])}>"  # fmt: skip
        out.append(
            f'            instantiation of "void flash::{fn}<Kernel_traits,Is_dropout,Is_causal,Is_even_MN,Is_even_K>'
            f"(const Params &, int, int, int) [with Kernel_traits={traits}, Is_dropout={rng.choice(('true', 'false'))}, "
            f'Is_causal={rng.choice(("true", "false"))}, Is_even_MN=true, Is_even_K=true]" at line {rng.randint(30, 1200)} '
            f"of {src}/{rng.choice(HEADERS)}"
        )
    return out


def _required(rng: random.Random, count: int, host: list[str]) -> list[str]:
    """Pre-rendered gcc `required from` lines."""
    return [
        f"{rng.choice(host)}:{rng.randint(10, 900)}:{rng.randint(3, 60)}:   required from "
        f"'void {rng.choice(_A)}_{rng.choice(_B)}_kernel(at::Tensor&) [with scalar_t = {rng.choice(TYPES[3:5])}]'"
        for _ in range(count)
    ]


def generate_flood(path: Path, size: int, seed: int = 1, causes: int | None = None, errors: int | None = None) -> Truth:
    """Write about `size` bytes holding `errors` distinct compiler error lines (default: 100,000
    per 100 MB) and `causes` buried root causes (default 5); return (and save) the ground truth."""
    rng = random.Random(f"flood:{seed}")
    errors = default_errors(size) if errors is None else errors
    examples = pick_burials(rng, burial_examples(), BURIED if causes is None else causes)
    at = sorted(rng.sample(range(errors), min(len(examples), errors)))
    buried = dict(zip(at, examples, strict=False))
    truth = Truth(size=size, seed=seed, kind="flood", error_lines=errors)
    files = dict(zip((True, False), _files(), strict=True))  # nvcc's files, gcc's files
    seen = {True: 0, False: 0}  # errors so far in each form
    frames, required = _frames(rng, 512), _required(rng, 256, files[False])
    idents = [f"{a}_{b}{d}" for a in _A for b in _B for d in ("", *"12345678")]
    ending = ENDING.format(site=SITE, build=BUILD)
    fill = max(0, size - len(ending.encode()) - 200 * len(buried))
    with path.open("wb") as raw:
        out = Writer(raw)
        out.write(f"$ MAX_JOBS=8 pip install -v --no-build-isolation flash-attn==2.5.8\n  running build_ext\n"
                  f"  building 'flash_attn_2_cuda' extension\n  Emitting ninja build file {BUILD}/build.ninja...\n"
                  "  Compiling objects...\n  Using envvar MAX_JOBS (8) as the number of workers...\n")  # fmt: skip
        step, unit_left, unit_errors, unit = 0, 0, 0, ""
        parts: list[str] = []
        for i in range(errors):
            if unit_left == 0:  # the next translation unit fails
                if unit:
                    parts.append(f'{unit_errors} errors detected in the compilation of "{unit}".\n')
                step += 1
                kernel = rng.choice(KERNELS)
                unit = f"{TMP}/csrc/flash_attn/src/{kernel}.cu"
                command = (f"/usr/local/cuda/bin/nvcc -I{TMP}/csrc/cutlass/include -I{SITE}/torch/include -c {unit} "
                           f"-o {BUILD}/csrc/flash_attn/src/{kernel}.o -O3 -std=c++17 --expt-relaxed-constexpr "
                           "-gencode arch=compute_80,code=sm_80 -DTORCH_EXTENSION_NAME=flash_attn_2_cuda")  # fmt: skip
                parts.append(
                    f"[{step}/{step + 73}] {command}\nFAILED: {BUILD}/csrc/flash_attn/src/{kernel}.o\n{command}\n"
                )
                unit_left, unit_errors = rng.randint(20, 400), 0
            nvcc = rng.random() >= GCC_SHARE
            n, pool = seen[nvcc], files[nvcc]
            seen[nvcc] += 1
            file = pool[n % len(pool)]
            line = (
                20 + 7 * (n // len(pool)) + rng.randrange(7)
            )  # (form, file, line) never repeats: no two error lines alike
            words = {"a": rng.choice(idents), "b": rng.choice(idents), "ns": rng.choice(NAMESPACES),
                     "cls": rng.choice(CLASSES), "t1": rng.choice(TYPES), "t2": rng.choice(TYPES)}  # fmt: skip
            budget = (fill - out.bytes - sum(map(len, parts))) / (errors - i)
            if nvcc:
                entry = [f"{file}({line}): error: " + rng.choice(NVCC_MESSAGES).format(**words)]
                extra = max(0, int((budget - len(entry[0])) / 330 + rng.random()))
                if extra:
                    entry.append("          detected during:")
                    entry += rng.choices(frames, k=extra)
                entry.append("")
            else:
                col = rng.randint(3, 60)
                message = rng.choice(GCC_MESSAGES).format(**words)
                code = f"    {words['a']}({words['b']});"
                tail = [f"{file}:{line}:{col}: error: {message}", f"{line:5d} | {code}", f"      | {' ' * col}^~~~~~"]
                extra = max(0, int((budget - 260) / 170 + rng.random()))
                entry = ([f"{file}: In instantiation of 'void {words['a']}_kernel(at::Tensor&) [with scalar_t = c10::Half]':"]
                         + rng.choices(required, k=extra) if extra else [])  # fmt: skip
                entry += tail
            parts.append("\n".join(entry) + "\n")
            unit_left -= 1
            unit_errors += 1
            if i in buried:
                out.write("".join(parts))
                parts = []
                example = buried[i]
                truth.buried.append(Buried(example.cause, example.rule, out.lines + 1, example.text))
                out.write(example.text.rstrip("\n") + "\n")
            if len(parts) >= 256:
                out.write("".join(parts))
                parts = []
        parts.append(f'{unit_errors} errors detected in the compilation of "{unit}".\n')
        out.write("".join(parts))
        out.write(ending)
    truth.lines, truth.bytes = out.lines, out.bytes
    return save_truth(path, truth)
