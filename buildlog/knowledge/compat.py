"""Compatibility knowledge of the CUDA world, as tables with lookups.

GPU name -> compute capability; CUDA release -> architectures, newest host gcc and the driver it
needs; torch release -> its CUDA builds; driver branch -> CUDA; torch's own gcc bounds per CUDA.
Every row of the TOML tables (knowledge/compat/) names its source. A name or version that is not
in the tables is unknown: lookups return None rather than guess.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Gpu(NamedTuple):
    name: str
    match: tuple[str, ...]
    cc: str


class CudaRelease(NamedTuple):
    version: str
    sm_min: str
    sm_max: str
    gcc_max: str | None
    driver_min: str | None  # the Linux driver of the release's GA toolkit
    torch_gcc_max: str | None = None  # torch's cpp_extension bound, where stricter than nvcc's


class TorchRelease(NamedTuple):
    version: str
    cuda: tuple[str, ...]


class Compat(NamedTuple):
    """The tables, with the lookups the checks and fix templates use."""

    gpus: tuple[Gpu, ...]
    cuda: dict[str, CudaRelease]
    torch: dict[str, TorchRelease]
    drivers: dict[int, str]  # driver branch -> the CUDA version its nvidia-smi reports

    def gpu_for(self, name: str) -> Gpu | None:
        """The row for a GPU name as nvidia-smi or torch prints it (longest match wins)."""
        text = re.sub(r"\s+", " ", name.lower()).strip()
        best: tuple[int, Gpu] | None = None
        for gpu in self.gpus:
            for token in gpu.match or (gpu.name.lower(),):
                if _token_in(token, text) and (best is None or len(token) > best[0]):
                    best = (len(token), gpu)
        return best[1] if best else None

    def cuda_release(self, version: str) -> CudaRelease | None:
        """The row for a CUDA release given as 12.8, 12.8.93 or V12.8.93."""
        m = re.search(r"(\d+)\.(\d+)", version)
        return self.cuda.get(f"{m.group(1)}.{m.group(2)}") if m else None

    def driver_cuda_for(self, driver: str) -> str | None:
        """The CUDA version a driver supports, from its branch (570.86.15 -> 12.8); None if unknown."""
        m = re.match(r"(\d+)\.", driver)
        if not m:
            return None
        known = [b for b in self.drivers if b <= int(m.group(1))]
        return self.drivers[max(known)] if known else None

    def torch_build_for(self, cuda: str) -> tuple[str, str] | None:
        """The newest (torch release, CUDA build) whose CUDA shares `cuda`'s major and is not newer."""
        want = re.match(r"(\d+)\.(\d+)", cuda)
        if not want:
            return None
        major, minor = int(want.group(1)), int(want.group(2))
        best: tuple[tuple[int, ...], str, str] | None = None
        for release in self.torch.values():
            for build in release.cuda:
                b = re.match(r"(\d+)\.(\d+)", build)
                if b and int(b.group(1)) == major and int(b.group(2)) <= minor:
                    key = (*map(int, release.version.split(".")), int(b.group(2)))
                    if best is None or key > best[0]:
                        best = (key, release.version, build)
        return (best[1], best[2]) if best else None


def _token_in(token: str, text: str) -> bool:
    """`token` in `text` as whole words: no letter, digit or _ right before or after it."""
    return re.search(rf"(?<!\w){re.escape(token)}(?!\w)", text) is not None


def cc_key(cc: str) -> tuple[int, int]:
    """Sortable compute capability: '8.6' -> (8, 6); '10.0a' -> (10, 0)."""
    m = re.match(r"(\d+)\.?(\d)?", cc)
    return (int(m.group(1)), int(m.group(2) or 0)) if m else (0, 0)


def cc_from_sm(sm: str) -> str:
    """'sm_120' / 'compute_90a' / '86' -> '12.0' / '9.0' / '8.6'."""
    digits = re.sub(r"\D", "", sm)
    return f"{digits[:-1]}.{digits[-1]}" if len(digits) >= 2 else digits
