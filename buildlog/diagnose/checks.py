"""Cross-fact checks: risks that the facts of a log predict, whether or not an error says so.

Each check reads the facts (and the compatibility tables) and either stays quiet or returns the
values its record in knowledge/checks.toml needs. Unknown GPUs, releases and versions make a check
stay quiet: a risk is only reported when the tables know enough to be sure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from buildlog.diagnose.platform import platform_values
from buildlog.diagnose.template import fill
from buildlog.knowledge.bundle import Knowledge
from buildlog.knowledge.compat import Compat, cc_from_sm, cc_key
from buildlog.knowledge.records import Jobs
from buildlog.report.schema import Contradiction, Facts, FactValue, Risk
from buildlog.segment import Span


@dataclass(frozen=True)
class Found:
    """What a check found: the facts to show, the values its words need, the lines that state them."""

    shown: dict[str, str]
    values: dict[str, str]
    lines: list[int]


@dataclass(frozen=True)
class Target:
    """A compiled GPU target: machine code (sm) or PTX (compute) for a compute capability."""

    cc: tuple[int, int]
    ptx: bool
    specific: bool  # 'a'/'f' targets run only on their own architecture

    def runs_on(self, gpu: tuple[int, int]) -> bool:
        if self.specific:
            return self.cc == gpu
        if self.ptx:
            return self.cc <= gpu
        return self.cc[0] == gpu[0] and self.cc[1] <= gpu[1]


def targets(facts: Facts) -> list[Target]:
    """What the build compiles for: -gencode flags if the log shows them, else TORCH_CUDA_ARCH_LIST."""
    if facts.gencode:
        return [_target_from_flag(g.value) for g in facts.gencode]
    if facts.arch_list:
        return [t for entry in re.split(r"[;\s,]+", facts.arch_list.value) for t in _targets_from_entry(entry)]
    return []


def _target_from_flag(flag: str) -> Target:
    return Target(cc_key(cc_from_sm(flag)), flag.startswith("compute_"), flag[-1:] in ("a", "f"))


def _targets_from_entry(entry: str) -> list[Target]:
    m = re.fullmatch(r"(\d+)\.(\d+)([af]?)(\+PTX)?", entry.strip(), re.IGNORECASE)
    if not m:
        return []
    cc, specific = (int(m.group(1)), int(m.group(2))), bool(m.group(3))
    out = [Target(cc, ptx=False, specific=specific)]
    if m.group(4):
        out.append(Target(cc, ptx=True, specific=specific))
    return out


def _missed_gpus(facts: Facts, wanted: list[Target], compat: Compat) -> list[tuple[FactValue, str]]:
    """GPUs in the log (with a known compute capability) that none of the targets runs on."""
    known = [(g, compat.gpu_for(g.value)) for g in facts.gpus]
    return [(g, row.cc) for g, row in known if row and not any(t.runs_on(cc_key(row.cc)) for t in wanted)]


def _known_ccs(facts: Facts, compat: Compat) -> str:
    rows = [compat.gpu_for(g.value) for g in facts.gpus]
    return ";".join(sorted({r.cc for r in rows if r}, key=cc_key))


def check_arch_list_misses_gpu(facts: Facts, span: Span | None, k: Knowledge) -> Found | None:
    if not facts.arch_list:
        return None
    missed = _missed_gpus(facts, targets(facts.model_copy(update={"gencode": []})), k.compat)
    if not missed:
        return None
    g, cc = missed[0]
    note = ""
    if facts.gencode and not _missed_gpus(facts, targets(facts), k.compat):
        flags = ", ".join(x.value for x in facts.gencode)
        note = (f" This build passed its own -gencode flags ({flags}), which do cover the GPU, so it is not"
                " affected; other extensions built with this setting will be.")  # fmt: skip
    shown = {"TORCH_CUDA_ARCH_LIST": facts.arch_list.value, "GPU": f"{g.value} (compute capability {cc})"}
    values = {"wanted": _known_ccs(facts, k.compat), "note": note, "severity": "warning" if note else "error"}
    return Found(shown, values, [g.line, facts.arch_list.line])


def check_compiled_arch_misses_gpu(facts: Facts, span: Span | None, k: Knowledge) -> Found | None:
    if not facts.gencode:
        return None
    missed = _missed_gpus(facts, targets(facts), k.compat)
    if not missed:
        return None
    g, cc = missed[0]
    shown = {"arch flags": ", ".join(x.value for x in facts.gencode), "GPU": f"{g.value} (compute capability {cc})"}
    return Found(shown, {"wanted": _known_ccs(facts, k.compat)}, [g.line, facts.gencode[0].line])


def check_arch_unsupported_by_nvcc(facts: Facts, span: Span | None, k: Knowledge) -> Found | None:
    release = k.compat.cuda_release(facts.nvcc.value) if facts.nvcc else None
    wanted = targets(facts)
    if not release or not release.sm_min or not release.sm_max or not wanted:
        return None
    low, high = cc_key(release.sm_min), cc_key(release.sm_max)
    bad = sorted({f"{t.cc[0]}.{t.cc[1]}" for t in wanted if t.cc < low or t.cc > high})
    if not bad:
        return None
    shown = {"nvcc": facts.nvcc.value, "requested": ", ".join(bad)}  # type: ignore[union-attr]
    values = {"unsupported": ", ".join(bad), "supported_range": f"{release.sm_min} to {release.sm_max}"}
    return Found(shown, values, [facts.nvcc.line])  # type: ignore[union-attr]


def check_cuda_major_mismatch(facts: Facts, span: Span | None, k: Knowledge) -> Found | None:
    if not facts.nvcc or not facts.torch_cuda:
        return None
    nvcc, torch = _major(facts.nvcc.value), _major(facts.torch_cuda.value)
    if nvcc is None or torch is None or nvcc == torch:
        return None
    shown = {"nvcc": facts.nvcc.value, "torch CUDA": facts.torch_cuda.value}
    values = {"torch_cuda": facts.torch_cuda.value, "nvcc_major": str(nvcc)}
    return Found(shown, values, [facts.nvcc.line, facts.torch_cuda.line])


def check_host_compiler_unsupported(facts: Facts, span: Span | None, k: Knowledge) -> Found | None:
    release = k.compat.cuda_release(facts.nvcc.value) if facts.nvcc else None
    if not release or not release.gcc_max or not facts.gcc:
        return None
    limit = min(int(release.gcc_max), int(release.torch_gcc_max or release.gcc_max))  # torch's bound can be stricter
    gcc = _major(facts.gcc.value)
    if gcc is None or gcc <= limit:
        return None
    shown = {"gcc": facts.gcc.value, "nvcc": facts.nvcc.value, "newest gcc supported": str(limit)}  # type: ignore[union-attr]
    return Found(shown, {"gcc_max": str(limit)}, [facts.gcc.line])


def _driver_cuda(facts: Facts, compat: Compat) -> str | None:
    """What the banner says, else what the driver's branch supports."""
    if facts.driver_cuda:
        return facts.driver_cuda.value
    return compat.driver_cuda_for(facts.driver.value) if facts.driver else None


