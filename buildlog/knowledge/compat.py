"""Compatibility knowledge of the CUDA world, read from knowledge/compat/*.toml.

GPU name -> compute capability, CUDA release -> architectures, host compilers and driver, torch
release -> CUDA builds and C++ standard. Every row names its source. A name or version that is
not in the tables is unknown: lookups return None rather than guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from buildlog.knowledge.sources import knowledge_file, load_toml


@dataclass(frozen=True)
class Gpu:
    name: str
    match: tuple[str, ...]
    cc: str
    arch: str
    segment: str
    source: str


@dataclass(frozen=True)
class CudaRelease:
    version: str
    sm_min: str
    sm_max: str
    sm_extra: tuple[str, ...]
    dropped: tuple[str, ...]
    gcc_max: str | None
    clang_max: str | None
    driver_min_linux: str | None
    source: str


@dataclass(frozen=True)
class TorchRelease:
    version: str
    cuda: tuple[str, ...]
    cxx_standard: str | None
    cxx11_abi: bool | None
    python: tuple[str, ...]
    source: str


def _table(name: str, key: str) -> list[dict]:
    if not knowledge_file("compat", name).is_file():
        return []
    return list(load_toml("compat", name).get(key, []))


@cache
def gpus() -> tuple[Gpu, ...]:
    rows = _table("gpus.toml", "gpu")
    return tuple(
        Gpu(r["name"], tuple(m.lower() for m in r.get("match", [])), str(r["cc"]), r.get("arch", ""),
            r.get("segment", ""), r.get("source", ""))
        for r in rows
    )  # fmt: skip


@cache
def cuda_releases() -> dict[str, CudaRelease]:
    out = {}
    for r in _table("cuda.toml", "cuda"):
        out[str(r["version"])] = CudaRelease(
            str(r["version"]), str(r.get("sm_min", "")), str(r.get("sm_max", "")),
            tuple(str(x) for x in r.get("sm_extra", [])), tuple(str(x) for x in r.get("dropped", [])),
            _opt(r.get("gcc_max")), _opt(r.get("clang_max")), _opt(r.get("driver_min_linux")), r.get("source", ""),
        )  # fmt: skip
    return out


@cache
def torch_releases() -> dict[str, TorchRelease]:
    out = {}
    for r in _table("torch.toml", "torch"):
        out[str(r["version"])] = TorchRelease(
            str(r["version"]), tuple(str(x) for x in r.get("cuda", [])), _opt(r.get("cxx_standard")),
            r.get("cxx11_abi"), tuple(str(x) for x in r.get("python", [])), r.get("source", ""),
        )  # fmt: skip
    return out


def _opt(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def gpu_for(name: str) -> Gpu | None:
    """The table row for a GPU name as nvidia-smi or torch prints it (longest match wins)."""
    text = _norm(name)
    best: tuple[int, Gpu] | None = None
    for gpu in gpus():
        for token in gpu.match or (gpu.name.lower(),):
            if _token_in(token, text) and (best is None or len(token) > best[0]):
                best = (len(token), gpu)
    return best[1] if best else None


def _token_in(token: str, text: str) -> bool:
    return re.search(r"(?<![\w])" + re.escape(token) + r"(?![\w])", text) is not None


def cuda_release(version: str) -> CudaRelease | None:
    """The row for a CUDA release given as 12.8, 12.8.93 or V12.8.93."""
    m = re.search(r"(\d+)\.(\d+)", version)
    return cuda_releases().get(f"{m.group(1)}.{m.group(2)}") if m else None


def torch_release(version: str) -> TorchRelease | None:
    """The row for a torch release given as 2.9.1+cu128 (matched on major.minor)."""
    m = re.match(r"(\d+)\.(\d+)", version)
    return torch_releases().get(f"{m.group(1)}.{m.group(2)}") if m else None


def cc_key(cc: str) -> tuple[int, int]:
    """Sortable compute capability: '8.6' -> (8, 6); '10.0a' -> (10, 0)."""
    m = re.match(r"(\d+)\.?(\d)?", cc)
    return (int(m.group(1)), int(m.group(2) or 0)) if m else (0, 0)


def cc_from_sm(sm: str) -> str:
    """'sm_120' / 'compute_90a' / '86' -> '12.0' / '9.0' / '8.6'."""
    digits = re.sub(r"\D", "", sm)
    return f"{digits[:-1]}.{digits[-1]}" if len(digits) >= 2 else digits


@cache
def driver_branches() -> dict[int, str]:
    """Driver branch (e.g. 570) -> the CUDA version its nvidia-smi reports."""
    return {int(r["branch"]): str(r["cuda"]) for r in _table("drivers.toml", "driver")}


def driver_cuda_for(driver: str) -> str | None:
    """The CUDA version a driver supports, from its branch (570.86.15 -> 12.8); None if unknown."""
    m = re.match(r"(\d+)\.", driver)
    if not m:
        return None
    branch = int(m.group(1))
    known = [b for b in driver_branches() if b <= branch]
    return driver_branches()[max(known)] if known else None


def torch_build_for(cuda: str) -> tuple[str, str] | None:
    """The newest (torch release, CUDA build) whose CUDA shares `cuda`'s major and is not newer."""
    want = re.match(r"(\d+)\.(\d+)", cuda)
    if not want:
        return None
    major, minor = int(want.group(1)), int(want.group(2))
    best: tuple[tuple[int, ...], str, str] | None = None
    for release in torch_releases().values():
        for build in release.cuda:
            b = re.match(r"(\d+)\.(\d+)", build)
            if b and int(b.group(1)) == major and int(b.group(2)) <= minor:
                key = (*map(int, release.version.split(".")), int(b.group(2)))
                if best is None or key > best[0]:
                    best = (key, release.version, build)
    return (best[1], best[2]) if best else None
