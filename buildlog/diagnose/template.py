"""Fix templates: `{name}` placeholders filled from a mapping of values.

`{name|text}` gives `text` when the value is unknown; `text` may itself hold placeholders, nested to
any depth (`{a|{b|{c|words}}}`: the first known of a, b, c, else the words).
A template whose value is missing keeps a readable placeholder such as <name> instead of failing;
a `$` line that would keep one is said in words instead, so that every `$` line can be pasted.
When the values say the log came from Windows (`_platform` = "windows"), the `$` lines are written
for PowerShell: `export` becomes `$env:`, toolkit paths become the CUDA installer's, and the Linux
package-manager lines for a host compiler become the Visual Studio Build Tools.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_PLACEHOLDER = re.compile(r"\{(\w+)(?:\|([^{}]*))?\}")  # innermost first: filled until none is left
_KEPT = re.compile("\x00(\\d+)\x00")
WINDOWS = "windows"
_EXPORT = re.compile(r"^(\s*\$ )export (.+)$")
_ASSIGN = re.compile(r"(\w+)=(\"[^\"]*\"|'[^']*'|\S+)")
_TOOLKIT = re.compile(r"/usr/local/cuda-(\d+\.\d+)")
_TORCH_CUDA = '$(python -c "import torch; print(torch.version.cuda)")'
_WIN_ROOT = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v"
_VS_TOOLS = (
    '$ winget install Microsoft.VisualStudio.2022.BuildTools --override "--quiet --wait '
    '--add Microsoft.VisualStudio.Workload.VCTools --includeRecommended"'
)


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace placeholders; unknown names without a fallback become <name>."""
    kept: list[str] = []  # values from the log are set aside, so a brace in one is never read as a placeholder

    def one(match: re.Match[str]) -> str:
        name, fallback = match.group(1), match.group(2)
        if value := values.get(name, ""):
            kept.append(value)
            return f"\x00{len(kept) - 1}\x00"
        return f"<{name}>" if fallback is None else fallback

    text, done = template, ""
    while text != done:
        text, done = _PLACEHOLDER.sub(one, text), text
    text = _KEPT.sub(lambda m: kept[int(m.group(1))], text)
    text = "\n".join(_unpasteable(line) for line in text.strip().splitlines())
    if values.get("_platform") == WINDOWS:
        text = for_windows(text)
    return text


def _unpasteable(line: str) -> str:
    """A `$` line that kept a `<name>` is no command to paste: say it in words instead."""
    holes = re.findall(r"<(\w+)>", line) if line.lstrip().startswith("$ ") else []
    if not holes:
        return line
    command = re.sub(r"\s*<\w+>", "", line.lstrip()[2:]).strip()
    return f"(then run `{command}` with the {', '.join(h.replace('_', ' ') for h in holes)} added)"


def for_windows(text: str) -> str:
    """The same fix with its `$` lines in PowerShell and Windows paths."""
    out: list[str] = []
    for line in text.splitlines():
        if not line.lstrip().startswith("$ "):
            out.append(line)
            continue
        if re.search(r"\bapt(?:-get)? install\b.*\b(?:gcc|g\+\+|build-essential)", line):
            if _VS_TOOLS not in out:
                out.append(_VS_TOOLS)
            continue
        line = line.replace("/usr/local/cuda-" + _TORCH_CUDA, _WIN_ROOT + _TORCH_CUDA.replace('"', "'"))
        m = _EXPORT.match(line)
        if m:
            body = m.group(2)
            pairs = [tuple(body.split("=", 1))] if "$(" in body else _ASSIGN.findall(body)
            line = m.group(1) + "; ".join(_ps_assign(k, v) for k, v in pairs)
        line = _TOOLKIT.sub(lambda m: _WIN_ROOT + m.group(1), line)
        line = line.replace("$CUDA_HOME", "$env:CUDA_HOME").replace("$CONDA_PREFIX", "$env:CONDA_PREFIX")
        line = _powershell(line)
        if line not in out:  # two Linux forms of one check can become the same PowerShell line
            out.append(line)
    return "\n".join(out)


# The shell words of the fixes that PowerShell says otherwise: (bash, PowerShell) pairs, applied in order;
# a PowerShell side naming a group (\\1) is a template, any other is taken literally.
_PS_FORMS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(bash), ps)
    for bash, ps in (
        (r"\$\(nvcc --version \| sed -n 's/\.\*release [^']*'\)", "$((nvcc --version | Select-String 'release (\\d+)\\.(\\d+)').Matches[0].Groups[1,2].Value -join '')"),
        (r"\| sort -u \| paste -sd';' -\)", "| Sort-Object -Unique) -join ';')"),
        (r'"\$\(nvidia-smi ', '"$((nvidia-smi '),
        (r"^(\s*\$ )df -h\b.*$", r"\1Get-PSDrive -PSProvider FileSystem"),
        (r"^(\s*\$ )mkdir -p (\S+) && ", r"\1New-Item -ItemType Directory -Force \2 | Out-Null; "),
        (r"\| head -(\d+)$", r"| Select-Object -First \1"),
        (r"\| head$", "| Select-Object -First 10"),
        (r"2>/dev/null", "2>$null"),
        (r"^(\s*\$ )curl ", r"\1curl.exe "),
    )
)
_ENV_PREFIX = re.compile(r"(^\s*\$ |; )((?:[A-Z_][A-Z0-9_]*=\S+\s+)+)(?=\S)")  # `VAR=v cmd`, also after a `;`


def _powershell(line: str) -> str:
    """One `$` line's bash-only words in PowerShell: `VAR=v cmd` prefixes, df, mkdir -p, the
    nvcc-version and nvidia-smi substitutions, head, /dev/null."""
    for bash, ps in _PS_FORMS:
        line = bash.sub(ps if re.search(r"\\[1-9]", ps) else lambda _m, ps=ps: ps, line)  # literal unless it names a group
    return _ENV_PREFIX.sub(lambda m: m.group(1) + "".join(_ps_assign(*a.split("=", 1)) + "; " for a in m.group(2).split()), line)


def _ps_assign(name: str, value: str) -> str:
    value = value.strip("\"'")
    if name == "PATH":
        value = value.replace("/bin:", "\\bin;").replace(":$PATH", ";$env:PATH").replace("$PATH", "$env:PATH")
    elif name in ("CC", "CXX", "NVCC_CCBIN"):
        value = "cl.exe"
    return f'$env:{name} = "{value}"'