def _driver_versions(facts: Facts, compat: Compat) -> tuple[tuple[int, int], tuple[int, int]] | None:
    supported = _driver_cuda(facts, compat)
    if not supported or not facts.torch_cuda:
        return None
    driver, torch = _minor_key(supported), _minor_key(facts.torch_cuda.value)
    return (driver, torch) if driver and torch else None


def check_driver_too_old_for_cuda(facts: Facts, span: Span | None, k: Knowledge) -> Found | None:
    pair = _driver_versions(facts, k.compat)
    if not pair or pair[0][0] >= pair[1][0]:
        return None
    return _driver_found(facts, k.compat)


def check_driver_minor_compat(facts: Facts, span: Span | None, k: Knowledge) -> Found | None:
    pair = _driver_versions(facts, k.compat)
    if not pair or pair[0][0] != pair[1][0] or pair[0] >= pair[1]:
        return None
    return _driver_found(facts, k.compat)


def _driver_found(facts: Facts, compat: Compat) -> Found:
    supported = _driver_cuda(facts, compat) or "?"
    torch_cuda = facts.torch_cuda.value if facts.torch_cuda else "?"
    shown = {"driver": facts.driver.value if facts.driver else "?", "driver CUDA": supported, "torch CUDA": torch_cuda}
    line = (facts.driver_cuda or facts.driver).line if (facts.driver_cuda or facts.driver) else 0  # type: ignore[union-attr]
    return Found(shown, {"torch_cuda": torch_cuda, "driver_cuda": supported}, [line])


def recommended_jobs(ram_gb: float, package: str | None, jobs: Jobs) -> int:
    """A MAX_JOBS that leaves headroom: a share of RAM divided by one job's peak memory."""
    per_job = jobs.per_job_gb.get(package or "", jobs.per_job_gb["default"])
    return max(1, math.floor(ram_gb * jobs.ram_share / per_job))


def package_of(facts: Facts, span: Span | None, jobs: Jobs) -> str | None:
    """The package being built, as the per-job memory table names it."""
    names = list(facts.packages) + ([span.command] if span else [])
    for name in jobs.per_job_gb:
        if any(name in n or name.replace("-", "_") in n for n in names):
            return name
    return None


