"""The values a rule's fix template may name, for one finding.

A value comes from the rule's captures, then from the facts, then from what is derived here (a
version's major part, the venv's interpreter, a MAX_JOBS that fits the RAM).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from buildlog.diagnose.checks import package_of, recommended_jobs
from buildlog.diagnose.platform import fact_values, written_for
from buildlog.knowledge.bundle import Knowledge
from buildlog.knowledge.compat import Compat, cc_key
from buildlog.report.schema import Facts
from buildlog.segment import Span

_VERSIONED = ("found", "nvcc", "torch_cuda", "cuda", "driver_cuda")
_MODULE_PACKAGES = {"pkg_resources": "setuptools", "Cython": "cython", "setuptools_scm": "setuptools-scm"}


def template_values(captures: Mapping[str, str], facts: Facts, span: Span | None, k: Knowledge) -> dict[str, str]:
    """Every value a fix template may name, for one finding."""
    values = fact_values(facts)
    log_os = values.get("os", "")  # a rule's own `os` group names a wheel's target, not the log's system
    values.update({k: v for k, v in captures.items() if v})
    for key in _VERSIONED:
        _version_parts(values, key)
    if "torch" in values:
        values["torch_base"] = values["torch"].split("+")[0]
        values["torch_base_spec"] = f"torch=={values['torch_base']}"
    if span is not None:
        values.update(_command_values(span))
    values.update(_advice(values, facts, k.compat))
    values.update(_jobs_advice(facts, span, k))
    values.update(written_for({**values, "os": log_os}, span))
    return values


def _version_parts(values: dict[str, str], key: str) -> None:
    m = re.match(r"(\d+)\.(\d+)", values.get(key, ""))
    if m:
        values[f"{key}_major"] = m.group(1)
        values[f"{key}_nodot"] = m.group(1) + m.group(2)


def _command_values(span: Span) -> dict[str, str]:
    out: dict[str, str] = {}
    parts = [p for p in re.split(r"\s(?:&&|\|\||;)\s", span.command) if re.search(r"\binstall\b", p)]
    words = parts[-1].split() if parts else []  # in a chain, the last install is the one that builds
    if "install" in words:
        args = words[words.index("install") + 1 :]
        targets = [a for a in args if not a.startswith("-") and "=" not in a.split("==")[0]]
        if targets:
            out["package"] = targets[0]
            out["package_args"] = " ".join(args)
        names = [re.split(r"[<>=!~\[;@ ]", a.strip("'\""))[0] for a in args if not a.startswith("-")]
        names = [n for n in names if re.fullmatch(r"[A-Za-z0-9][\w.-]*", n)]
        if names:
            out["package_name"] = names[0]
    if span.venv:
        out["venv"] = span.venv
        out["venv_python"] = f"{span.venv}/bin/python"
        out["venv_hint"] = f" ({span.venv} was activated, but the install did not run in it)"
    return out


def _advice(values: Mapping[str, str], facts: Facts, compat: Compat) -> dict[str, str]:
    out: dict[str, str] = {}
    if "module" in values:
        out["module_package"] = _MODULE_PACKAGES.get(values["module"], values["module"])
    if "library" in values:
        out["library_name"] = values["library"].rsplit("/", 1)[-1]
    if "requirement" in values:
        out["requirement_name"] = re.split(r"[<>=!~\[;]", values["requirement"])[0]
    out.update(_gpu_advice(facts, compat))
    for key in ("found", "nvcc"):
        build = compat.torch_build_for(values[key]) if values.get(key) else None
        if build:
            out[f"{key}_torch"] = build[0]
            out[f"{key}_torch_spec"] = f'"torch=={build[0]}.*"'
            out[f"{key}_torch_index"] = "cu" + build[1].replace(".", "")
    release = compat.cuda_release(values.get("nvcc", "")) if values.get("nvcc") else None
    if release and release.gcc_max:
        out["gcc_max"] = release.gcc_max
    if re.fullmatch(r"\d{4,6}", values.get("found_driver", "")):  # torch prints the driver's CUDA API version: 11040 is 11.4
        api = int(values["found_driver"])
        out["found_driver_cuda"] = f"{api // 1000}.{api % 1000 // 10}"
    needs = compat.cuda_release(values.get("torch_cuda", "")) if values.get("torch_cuda") else None
    if needs and needs.driver_min:
        out["driver_min"] = needs.driver_min
    return out


def _gpu_advice(facts: Facts, compat: Compat) -> dict[str, str]:
    known = [(g.value, compat.gpu_for(g.value)) for g in facts.gpus]
    ccs = sorted({row.cc for _, row in known if row}, key=cc_key)
    ccs += [c.value for c in facts.gpu_cc if c.value not in ccs]
    out: dict[str, str] = {}
    if ccs:
        out["gpu_arch_list"] = ";".join(ccs)
    if known:
        name, row = known[0]
        out["gpu_hint"] = f" ({name}, compute capability {row.cc})" if row else f" ({name})"
    return out


def _jobs_advice(facts: Facts, span: Span | None, k: Knowledge) -> dict[str, str]:
    out: dict[str, str] = {}
    ram = facts.ram_gb.value if facts.ram_gb else None
    if ram:
        out["recommended_jobs"] = str(recommended_jobs(float(ram), package_of(facts, span, k.jobs), k.jobs))
    on_ram = f" on {ram} GB of RAM" if ram else ""
    setting = facts.max_jobs.value if facts.max_jobs else None
    ran = facts.jobs.value if facts.jobs else setting
    cores = facts.cores.value if facts.cores else None
    if ran:
        cause = f"MAX_JOBS={setting} ran" if setting else "with MAX_JOBS unset, the build ran"
        out["jobs_hint"] = f"{cause} {ran} compile jobs at once{on_ram}"
    elif cores:
        out["jobs_hint"] = f"MAX_JOBS was unset, so ninja ran about one job per core ({cores} cores){on_ram}"
    return out
