"""Facts: the versions and settings a log states, gathered from events into a typed record.

Version banners arrive already parsed by the grammars; other statements are found by the fact
patterns in knowledge/facts.toml; settings come from the commands a log shows being run. Each
observation keeps its line, so per-attempt facts and evidence can point back into the log.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from buildlog.knowledge.bundle import Knowledge
from buildlog.knowledge.vocabulary import FACT_GROUP_ALIASES, LIST_FACTS, SCALAR_FACTS, EventKind
from buildlog.parse.events import Event
from buildlog.parse.window import search
from buildlog.report.schema import Facts, FactValue

ENV_FACTS = {"CUDA_HOME": "cuda_home", "CUDA_PATH": "cuda_home", "MAX_JOBS": "max_jobs",
             "TORCH_CUDA_ARCH_LIST": "arch_list", "NVCC_THREADS": "nvcc_threads"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Observation:
    """One statement of a fact: name, value, line."""

    name: str
    value: str
    line: int
    inline: bool = False  # set by `VAR=value cmd`: holds for that command only
    change: bool = False  # an install changed the value here


def observe(events: Iterable[Event], knowledge: Knowledge) -> Iterator[Observation]:
    """Every fact stated by the events, in line order."""
    for event in events:
        yield from _from_banner(event)
        yield from _from_command(event)
        for record in knowledge.facts_for(event.anchors):
            for hit in search(
                record.regex, event, record.multiline, record.all_matches, [a.lstrip("\n") for a in record.anchors]
            ):
                for obs in _from_groups(hit.groups, hit.group_lines, event.line):
                    yield replace(obs, change=record.change) if record.change else obs


def _from_groups(groups: dict[str, str], lines: dict[str, int], default: int) -> Iterator[Observation]:
    if "package" in groups and "version" in groups:
        yield Observation(
            f"package:{groups['package'].replace('_', '-')}", groups["version"], lines.get("version", default)
        )
    if groups.get("windows"):
        yield Observation("os", "Windows", lines.get("windows", default))
    if "ram_kb" in groups:
        yield Observation("ram_gb", str(round(int(groups["ram_kb"]) / 1024 / 1024)), lines.get("ram_kb", default))
    for key, value in groups.items():
        name = FACT_GROUP_ALIASES.get(key, key)
        if name in SCALAR_FACTS or name in LIST_FACTS:
            yield Observation(name, value.strip(), lines.get(key, default))


def _from_banner(event: Event) -> Iterator[Observation]:
    f, line = event.fields, event.line
    if event.kind is EventKind.BANNER_NVCC_RELEASE:
        yield Observation("nvcc", f["version"], line)
    elif event.kind is EventKind.BANNER_SMI_HEADER:
        yield Observation("driver", f["version_2"], line)
        if f.get("cuda_version", "N/A") != "N/A":
            yield Observation("driver_cuda", f["cuda_version"], line)
    elif event.kind is EventKind.BANNER_GPU_LISTING:
        yield Observation("gpus", f["gpu_name"], line)
    elif event.kind is EventKind.BANNER_TORCH_VERSION:
        yield Observation("torch", f["version"], line)
    elif event.kind is EventKind.BANNER_COMPILER_VERSION and "clang" not in f["compiler"]:
        yield Observation("gcc", f["version"], line)
    elif event.kind is EventKind.BANNER_PYTHON_VERSION:
        yield Observation("python", f["version"], line)
    elif event.kind is EventKind.BANNER_MEMORY:
        yield from _memory(f["number"], line)
    elif event.kind is EventKind.BANNER_COLLECT_ENV:
        yield from _collect_env(f["env_key"], f.get("rest", ""), line)


_UNIT_GB = {"": 1.0, "G": 1.0, "Gi": 1.0, "T": 1024.0, "Ti": 1024.0, "M": 1 / 1024, "Mi": 1 / 1024}


def _memory(number: str, line: int) -> Iterator[Observation]:
    """`free -g` prints whole GB; `free -h` adds a unit; `free` alone prints KiB (a huge number)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGT]?i?)", number)
    if not m:
        return
    value, unit = float(m.group(1)), m.group(2)
    if unit == "" and value > 64 * 1024:
        value /= 1024 * 1024
    elif unit in _UNIT_GB:
        value *= _UNIT_GB[unit]
    else:
        return
    yield Observation("ram_gb", f"{value:.0f}", line)


_COLLECT_ENV = {
    "PyTorch version": "torch",
    "CUDA used to build PyTorch": "torch_cuda",
    "Nvidia driver version": "driver",
    "CUDA runtime version": "nvcc",
    "GPU models and configuration": "gpus",
}


def _collect_env(key: str, rest: str, line: int) -> Iterator[Observation]:
    name = _COLLECT_ENV.get(key)
    if key == "GCC version":
        m = re.search(r"(\d+\.\d+\.\d+)", rest)
        if m:
            yield Observation("gcc", m.group(1), line)
    elif key == "Python version":
        m = re.match(r"(3\.\d+(?:\.\d+)?)", rest)
        if m:
            yield Observation("python", m.group(1), line)
    elif name and rest and rest not in ("N/A", "Could not collect", "None"):
        value = re.sub(r"^GPU \d+:\s*", "", rest) if name == "gpus" else rest.split()[0]
        yield Observation(name, value, line)