def check_jobs_exceed_ram(facts: Facts, span: Span | None, k: Knowledge) -> Found | None:
    if not facts.ram_gb or not span or span.stage not in ("compile", "link", "install"):
        return None
    jobs_fact = facts.jobs or facts.max_jobs or facts.cores
    if not jobs_fact or not jobs_fact.value.isdigit():
        return None
    ram, jobs = float(facts.ram_gb.value), int(jobs_fact.value)
    best = recommended_jobs(ram, package_of(facts, span, k.jobs), k.jobs)
    if jobs <= best:
        return None
    label = (
        "jobs run" if facts.jobs else "MAX_JOBS" if facts.max_jobs else "cores (ninja's default when MAX_JOBS is unset)"
    )
    return Found({label: str(jobs), "RAM (GB)": facts.ram_gb.value}, {"recommended_jobs": str(best)}, [jobs_fact.line])


def check_system_python_install(facts: Facts, span: Span | None, k: Knowledge) -> Found | None:
    interpreter = (span.interpreter if span else None) or (facts.interpreter.value if facts.interpreter else "")
    if not re.match(r"^(?:sudo |uv --system|/usr/(?:local/)?bin/(?:python|pip))", interpreter or ""):
        return None
    venv = span.venv if span and span.venv else (facts.venv.value if facts.venv else "~/venv")
    return Found({"interpreter": interpreter}, {"venv_python": f"{venv}/bin/python"}, [span.start if span else 0])


def _major(version: str) -> int | None:
    m = re.match(r"\s*(\d+)", version)
    return int(m.group(1)) if m else None


def _minor_key(version: str) -> tuple[int, int] | None:
    m = re.match(r"\s*(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else None


CHECKS: Mapping[str, Callable[[Facts, Span | None, Knowledge], Found | None]] = {
    "cuda_major_mismatch": check_cuda_major_mismatch,
    "arch_list_misses_gpu": check_arch_list_misses_gpu,
    "compiled_arch_misses_gpu": check_compiled_arch_misses_gpu,
    "arch_unsupported_by_nvcc": check_arch_unsupported_by_nvcc,
    "host_compiler_unsupported": check_host_compiler_unsupported,
    "driver_too_old_for_cuda": check_driver_too_old_for_cuda,
    "driver_minor_compat": check_driver_minor_compat,
    "jobs_exceed_ram": check_jobs_exceed_ram,
    "system_python_install": check_system_python_install,
}


def run_checks(facts: Facts, span: Span | None, diagnosed: set[str], k: Knowledge) -> list[Risk]:
    """Every risk the facts predict, except those a diagnosed cause already explains."""
    platform = platform_values(facts, span)
    risks = []
    for check_id, check in CHECKS.items():
        text = k.checks[check_id]
        if text.covers in diagnosed:
            continue
        found = check(facts, span, k)
        if found is None:
            continue
        risks.append(
            Risk(
                id=check_id,
                title=text.title,
                facts=found.shown,
                consequence=fill(text.consequence, found.values),
                fix=fill(text.fix, {**found.values, **platform}),
                severity=found.values.get("severity", text.severity),
                lines=sorted(set(found.lines)),
            )  # fmt: skip
        )
    return risks


def judge_values(found: Contradiction, facts: Facts, span: Span | None, k: Knowledge) -> str:
    """What the checks (and the compatibility tables behind them) say of each value of a contradicted fact:
    the risks one value brings that another does not, in one clause ("with 13.0: nvcc's CUDA major version
    differs from torch's"); empty when every value fares alike."""
    risks = {
        v.value: {r.id: r.title for r in run_checks(_with(facts, found.fact, v), span, set(), k)} for v in found.values
    }
    common = set.intersection(*(set(ids) for ids in risks.values())) if risks else set()
    parts = []
    for value, titles in risks.items():
        own = [title for check_id, title in titles.items() if check_id not in common]
        if own:
            parts.append(f"with {value}: " + "; ".join(_lower(t) for t in own))
    return "; ".join(parts)


def _with(facts: Facts, fact: str, stated: FactValue) -> Facts:
    """The facts as they would be if this value of the fact held (with what it implies of another)."""
    value = FactValue(value=stated.value, line=stated.line)
    update: dict[str, FactValue] = {fact: value}
    if fact == "torch" and (m := re.search(r"\+cu(\d+)(\d)$", stated.value)):
        update["torch_cuda"] = FactValue(value=f"{m.group(1)}.{m.group(2)}", line=stated.line)
    if fact == "cuda_home" and (m := re.search(r"cuda-?v?(\d+\.\d+)[/\\]?$", stated.value, re.IGNORECASE)):
        update["nvcc"] = FactValue(value=m.group(1), line=stated.line)
    return facts.model_copy(update=update)


def _lower(title: str) -> str:
    return title if title[1:2].isupper() else title[0].lower() + title[1:]
