"""The words knowledge files may use: event kinds, fact names, stages, kinds of change, and the
values a fix template may name. The loader checks every knowledge file against these, so a typo
in a rule is a load error instead of a rule that never fires.
"""

from __future__ import annotations

from enum import Enum


class EventKind(str, Enum):
    """What kind of line an event is: the grammar that accepted it and the rule it matched.

    `GRAMMAR_RULES` maps each (grammar, rule) to one of these; a test checks that every
    alternative of every grammar's `start` has an entry, so no kind is ever made up by formatting.
    """

    TEXT = "text"
    COMMAND = "command"
    DIAGNOSTIC = "diagnostic"
    TOOL_MESSAGE = "tool_message"
    TRACEBACK = "traceback"
    FRAME = "frame"
    PY_WARNING = "py_warning"
    EXCEPTION = "exception"
    NINJA_PROGRESS = "ninja_progress"
    NINJA_FAILED = "ninja_failed"
    NINJA_MESSAGE = "ninja_message"
    PIP_STAGE = "pip_stage"
    PIP_STATUS = "pip_status"
    PIP_ERROR = "pip_error"
    PIP_BLOCK = "pip_block"
    PIP_SUCCESS = "pip_success"
    PIP_SATISFIED = "pip_satisfied"
    PIP_HINT = "pip_hint"
    UV_CHAIN = "uv_chain"
    BANNER_NVCC_RELEASE = "banner_nvcc_release"
    BANNER_SMI_HEADER = "banner_smi_header"
    BANNER_GPU_LISTING = "banner_gpu_listing"
    BANNER_TORCH_VERSION = "banner_torch_version"
    BANNER_COMPILER_VERSION = "banner_compiler_version"
    BANNER_PYTHON_VERSION = "banner_python_version"
    BANNER_COLLECT_ENV = "banner_collect_env"
    BANNER_MEMORY = "banner_memory"

    def __str__(self) -> str:
        return self.value


GRAMMAR_RULES: dict[tuple[str, str], EventKind] = {
    ("command", "start"): EventKind.COMMAND,
    ("diagnostic", "located"): EventKind.DIAGNOSTIC,
    ("diagnostic", "tool"): EventKind.TOOL_MESSAGE,
    ("python", "traceback"): EventKind.TRACEBACK,
    ("python", "frame"): EventKind.FRAME,
    ("python", "chain"): EventKind.TRACEBACK,
    ("python", "warning"): EventKind.PY_WARNING,
    ("python", "exception"): EventKind.EXCEPTION,
    ("ninja", "progress"): EventKind.NINJA_PROGRESS,
    ("ninja", "failed"): EventKind.NINJA_FAILED,
    ("ninja", "ninja_says"): EventKind.NINJA_MESSAGE,
    ("pip", "stage"): EventKind.PIP_STAGE,
    ("pip", "status"): EventKind.PIP_STATUS,
    ("pip", "error"): EventKind.PIP_ERROR,
    ("pip", "block"): EventKind.PIP_BLOCK,
    ("pip", "success"): EventKind.PIP_SUCCESS,
    ("pip", "satisfied"): EventKind.PIP_SATISFIED,
    ("pip", "uv_chain"): EventKind.UV_CHAIN,
    ("pip", "hint"): EventKind.PIP_HINT,
    ("banner", "nvcc_release"): EventKind.BANNER_NVCC_RELEASE,
    ("banner", "smi_header"): EventKind.BANNER_SMI_HEADER,
    ("banner", "gpu_listing"): EventKind.BANNER_GPU_LISTING,
    ("banner", "torch_version"): EventKind.BANNER_TORCH_VERSION,
    ("banner", "compiler_version"): EventKind.BANNER_COMPILER_VERSION,
    ("banner", "python_version"): EventKind.BANNER_PYTHON_VERSION,
    ("banner", "collect_env"): EventKind.BANNER_COLLECT_ENV,
    ("banner", "memory"): EventKind.BANNER_MEMORY,
}

GRAMMARS = ("command", "diagnostic", "python", "ninja", "pip", "banner")

# How far a build got, in order (knowledge/stages.toml says which lines show each).
STAGES = ("start", "resolve", "build-deps", "metadata", "setup", "configure", "compile", "link", "install", "run")

# The facts a log can state (report.schema.Facts has one field each).
SCALAR_FACTS = (
    "nvcc", "cuda_home", "torch", "torch_cuda", "driver", "driver_cuda", "gcc", "python", "interpreter",
    "venv", "max_jobs", "jobs", "nvcc_threads", "arch_list", "ram_gb", "cores", "os",
)  # fmt: skip
LIST_FACTS = ("gpus", "gpu_cc", "gencode")
FACTS = SCALAR_FACTS + LIST_FACTS

# Named groups of a fact pattern that stand for a fact under another name, and the groups that
# combine into one (a package and its version; RAM in kB).
FACT_GROUP_ALIASES = {
    "gpu": "gpus",
    "win_home": "cuda_home",
    "win_nvcc": "nvcc",
    "gencode_2": "gencode",
    "torch_cuda_2": "torch_cuda",
    "jobs_2": "jobs",
    "jobs_3": "jobs",
    "torch_2": "torch",
}
FACT_GROUPS_COMBINED = frozenset({"package", "version", "ram_kb", "site", "windows", "python_tag"})

# Kinds of change between two attempts (knowledge/resolution.toml ranks them per cause).
CHANGE_KINDS = frozenset({
    "toolkit", "jobs", "arch", "compiler", "disk", "interpreter", "isolation", "packages", "version",
    "flags", "env", "driver", "rerun",
})  # fmt: skip

# Values a fix template may name besides the rule's own named groups and the facts: what
# diagnose/fixes.py derives from them (a test holds the two to each other).
DERIVED_VALUES = frozenset({
    "found_major", "found_nodot", "nvcc_major", "nvcc_nodot", "torch_cuda_major", "torch_cuda_nodot",
    "cuda_major", "cuda_nodot", "driver_cuda_major", "driver_cuda_nodot", "torch_base",
    "package", "package_args", "venv_python", "venv_hint", "module_package", "library_name",
    "requirement_name", "gpu_arch_list", "gpu_hint", "found_torch", "found_torch_index", "nvcc_torch",
    "nvcc_torch_index", "gcc_max", "driver_min", "recommended_jobs", "jobs_hint",
    "found_torch_spec", "nvcc_torch_spec", "torch_base_spec", "package_name", "found_driver_cuda",
    "jax_component", "jax_wheel", "jax_found_v", "jax_built_v", "jax_minimum_v", "jax_needed_v",
})  # fmt: skip

ROLES = ("cause", "symptom", "success", "noise")
