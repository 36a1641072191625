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
    # torch prints the driver's CUDA API version: 11040 is 11.4
    if re.fullmatch(r"\d{4,6}", values.get("found_driver", "")):
        api = int(values["found_driver"])
        out["found_driver_cuda"] = f"{api // 1000}.{api % 1000 // 10}"
    out.update(_jax_component_advice(values))
    needs = compat.cuda_release(values.get("torch_cuda", "")) if values.get("torch_cuda") else None
    if needs and needs.driver_min:
        out["driver_min"] = needs.driver_min
    return out


# The pip wheel that carries each CUDA component jax checks (for a CUDA 12 jaxlib).
_JAX_WHEELS = {
    "CUDA": "nvidia-cuda-runtime-cu12",
    "cuDNN": "nvidia-cudnn-cu12",
    "cuBLAS": "nvidia-cublas-cu12",
    "cuFFT": "nvidia-cufft-cu12",
    "cuSOLVER": "nvidia-cusolver-cu12",
    "cuSPARSE": "nvidia-cusparse-cu12",
    "cuPTI": "nvidia-cuda-cupti-cu12",
    "CUPTI": "nvidia-cuda-cupti-cu12",
    "NCCL": "nvidia-nccl-cu12",
    "nvJitLink": "nvidia-nvjitlink-cu12",
}


def _jax_version(component: str, number: int) -> str:
    """jax prints a CUDA component's version as one integer: the runtime's 12010 is 12.1, cuDNN's 8600
    8.6.0 (cuDNN 9's 90300 9.3.0), cuBLAS's 120205 12.2.5, cuSOLVER's 11405 11.4.5."""
    if component == "CUDA":
        return f"{number // 1000}.{number % 1000 // 10}"
    major, rest = divmod(
        number, 10000 if number >= 100000 or (number >= 10000 and component in ("cuDNN", "NCCL")) else 1000
    )
    return f"{major}.{rest // 100}.{rest % 100}"


def _jax_component_advice(values: Mapping[str, str]) -> dict[str, str]:
    """Dotted versions and the pip wheel for a CUDA component jax's version check names."""
    component = values.get("jax_lib") or values.get("jax_lib_o") or values.get("jax_missing") or ""
    out: dict[str, str] = {}
    if component:
        out["jax_component"] = component
        if component in _JAX_WHEELS:
            out["jax_wheel"] = _JAX_WHEELS[component]
    for name, keys in (
        ("found", ("jax_found", "jax_found_o")),
        ("built", ("jax_built", "jax_built_o")),
        ("minimum", ("jax_minimum",)),
    ):
        number = next((values[k] for k in keys if values.get(k)), "")
        if re.fullmatch(r"\d{4,6}", number):
            out[f"jax_{name}_v"] = _jax_version(component, int(number))
    if needed := out.get("jax_minimum_v") or out.get("jax_built_v"):
        out["jax_needed_v"] = needed
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
