"""Which system a log came from, as the words of fixes and checks need it: a Windows log gets
PowerShell, the Visual Studio Build Tools and the CUDA installer's paths."""

from __future__ import annotations

import re
from collections.abc import Mapping

from buildlog.diagnose.template import WINDOWS
from buildlog.report.schema import Facts
from buildlog.segment import Span


def platform_values(facts: Facts, span: Span | None) -> dict[str, str]:
    """The platform a fix is written for, for the words of a check, whose other values its own code
    gives (see written_for)."""
    return written_for(fact_values(facts), span)


def written_for(values: Mapping[str, str], span: Span | None) -> dict[str, str]:
    """{"_platform": "windows"} for a Windows log, with the `_shell` its command was typed in
    (cmd, powershell) where the prompt shows it; nothing for any other."""
    if not on_windows(values, span):
        return {}
    return {"_platform": WINDOWS, **({"_shell": span.shell} if span is not None and span.shell else {})}


_WINDOWS_PATH = re.compile(r"^[A-Za-z]:[\\/]|\\(?:Program Files|Users|AppData)\\|\.exe\b|^PS [A-Za-z]:")


def on_windows(values: Mapping[str, str], span: Span | None) -> bool:
    """The log came from Windows: a drive-letter path among the facts, the command or the venv."""
    if "Windows" in values.get("os", ""):
        return True
    seen = [values.get(k, "") for k in ("cuda_home", "interpreter", "venv", "nvcc_path", "site")]
    if span is not None:
        seen += [span.command, span.venv or ""]
    return any(_WINDOWS_PATH.search(v) for v in seen if v)


def fact_values(facts: Facts) -> dict[str, str]:
    """The facts as template values: a list joined, a package's version as pkg_<name>."""
    out: dict[str, str] = {}
    for name, value in facts:
        if isinstance(value, list):
            if value:
                out[name] = ", ".join(dict.fromkeys(v.value for v in value))
        elif isinstance(value, dict):
            for pkg, v in value.items():
                out[f"pkg_{pkg.replace('-', '_')}"] = v.value
        elif value is not None:
            out[name] = value.value
    return out
