"""Finding the anchors in a chunk: hyperscan where it is installed (a dependency on the machines
its wheels cover), the standard library otherwise.

Both engines answer the same question the same way: where, in a chunk of whole lines, does each
anchor occur (the position of its last byte), leaving out anchors the scanner no longer wants.
The scanner then works in lines; since both engines are exact, they select the same lines.

* `HyperscanEngine` matches every anchor in one pass at memory speed. Compiling the database
  takes longer than scanning a small log, so the compiled form is kept in the user cache
  directory, keyed by the anchors and the hyperscan version.
* `StdlibEngine` runs `bytes.find` once per *trigger*: a short literal that several anchors
  contain and that ordinary build noise (compiler flags, warnings, progress bars) does not, so
  that a hit is rare and cheap to check. Each hit is checked against the anchors it stands for
  with `startswith` at the right offset. It costs one pass over the chunk per trigger.

An anchor that starts with a newline only counts at the start of a line; chunks always start at
a line start (see ingest.reader), so both engines can tell without looking back.
"""

from __future__ import annotations

import heapq
import json
import os
from collections.abc import Sequence
from functools import cache
from typing import Any, NamedTuple, Protocol

from buildlog.cache import cache_dir, digest, write_cache

ENGINE_ENV = "BUILDLOG_SCAN_ENGINE"
CACHE_MIN_ANCHORS = 16  # small anchor sets (tests) compile in no time; only big ones are cached

Occurrence = tuple[int, int]  # (position of the anchor's last byte in the chunk, anchor index)


class Anchor(NamedTuple):
    """A literal as the engines see it: the bytes to find, and whether it must start a line."""

    text: bytes
    line_start: bool

    @classmethod
    def parse(cls, raw: bytes) -> Anchor:
        """`\\n+ ` is `+ ` at the start of a line; no other newline may appear in an anchor."""
        if not raw.strip(b"\n"):
            raise ValueError(f"empty anchor {raw!r}")
        if b"\n" in raw.lstrip(b"\n") or raw.startswith(b"\n\n"):
            raise ValueError(f"an anchor may only start with a newline: {raw!r}")
        return cls(raw[1:], True) if raw.startswith(b"\n") else cls(raw, False)


class Engine(Protocol):
    """What the scanner asks of an engine."""

    name: str

    def find(self, chunk: bytes, start: int, skip: frozenset[int]) -> list[Occurrence]:
        """Every occurrence at or after `start` (a line start) of the anchors not in `skip`, sorted."""
        ...


# ------------------------------------------------------------------------------------------
# Standard library engine


