"""Fix templates: `{name}` placeholders filled from a mapping of values.

`{name|text}` gives `text` when the value is unknown; `text` may itself hold placeholders, nested to
any depth (`{a|{b|{c|words}}}`: the first known of a, b, c, else the words).
A template whose value is missing keeps a readable placeholder such as <name> instead of failing;
a `$` line that would keep one is said in words instead, so that every `$` line can be pasted.
When the values say the log came from Windows (`_platform` = "windows"), the `$` lines are written
for PowerShell: `export` becomes `$env:` (a `$(...)` substitution a PowerShell expression), toolkit
paths become the CUDA installer's, the venv's bin/python the python.exe in its Scripts folder, the Linux
package-manager lines for a host compiler the Visual Studio Build Tools, and a Linux command that
Windows has no form of (apt-file, ldd, ldconfig, ...) is said in words, never left as a command.
A line of a template that starts with `[windows] ` is kept only for a Windows log, one that starts
with `[linux] ` only for any other (the tag itself is dropped): for a step whose Windows form is not
a translation of the Linux one. A log typed at a Command Prompt (`_shell` = "cmd") gets the same
PowerShell lines, after a `$ powershell` that starts it, where any of them needs it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_PLACEHOLDER = re.compile(r"\{(\w+)(?:\|([^{}]*))?\}")  # innermost first: filled until none is left
_KEPT = re.compile("\x00(\\d+)\x00")
WINDOWS = "windows"
_EXPORT = re.compile(r"^(\s*\$ )export (.+)$")
# a value from the log may hold spaces
_ASSIGN = re.compile(r"(\w+)=(\"[^\"]*\"|'[^']*'|\S.*?)(?=\s+[A-Z_][A-Z0-9_]*=|\s*$)")
_TOOLKIT = re.compile(r"/usr/local/cuda-(\d+\.\d+)")
_TORCH_CUDA = '$(python -c "import torch; print(torch.version.cuda)")'
_WIN_TOOLKITS = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA"  # where the CUDA installer puts each release
_WIN_ROOT = _WIN_TOOLKITS + "\\v"
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
    windows = values.get("_platform") == WINDOWS
    lines = [kept for line in text.strip().splitlines() if (kept := _for_platform(line, windows)) is not None]
    text = "\n".join(_unpasteable(line) for line in lines)
    if windows:
        text = for_windows(text)
        if values.get("_shell") == "cmd":
            text = _from_cmd(text)
    return text


# What only PowerShell reads among the Windows forms of the fixes ($env:, its cmdlets, an expression).
_POWERSHELL_ONLY = re.compile(r"\$env:|\b(?:Get|Select|Sort|Remove|New|Out)-[A-Z]\w+|\$HOME\\| \+ \(|\$null\b")


def _from_cmd(text: str) -> str:
    """A fix for a log typed at a Command Prompt: where its `$` lines are PowerShell's, start it first
    (a Command Prompt reads neither `$env:` nor a PowerShell expression); plain commands run in both."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.lstrip().startswith("$ ")), None)
    if first is None or not any(line.lstrip().startswith("$ ") and _POWERSHELL_ONLY.search(line) for line in lines):
        return text
    indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
    start = [
        f"{indent}(these commands are PowerShell's: start it from the Command Prompt first)",
        f"{indent}$ powershell",
    ]
    return "\n".join(lines[:first] + start + lines[first:])


_TAG = re.compile(r"^(\s*)\[(windows|linux)\] ")