def _from_command(event: Event) -> Iterator[Observation]:
    if event.kind is not EventKind.COMMAND:
        return
    venv = event.fields.get("venv")
    if venv:
        yield Observation("venv", venv.strip("()"), event.line)
    for command in event.commands:
        inline = command.argv[:1] != ("export",)
        for key, value in command.env.items():
            if key in ENV_FACTS:
                yield Observation(ENV_FACTS[key], value, event.line, inline)
            if key in ("CUDA_HOME", "CUDA_PATH"):
                release = re.search(r"cuda-?v?(\d+\.\d+)/?$", value, re.IGNORECASE)
                if release:  # a versioned toolkit path names the nvcc the build will use
                    yield Observation("nvcc", release.group(1), event.line, inline)
        if len(command.argv) >= 2 and command.argv[0] in ("source", ".") and command.argv[1].endswith("/activate"):
            yield Observation("venv", command.argv[1].rsplit("/bin/activate", 1)[0], event.line)
        elif len(command.argv) >= 3 and command.argv[:2] in (("conda", "activate"), ("mamba", "activate")):
            yield Observation("venv", command.argv[2], event.line)


# Facts about the machine that a later line may state for an earlier attempt too, as long as
# nothing in between changed them (a torch version printed after a failed build still describes it).
STABLE_FACTS = frozenset(
    {"torch", "torch_cuda", "driver", "driver_cuda", "gpus", "gpu_cc", "ram_gb", "cores", "os", "gcc", "python"}
)


class FactIndex:
    """The observations of a log by fact, for the facts in force at any line without a pass over all.

    A session of a thousand attempts asks for the facts of each; looking each fact up by line keeps
    that proportional to the facts, not to every statement of the log.
    """

    def __init__(self, observations: Sequence[Observation]) -> None:
        by_name: dict[str, list[Observation]] = {}
        for obs in observations:
            by_name.setdefault(obs.name, []).append(obs)
        self._by_name = {name: sorted(obs, key=lambda o: o.line) for name, obs in by_name.items()}
        self._lines = {name: [o.line for o in obs] for name, obs in self._by_name.items()}
        self._run_start: dict[str, list[int]] = {}  # where the run of equal values ending at each one began
        self._firsts: dict[str, list[Observation]] = {}  # list facts: each distinct value where first stated
        for name, stated in self._by_name.items():
            starts = []
            for i, obs in enumerate(stated):
                starts.append(starts[-1] if i and stated[i - 1].value == obs.value else i)
            self._run_start[name] = starts
            if name in LIST_FACTS:
                seen: dict[str, Observation] = {}
                for obs in stated:
                    seen.setdefault(obs.value, obs)
                self._firsts[name] = list(seen.values())

    def facts(self, until: int | None = None, since: int = 0) -> Facts:
        """The facts in force at line `until` (all when None) for a command starting at line `since`.

        The last statement wins (a repeat of the same value keeps the line that first said it); a
        variable set inline on an earlier command does not carry over; a stable fact first stated
        after `until` is taken when no install changed it in between.
        """
        scalars: dict[str, FactValue] = {}
        lists: dict[str, list[FactValue]] = {name: [] for name in LIST_FACTS}
        packages: dict[str, FactValue] = {}
        for name, stated in self._by_name.items():
            cut = len(stated) if until is None else bisect_right(self._lines[name], until)
            last = cut - 1
            while last >= 0 and stated[last].inline and stated[last].line < since:
                last -= 1  # set inline on an earlier command: it does not carry over
            if last < 0 and until is not None and name in STABLE_FACTS and cut < len(stated):
                after = stated[cut]
                if not (after.change or after.inline):
                    scalars_or_lists = FactValue(value=after.value, line=after.line)
                    _put(name, scalars_or_lists, scalars, lists, packages)
                continue
            if last < 0:
                continue
            if name in LIST_FACTS:
                lists[name] = [
                    FactValue(value=o.value, line=o.line)
                    for o in self._firsts[name]
                    if o.line <= stated[last].line and not (o.inline and o.line < since)
                ]
            else:
                first = stated[self._run_start[name][last]]
                _put(name, FactValue(value=stated[last].value, line=first.line), scalars, lists, packages)
        _derive(scalars)
        lists["gpus"] = _drop_truncated(lists["gpus"])
        return Facts(**{**scalars, **lists, "packages": packages})


def _put(name: str, value: FactValue, scalars: dict, lists: dict, packages: dict) -> None:
    if name.startswith("package:"):
        packages[name.split(":", 1)[1]] = value
    elif name in LIST_FACTS:
        lists[name] = [value]
    else:
        scalars[name] = value


def fold(observations: Sequence[Observation], until: int | None = None, since: int = 0) -> Facts:
    """The facts in force at line `until` (see FactIndex.facts), for one question."""
    return FactIndex(observations).facts(until, since)


def _drop_truncated(names: list[FactValue]) -> list[FactValue]:
    """nvidia-smi's table cuts long names ("NVIDIA RTX PRO 6000 Blac..."); keep the full name if stated."""
    full = [n.value for n in names if not n.value.endswith("...")]
    return [n for n in names if not (n.value.endswith("...") and any(f.startswith(n.value[:-3]) for f in full))]


def _derive(scalars: dict[str, FactValue]) -> None:
    """torch's local version tag states its CUDA build (+cu128 -> 12.8) when nothing else does."""
    torch = scalars.get("torch")
    if torch and "torch_cuda" not in scalars:
        m = re.search(r"\+cu(\d+)(\d)$", torch.value)
        if m:
            scalars["torch_cuda"] = FactValue(value=f"{m.group(1)}.{m.group(2)}", line=torch.line)