# Ordinary verbose-build noise: a trigger must not occur here, or every compile line would be a
# hit (`rror` is in `-Werror=`, `torch` in every include path).
NOISE_TEXT = (
    "[12/85] /usr/local/cuda-12.1/bin/nvcc --generate-dependencies-with-compile --dependency-output x.o.d "
    "-I/tmp/pip-install-k2x8/flash-attn_5f1c/csrc/cutlass/include -I/usr/local/lib/python3.11/site-packages/torch/include "
    "-I/usr/local/lib/python3.11/site-packages/torch/include/torch/csrc/api/include -I/usr/include/python3.11 -c -c "
    "/tmp/pip-install-k2x8/flash-attn_5f1c/csrc/flash_attn/src/flash_bwd_hdim128_bf16_sm80.cu -o build/temp.linux-x86_64-cpython-311/x.o "
    "-D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ -D__CUDA_NO_BFLOAT16_CONVERSIONS__ --expt-relaxed-constexpr "
    "--compiler-options ''\"'\"'-fPIC'\"'\"'' -O3 -std=c++17 -U__CUDA_NO_HALF2_OPERATORS__ --expt-extended-lambda "
    "--use_fast_math -Xcompiler -Werror=return-type -Werror=format -Werror=cross-execution-space-call "
    "-Wno-deprecated-gpu-targets --ptxas-options=-v -lineinfo -gencode arch=compute_80,code=sm_80 "
    "--threads 4 -DTORCH_API_INCLUDE_EXTENSION_H '-DPYBIND11_COMPILER_TYPE=\"_gcc\"' '-DPYBIND11_STDLIB=\"_libstdcpp\"' "
    "'-DPYBIND11_BUILD_ABI=\"_cxxabi1011\"' -DTORCH_EXTENSION_NAME=flash_attn_2_cuda -D_GLIBCXX_USE_CXX11_ABI=0 -ccbin g++\n"
    "[13/85] c++ -MMD -MF x.o.d -pthread -B /opt/conda/compiler_compat -Wno-unused-result -Wsign-compare -DNDEBUG -fwrapv "
    "-O2 -Wall -fPIC -isystem /opt/conda/include -Werror -Werror=return-type -Wno-error=deprecated-declarations\n"
    "/usr/local/lib/python3.11/site-packages/torch/include/c10/util/irange.h(54): warning #186-D: pointless comparison "
    'of unsigned integer with zero\n          detected during:\n            instantiation of "void '
    'flash::compute_attn_1rowblock<Kernel_traits,Is_dropout,Is_causal>(const Params &, int, int, int)" [with '
    "Kernel_traits=Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, Is_dropout=true, "
    "Is_causal=false] at line 37 of /tmp/pip-install-k2x8/flash-attn_5f1c/csrc/flash_attn/src/flash_fwd_kernel.h\n"
    'Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"\n'
    "In file included from /usr/local/lib/python3.11/site-packages/torch/include/ATen/Tensor.h:3,\n"
    "                 from /tmp/pip-install-k2x8/flash-attn_5f1c/csrc/flash_attn/flash_api.cpp:5:\n"
    "/tmp/x/flash_api.cpp: In function 'void mha_fwd(at::Tensor&)':\n"
    "/tmp/x/flash_api.cpp:412:17: warning: comparison of integer expressions of different signedness: 'int' and "
    "'size_t' [-Wsign-compare] unused variable 'num_splits' [-Wunused-variable]\n"
    "  412 |     for (int i = 0; i < seqlen_k.size(); ++i) {\n      |                 ^~~~~~~~~\n"
    "ptxas info    : Compiling entry function '_ZN5flash15flash_fwd_kernelEvNS_16Flash_fwd_paramsE' for 'sm_80'\n"
    "ptxas info    : Used 255 registers, 464 bytes cmem[0]\n    24 bytes stack frame, 0 bytes spill stores\n"
    "   \x1b[38;5;197m━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━\x1b[0m \x1b[32m2.5/2.5 MB\x1b[0m \x1b[31m45.2 MB/s\x1b[0m eta "
    "\x1b[36m0:00:00\x1b[0m\r\n2024-05-14T10:53:37.7106412Z   Downloading numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl\n"
)


@cache
def noise_sample() -> bytes:
    return NOISE_TEXT.encode("utf-8")


MIN_TRIGGER = 4
MAX_TRIGGER = 12


class Trigger(NamedTuple):
    """A literal found with bytes.find, and the anchors (index, offset of the trigger in it) it stands for."""

    text: bytes
    members: tuple[tuple[int, int], ...]


def plan_triggers(anchors: Sequence[Anchor]) -> tuple[Trigger, ...]:
    """Cover every anchor with few, long triggers that the noise sample does not contain.

    Greedy weighted set cover: a pass of bytes.find costs less the longer the needle (two-way
    search skips further), so a substring is worth the anchors it newly covers times its speed.
    A trigger left standing for one anchor becomes that whole anchor: the longest needle, and a
    hit needs no check. An anchor whose every substring is in the noise is its own trigger too.
    Line-start anchors keep their newline in the trigger (a line start is rarer than the text).
    """
    texts = [b"\n" + a.text if a.line_start else a.text for a in anchors]
    options: dict[bytes, set[int]] = {}
    for index, text in enumerate(texts):
        for sub in _substrings(text):
            options.setdefault(sub, set()).add(index)
    noise = noise_sample()
    quiet = {sub: ids for sub, ids in options.items() if sub not in noise}
    owner: dict[int, bytes] = {}
    for trigger in _greedy_cover(quiet, set(range(len(texts)))):
        for index in quiet[trigger]:
            owner.setdefault(index, trigger)
    groups: dict[bytes, list[int]] = {}
    for index, text in enumerate(texts):
        groups.setdefault(owner.get(index, text), []).append(index)
    plan = []
    for trigger, indices in groups.items():
        if len(indices) == 1:
            trigger = texts[indices[0]]
        plan.append(Trigger(trigger, tuple((i, texts[i].find(trigger)) for i in indices)))
    return tuple(plan)