def _for_platform(line: str, windows: bool) -> str | None:
    """A `[windows] ` line only for a Windows log, a `[linux] ` line only for any other; untagged lines for both."""
    m = _TAG.match(line)
    if m is None:
        return line
    return m.group(1) + line[m.end() :] if (m.group(2) == WINDOWS) == windows else None


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
        if _NO_WINDOWS_FORM.search(line):  # a Linux tool Windows has no form of: said, not run
            out.append(f"(on Linux: `{line.strip()[2:]}`)")
            continue
        if re.fullmatch(r"\s*\$ hash -r", line):
            continue  # PowerShell keeps no cache of where commands are
        line = line.replace("/usr/local/cuda-" + _TORCH_CUDA, _WIN_ROOT + _TORCH_CUDA.replace('"', "'"))
        for bash, ps in _WIN_PATHS:
            line = bash.sub(ps, line)
        for bash, ps in _PS_FORMS:  # before `export` is read: its value may hold one of these substitutions
            # literal unless it names a group
            line = bash.sub(ps if re.search(r"\\[1-9]", ps) else lambda _m, ps=ps: ps, line)
        m = _EXPORT.match(line)
        if m:
            body = m.group(2)
            pairs = [tuple(body.split("=", 1))] if "$(" in body else _ASSIGN.findall(body)
            line = m.group(1) + "; ".join(_ps_assign(k, v) for k, v in pairs)
        line = _TOOLKIT.sub(lambda m: _WIN_ROOT + m.group(1), line)
        line = _ENV_PREFIX.sub(_ps_prefix, line)
        line = _ps_expressions(line)
        line = _BASH_VAR.sub(lambda m: "$env:" + _WIN_VARS.get(m.group(1), m.group(1)), line)
        if line not in out:  # two Linux forms of one check can become the same PowerShell line
            out.append(line)
    return "\n".join(out)


# Linux tools with no Windows counterpart to translate to (package searches, the C library's loader).
_NO_WINDOWS_FORM = re.compile(
    r"^\s*\$ (?:apt-file|apt-cache|dpkg|rpm|yum|dnf|ldd|ldconfig|strings|dmesg)\b|\$\(ldconfig\b|\bconda install .*\blibstdcxx-ng\b"
)
_GET_TOOLKITS = f"Get-ChildItem '{_WIN_TOOLKITS}'".replace("\\", "\\\\")  # as a substitution template
# Linux paths and the listings of them, in the forms Windows has: (bash, PowerShell template) pairs, in order.
_WIN_PATHS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(bash), ps)
    for bash, ps in (
        (
            r"ls -d /usr/local/cuda-\* \| sort -V \| tail -1",
            _GET_TOOLKITS
            + " | Sort-Object { [version]$_.Name.TrimStart('v') } | Select-Object -Last 1 -ExpandProperty FullName",
        ),
        (r"^(\s*\$ )ls -d /usr/local/cuda\*/bin/nvcc$", r"\1" + _GET_TOOLKITS[:-1] + r"\\*\\bin\\nvcc.exe'"),
        (r"^(\s*\$ )ls (?:-d )?/usr/local/(?:cuda[-*]*|\s*\| grep cuda)$", r"\1" + _GET_TOOLKITS),
        (r"^(\s*\$ )ls /usr/bin/gcc\S* /usr/bin/g\+\+\S*$", r"\1where.exe cl"),
        (r"^(\s*\$ )ls /usr/bin/python3\S*.*$", r"\1py -0p"),  # the py launcher lists every Python installed
        (
            r'^(\s*\$ )find / -name "lib(\w+)\.so\*".*$',
            r"\1" + _GET_TOOLKITS + r" -Recurse -Filter '\2*.lib' | Select-Object -First 10",
        ),
        (r"^(\s*\$ )rm -rf (\S+)$", r"\1Remove-Item -Recurse -Force \2 -ErrorAction SilentlyContinue"),
        (r"^(\s*\$ )python3 ", r"\1python "),  # Windows' Python is python.exe (py.exe the launcher)
        (r"^(\s*\$ )where (?=\w)", r"\1where.exe "),  # PowerShell's `where` is Where-Object
        (r"~/|\$HOME/", r"$HOME\\"),
        (r"(?<=\S)/bin/python3?\b", r"\\Scripts\\python.exe"),
        (r"(?<=\S)/bin/nvcc\b", r"\\bin\\nvcc.exe"),
        (r"/usr/local/cuda\b(?!-)", "$CUDA_PATH"),  # the CUDA installer sets CUDA_PATH to the toolkit it installed
        (r"(?<=\S)/lib64\b", r"\\lib\\x64"),
        (r"\$CONDA_PREFIX/lib\b", r"$CONDA_PREFIX\\Library\\lib"),
        (r"(\$[A-Z_]+)/(include|bin|lib)\b", r"\1\\\2"),
    )
)
# What MSVC and the Windows loader read instead of the Linux search paths.
_WIN_VARS = {"CPATH": "INCLUDE", "LIBRARY_PATH": "LIB", "LD_LIBRARY_PATH": "PATH"}
_BASH_VAR = re.compile(r"(?<![\w:])\$(?!env:|HOME\b|null\b|true\b|false\b|_\b)([A-Z_][A-Z0-9_]*)\b")