def _substrings(text: bytes) -> set[bytes]:
    if len(text) <= MIN_TRIGGER:
        return {text}
    return {
        text[i : i + n] for n in range(MIN_TRIGGER, min(MAX_TRIGGER, len(text)) + 1) for i in range(len(text) - n + 1)
    }


def _speed(length: int) -> float:
    """Relative speed of bytes.find by needle length (measured: 4 bytes ~0.7 GB/s, 16 ~2 GB/s)."""
    return 0.35 + 0.1 * min(length, 24)


def _greedy_cover(options: dict[bytes, set[int]], todo: set[int]) -> list[bytes]:
    """Lazy greedy: a substring's worth only shrinks, so stale heap entries are re-scored on pop."""
    heap = [(-len(ids) * _speed(len(sub)), sub) for sub, ids in options.items()]
    heapq.heapify(heap)
    chosen: list[bytes] = []
    while todo and heap:
        neg_worth, sub = heapq.heappop(heap)
        worth = len(options[sub] & todo) * _speed(len(sub))
        if worth == 0:
            continue
        if worth < -neg_worth:
            heapq.heappush(heap, (-worth, sub))
            continue
        chosen.append(sub)
        todo -= options[sub]
    return chosen


class StdlibEngine:
    """bytes.find per trigger, then an exact check of the anchors behind each hit."""

    name = "stdlib"

    def __init__(self, anchors: Sequence[Anchor]) -> None:
        self.anchors = tuple(anchors)
        self.triggers = _cached_plan(self.anchors)
        self._texts = [b"\n" + a.text if a.line_start else a.text for a in self.anchors]
        self._line_start = [i for i, a in enumerate(self.anchors) if a.line_start]

    def find(self, chunk: bytes, start: int, skip: frozenset[int]) -> list[Occurrence]:
        out: list[Occurrence] = []
        for trigger in self.triggers:
            members = [m for m in trigger.members if m[0] not in skip]
            if members:
                out += self._hits(chunk, start, trigger.text, members)
        for index in self._line_start:  # at the very start there is no newline before the line
            if index not in skip and chunk.startswith(self.anchors[index].text, start):
                out.append((start + len(self.anchors[index].text) - 1, index))
        out.sort()
        return out

    def _hits(self, chunk: bytes, start: int, text: bytes, members: list[tuple[int, int]]) -> list[Occurrence]:
        found: list[Occurrence] = []
        find, texts = chunk.find, self._texts
        exact = len(members) == 1 and texts[members[0][0]] == text
        pos = find(text, start)
        while pos >= 0:
            for index, offset in members:
                begin = pos - offset
                if exact or (begin >= start and chunk.startswith(texts[index], begin)):
                    found.append((begin + len(texts[index]) - 1, index))
            pos = find(text, pos + 1)
        return found


# ------------------------------------------------------------------------------------------
# Hyperscan engine


class HyperscanEngine:
    """Every anchor in one hyperscan pass, plus a second pass only where a budgeted anchor needs it.

    The budgeted (`volatile`) anchors are the ones that occur on every compile line: reporting
    each of their matches to Python would cost more than the scan. In the main database they
    report at most their first match per chunk (HS_FLAG_SINGLEMATCH), which tells whether they
    occur at all; only when a budgeted anchor that is still wanted does occur is the chunk scanned
    again for all its matches, by a small database of just those anchors. Once their budgets are
    spent, a chunk costs one pass. The main database is kept in the user cache directory.
    """

    name = "hyperscan"

    def __init__(self, anchors: Sequence[Anchor], volatile: frozenset[int] = frozenset()) -> None:
        import hyperscan

        self._hs = hyperscan
        self.anchors = tuple(anchors)
        self._volatile = frozenset(volatile)
        everything = list(range(len(self.anchors)))
        self._main = _hyperscan_database(hyperscan, self.anchors, everything, cache=True, single=self._volatile)
        self._full: dict[frozenset[int], Any] = {}

    def find(self, chunk: bytes, start: int, skip: frozenset[int]) -> list[Occurrence]:
        out: list[Occurrence] = []
        wanted: set[int] = set()  # budgeted anchors still wanted that occur in this chunk
        volatile = self._volatile

        def on_match(index: int, _from: int, to: int, _flags: int, _context: object) -> None:
            if index not in volatile:
                out.append((start + to - 1, index))
            elif index not in skip:
                wanted.add(index)

        def on_full_match(index: int, _from: int, to: int, _flags: int, _context: object) -> None:
            out.append((start + to - 1, index))

        data = memoryview(chunk)[start:] if start else chunk
        self._main.scan(data, match_event_handler=on_match)
        if wanted:
            self._full_database(frozenset(wanted)).scan(data, match_event_handler=on_full_match)
        out.sort()
        return out

    def _full_database(self, indices: frozenset[int]) -> Any:
        if indices not in self._full:
            self._full[indices] = _hyperscan_database(self._hs, self.anchors, sorted(indices), cache=False)
        return self._full[indices]


def _hyperscan_database(
    hs: Any, anchors: Sequence[Anchor], keep: list[int], cache: bool, single: frozenset[int] = frozenset()
) -> Any:
    """Compile (or load from the cache) a block-mode database of the kept anchors.

    Anchors in `single` report only their first match in each scan.
    """
    patterns = [_hs_pattern(anchors[i]) for i in keep]
    flags = [
        (hs.HS_FLAG_MULTILINE if anchors[i].line_start else 0) | (hs.HS_FLAG_SINGLEMATCH if i in single else 0)
        for i in keep
    ]
    key = digest([hs.__version__.encode(), *patterns, repr(keep).encode(), repr(flags).encode()])
    path = cache_dir() / f"hs-{key}.db" if cache and len(keep) >= CACHE_MIN_ANCHORS else None
    if path is not None and path.exists():
        try:
            database = hs.loadb(path.read_bytes(), hs.HS_MODE_BLOCK)
            database.scratch = hs.Scratch(database)
            return database
        except (OSError, hs.error):
            pass
    database = hs.Database(mode=hs.HS_MODE_BLOCK)
    database.compile(expressions=patterns, ids=keep, elements=len(keep), flags=flags)
    if path is not None:
        write_cache(path, hs.dumpb(database))
    return database


def _hs_pattern(anchor: Anchor) -> bytes:
    """A literal as a hyperscan regex: every byte escaped; `^` (multi-line) for line-start anchors."""
    body = b"".join(b"\\x%02x" % byte for byte in anchor.text)
    return b"^" + body if anchor.line_start else body


# ------------------------------------------------------------------------------------------
# Choice and caches


def hyperscan_available() -> bool:
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return False
    return True


def make_engine(anchors: Sequence[Anchor], name: str | None = None, volatile: frozenset[int] = frozenset()) -> Engine:
    """The engine named (or by $BUILDLOG_SCAN_ENGINE): hyperscan, stdlib, or auto (the default).

    `volatile` are the anchors that may be left out of a search (the budgeted ones).
    """
    name = (name or os.environ.get(ENGINE_ENV) or "auto").lower()
    if name not in ("auto", "hyperscan", "stdlib"):
        raise ValueError(f"unknown scan engine {name!r} (auto, hyperscan or stdlib)")
    if name == "hyperscan":
        return HyperscanEngine(anchors, volatile)
    if name == "auto" and hyperscan_available():
        try:
            return HyperscanEngine(anchors, volatile)
        except Exception:  # noqa: BLE001, S110 - e.g. a CPU hyperscan cannot run on: the fallback selects the same lines
            pass
    return StdlibEngine(anchors)


@cache
def _cached_plan(anchors: tuple[Anchor, ...]) -> tuple[Trigger, ...]:
    """The trigger plan, kept on disk for big anchor sets: planning costs more than a small log."""
    if len(anchors) < CACHE_MIN_ANCHORS:
        return plan_triggers(anchors)
    raw = [bytes([a.line_start]) + a.text for a in anchors]
    path = cache_dir() / f"triggers-{digest([noise_sample(), *raw])}.json"
    try:
        stored = json.loads(path.read_text("utf-8"))
        return tuple(Trigger(bytes.fromhex(t), tuple((i, o) for i, o in m)) for t, m in stored)
    except (OSError, ValueError, TypeError):
        pass
    plan = plan_triggers(anchors)
    write_cache(path, json.dumps([[t.text.hex(), t.members] for t in plan]).encode("utf-8"))
    return plan