def _ps_expressions(line: str) -> str:
    """Each `$(...)` left in an argument ("pre$(cmd)post" or a bare pre$(cmd)post) as PowerShell's
    ("pre" + (cmd) + "post"): PowerShell reads a parenthesised expression as one argument."""
    pos = 0
    while (i := line.find("$(", pos)) >= 0:
        j = _closing(line, i + 1)
        if j < 0:
            break
        before = line[:i]
        if before.count('"') % 2:  # inside a "..." string: the string is the argument
            start, end = before.rfind('"'), line.find('"', j + 1)
            if end < 0:
                break
            pre, post, end = line[start + 1 : i], line[j + 1 : end], end + 1
        else:
            start = before.rfind(" ") + 1
            end = next((k for k in range(j + 1, len(line)) if line[k] == " "), len(line))
            pre, post = line[start:i], line[j + 1 : end]
        terms = [f'"{pre}"' if pre else "", f"({line[i + 2 : j]})", f'"{post}"' if post else ""]
        expression = "(" + " + ".join(t for t in terms if t) + ")"
        line, pos = line[:start] + expression + line[end:], start + len(expression)
    return line


def _closing(text: str, opening: int) -> int:
    """The index of the `)` that closes the `(` at `opening` (-1 if none does)."""
    depth = 0
    for k in range(opening, len(text)):
        depth += {"(": 1, ")": -1}.get(text[k], 0)
        if depth == 0:
            return k
    return -1


# The shell words of the fixes that PowerShell says otherwise: (bash, PowerShell) pairs, applied in order;
# a PowerShell side naming a group (\\1) is a template, any other is taken literally.
_PS_FORMS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(bash), ps)
    for bash, ps in (
        (
            r"\$\(nvcc --version \| sed -n 's/\.\*release [^']*'\)",
            "$((nvcc --version | Select-String 'release (\\d+)\\.(\\d+)').Matches[0].Groups[1,2].Value -join '')",
        ),
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


def _ps_prefix(m: re.Match[str]) -> str:
    """`VAR=v cmd` as PowerShell: `$env:VAR = "v"; cmd`."""
    return m.group(1) + "".join(_ps_assign(*a.split("=", 1)) + "; " for a in m.group(2).split())


def _ps_assign(name: str, value: str) -> str:
    """`NAME=value` as PowerShell: `$env:NAME = "value"`, a `$(...)` in it a PowerShell expression, a
    path list separated by `;`, the search-path variables the ones Windows reads."""
    value = value[1:-1] if len(value) > 1 and value[0] == value[-1] and value[0] in "\"'" else value
    name = _WIN_VARS.get(name, name)
    if name in ("CC", "CXX", "NVCC_CCBIN"):
        value = "cl.exe"
    value = re.sub(r"/bin:", r"\\bin;", value)
    value = re.sub(r"(?<=[\w)]):(?=\$)", ";", value)  # `a:$PATH`, `$(...):$X`: a path list
    value = _BASH_VAR.sub(lambda m: "$env:" + _WIN_VARS.get(m.group(1), m.group(1)), value)
    parts = _substitutions(value)  # literal, command, literal, ...
    if len(parts) == 1:
        return f'$env:{name} = "{value}"'
    terms = [f"({p})" if i % 2 else f'"{p}"' for i, p in enumerate(parts) if p]
    return f"$env:{name} = " + " + ".join(terms)


def _substitutions(value: str) -> list[str]:
    """A value split at its `$(...)` substitutions (nested parentheses matched): literal, command, literal, ..."""
    parts, start = [], 0
    while (i := value.find("$(", start)) >= 0 and (j := _closing(value, i + 1)) >= 0:
        parts += [value[start:i], value[i + 2 : j]]
        start = j + 1
    return parts + [value[start:]]
