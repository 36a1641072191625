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
from typing import Protocol

from buildlog.knowledge.bundle import Knowledge
from buildlog.knowledge.vocabulary import FACT_GROUP_ALIASES, LIST_FACTS, SCALAR_FACTS, EventKind
from buildlog.parse.events import Event
from buildlog.parse.window import search
from buildlog.report.schema import Contradiction, Facts, FactValue, Statement

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
    says: str = ""  # what kind of statement it is ("pip install", "nvcc --version"), as a contradiction names it
    role: str = "stated"  # "used" (the build's own output), "set" (the user set it), "candidate" (not in force)


def observe(events: Iterable[Event], knowledge: Knowledge) -> Iterator[Observation]:
    """Every fact stated by the events, in line order."""
    for event in events:
        if event.kind is EventKind.COMMAND:
            yield from _from_command(event)
        elif event.kind in _BANNERS:
            yield from _from_banner(event)
        for record in knowledge.facts_for(event.anchors):
            for hit in search(record.regex, event, record.multiline, record.all_matches, record.anchors):
                line, says = event.line, record.says
                yield from _from_groups(hit.groups, hit.group_lines, line, record.change, says, record.role)


def _from_groups(
    groups: dict[str, str], lines: dict[str, int], default: int, change: bool = False, says: str = "",
    role: str = "stated",
) -> Iterator[Observation]:  # fmt: skip
    """The observations a fact pattern's named groups make, each with the pattern's change, says and role."""
    if "package" in groups and "version" in groups:
        name = f"package:{groups['package'].replace('_', '-')}"
        yield Observation(name, groups["version"], lines.get("version", default), False, change, says, role)
    if groups.get("windows"):
        yield Observation("os", "Windows", lines.get("windows", default), False, change, says, role)
    if groups.get("python_tag"):  # cp310 -> 3.10
        tag = groups["python_tag"]
        yield Observation("python", f"{tag[0]}.{tag[1:]}", lines.get("python_tag", default), False, change, says, role)
    if "ram_kb" in groups:
        ram = str(round(int(groups["ram_kb"]) / 1024 / 1024))
        yield Observation("ram_gb", ram, lines.get("ram_kb", default), False, change, says, role)
    for key, value in groups.items():
        name = FACT_GROUP_ALIASES.get(key, key)
        if name in SCALAR_FACTS or name in LIST_FACTS:
            value = value.strip().replace("%2B", "+") if name == "torch" else value.strip()  # a URL-quoted wheel name
            yield Observation(name, value, lines.get(key, default), False, change, says, role)


_BANNERS = frozenset(kind for kind in EventKind if kind.name.startswith("BANNER_"))


def _from_banner(event: Event) -> Iterator[Observation]:
    f, line = event.fields, event.line
    if event.kind is EventKind.BANNER_NVCC_RELEASE:
        yield Observation("nvcc", f["version"], line, says="nvcc --version")
    elif event.kind is EventKind.BANNER_SMI_HEADER:
        yield Observation("driver", f["version_2"], line, says="nvidia-smi")
        if f.get("cuda_version", "N/A") != "N/A":
            yield Observation("driver_cuda", f["cuda_version"], line, says="nvidia-smi")
    elif event.kind is EventKind.BANNER_GPU_LISTING:
        yield Observation("gpus", f["gpu_name"], line)
    elif event.kind is EventKind.BANNER_TORCH_VERSION:
        yield Observation("torch", f["version"], line, says="the build's torch.__version__", role="used")
    elif event.kind is EventKind.BANNER_COMPILER_VERSION and "clang" not in f["compiler"]:
        yield Observation("gcc", f["version"], line, says="gcc --version")
    elif event.kind is EventKind.BANNER_PYTHON_VERSION:
        yield Observation("python", f["version"], line, says="python --version")
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
            yield Observation("gcc", m.group(1), line, says="collect_env")
    elif key == "Python version":
        m = re.match(r"(3\.\d+(?:\.\d+)?)", rest)
        if m:
            yield Observation("python", m.group(1), line, says="collect_env")
    elif name and rest and rest not in ("N/A", "Could not collect", "None"):
        value = re.sub(r"^GPU \d+:\s*", "", rest) if name == "gpus" else rest.split()[0]
        yield Observation(name, value, line, says="collect_env")


def _from_command(event: Event) -> Iterator[Observation]:
    if event.kind is not EventKind.COMMAND:
        return
    venv = event.fields.get("venv")
    if venv:
        yield Observation("venv", venv.strip("()"), event.line, role="set")
    for command in event.commands:
        inline = command.argv[:1] != ("export",)
        for key, value in command.env.items():
            if key in ENV_FACTS:
                says = f"export {key}" if not inline else f"{key}= on the command"
                yield Observation(ENV_FACTS[key], value, event.line, inline, says=says, role="set")
            if key in ("CUDA_HOME", "CUDA_PATH"):
                release = toolkit_release(value)
                if release:  # a versioned toolkit path names the nvcc the build will use
                    yield Observation("nvcc", release, event.line, inline, says=f"the {key} path", role="set")
        if len(command.argv) >= 2 and command.argv[0] in ("source", ".") and command.argv[1].endswith("/activate"):
            yield Observation("venv", command.argv[1].rsplit("/bin/activate", 1)[0], event.line, role="set")
        elif len(command.argv) >= 3 and command.argv[:2] in (("conda", "activate"), ("mamba", "activate")):
            yield Observation("venv", command.argv[2], event.line, role="set")


def toolkit_release(path: str) -> str | None:
    """The CUDA release a versioned toolkit path names (`/usr/local/cuda-12.1`, `...\\CUDA\\v12.4`)."""
    release = re.search(r"cuda-?v?(\d+\.\d+)[/\\]?$", path, re.IGNORECASE)
    return release.group(1) if release else None


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
        self._plain_before: dict[str, list[int]] = {}  # the last statement at or before each one not set inline
        self._firsts: dict[str, list[Observation]] = {}  # list facts: each distinct value where first stated
        self._contradicting = _Contradictions(observations)
        for name, stated in self._by_name.items():
            starts = []
            for i, obs in enumerate(stated):
                starts.append(starts[-1] if i and stated[i - 1].value == obs.value else i)
            self._run_start[name] = starts
            plain, last_plain = [], -1
            for i, obs in enumerate(stated):
                last_plain = last_plain if obs.inline else i
                plain.append(last_plain)
            self._plain_before[name] = plain
            if name in LIST_FACTS:
                seen: dict[str, Observation] = {}
                for obs in stated:
                    seen.setdefault(obs.value, obs)
                self._firsts[name] = list(seen.values())

    def contradictions(self, since: int = 0, until: int | None = None) -> list[Contradiction]:
        """Where the statements of one fact disagree between lines `since` and `until` (see _Contradictions)."""
        return self._contradicting.within(since, until)

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
            if last >= 0 and stated[last].inline and stated[last].line < since:
                last = self._plain_before[name][last]  # set inline on an earlier command: it does not carry over
            if last < 0 and until is not None and name in STABLE_FACTS and cut < len(stated):
                after = stated[cut]
                if not (after.change or after.inline):
                    _put(name, FactValue(value=after.value, line=after.line), scalars, lists, packages)
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
        for found in self._contradicting.within(since, until):
            if found.used is not None and found.fact in scalars:  # the build's own output says what it used
                scalars[found.fact] = FactValue(value=found.used.value, line=found.used.line)
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


def _drop_truncated(names: list[FactValue]) -> list[FactValue]:
    """nvidia-smi's table cuts long names ("NVIDIA RTX PRO 6000 Blac..."); keep the full name if stated."""
    full = [n.value for n in names if not n.value.endswith("...")]
    return [n for n in names if not (n.value.endswith("...") and any(f.startswith(n.value[:-3]) for f in full))]


def _derive(scalars: dict[str, FactValue]) -> None:
    """torch's local version tag states its CUDA build (+cu128 -> 12.8) when nothing else does."""
    torch = scalars.get("torch")
    if torch and "torch_cuda" not in scalars and (cuda := _tag_cuda(torch.value)):
        scalars["torch_cuda"] = FactValue(value=cuda, line=torch.line)


def _tag_cuda(torch: str) -> str | None:
    """The CUDA of torch's local version tag: 2.5.1+cu121 -> 12.1."""
    m = re.search(r"\+cu(\d+)(\d)$", torch)
    return f"{m.group(1)}.{m.group(2)}" if m else None


# Contradictions: one fact, two values in one attempt (or an attempt that uses other than what was set).
CONTRADICTABLE = ("torch", "torch_cuda", "nvcc", "python", "cuda_home")
# A new environment or toolkit starts afresh: what was said before it no longer holds.
_RESET_BY = {"venv": ("torch", "torch_cuda", "python"), "cuda_home": ("nvcc",), "torch": ("torch_cuda",)}


class Stretch(Protocol):
    """An attempt as far as contradictions need it (segment's Span)."""

    number: int
    end: int


def contradictions(index: FactIndex, spans: Sequence[Stretch]) -> list[Contradiction]:
    """The contradictions of a log, each once with the attempts it occurs in.

    An attempt is judged with what the log said since the attempt before it ended: a version printed
    before a build describes the environment the build runs in (and one printed after the last attempt, the
    environment it ran in).
    """
    if not spans:
        return index.contradictions()
    merged: dict[tuple[str, tuple[str, ...]], Contradiction] = {}
    since = 0
    for n, span in enumerate(spans):
        until = span.end if n < len(spans) - 1 else None  # what the log says after the last attempt describes it
        for found in index.contradictions(since, until):
            key = (found.fact, tuple(v.value for v in found.values))
            known = merged.get(key)
            attempts = [*known.attempts, span.number] if known else [span.number]
            merged[key] = (known or found).model_copy(update={"attempts": attempts})
        since = span.end + 1
    return list(merged.values())[:MAX_CONTRADICTIONS]


MAX_CONTRADICTIONS = 6


def _expanded(observations: Sequence[Observation]) -> list[Observation]:
    """The statements of the facts that can contradict, with what one states of another: torch's `+cu121`
    tag is its CUDA, a versioned toolkit path its nvcc. Candidates (wheels pip considered) never count."""
    out: list[Observation] = []
    seen: set[tuple[str, str, int]] = set()
    for obs in observations:
        if obs.role == "candidate" or obs.name not in CONTRADICTABLE and obs.name != "venv":
            continue
        derived = [obs]
        if obs.name == "torch" and (cuda := _tag_cuda(obs.value)):
            tag = obs.value.rsplit("+", 1)[1]
            derived.append(replace(obs, name="torch_cuda", value=cuda, says=f"the +{tag} tag of torch {obs.value}"))
        elif obs.name == "cuda_home" and (release := toolkit_release(obs.value)):
            derived.append(replace(obs, name="nvcc", value=release, says=obs.says or "the CUDA_HOME path"))
        for d in derived:
            if (d.name, d.value, d.line) not in seen:
                seen.add((d.name, d.value, d.line))
                out.append(d)
    return sorted(out, key=lambda o: o.line)


def _is_set(obs: Observation) -> bool:
    return obs.role == "set" or obs.change


class _Contradictions:
    """Statements of one fact that cannot all be true, found within a stretch of the log.

    Statements are compared within a run that nothing changed: an install, an `export`, a new venv or
    toolkit starts a new run (what it set is a change, which the narrative tells, not a contradiction).
    A run also carries what was last *set* before an attempt into it: `pip install torch==2.5.1` and then
    a build that loads torch 2.3.0 contradict each other even in two attempts. Two plain statements in
    different attempts do not: something the log does not show may have changed in between.
    Where the build's own output (role "used") states one of the values, that is the value it used.
    """

    def __init__(self, observations: Sequence[Observation]) -> None:
        expanded = _expanded(observations)
        self._facts: dict[str, _Track] = {}
        for fact in CONTRADICTABLE:
            resets = {name for name, facts in _RESET_BY.items() if fact in facts}
            mine = [o for o in expanded if o.name == fact or o.name in resets]
            if any(o.name == fact for o in mine):
                self._facts[fact] = _Track(fact, resets, mine)

    def within(self, since: int = 0, until: int | None = None) -> list[Contradiction]:
        found = []
        for fact, track in self._facts.items():
            for run in track.runs(since, until):
                contradiction = _judge(fact, run)
                if contradiction is not None:
                    found.append(contradiction)
        return _without_echoes(found)


class _Track:
    """One fact's statements and what resets it, with what was set in force before each one (computed once,
    so that each attempt's stretch costs only its own statements)."""

    def __init__(self, fact: str, resets: set[str], stated: list[Observation]) -> None:
        self.fact, self.resets, self.stated = fact, resets, stated
        self.lines = [o.line for o in stated]
        self.carried: list[Observation | None] = []  # what was set before each statement, unless reset since
        self.venv: list[str | None] = []  # the venv in force before each statement
        carried: Observation | None = None
        venv: str | None = None
        for obs in stated:
            self.carried.append(carried)
            self.venv.append(venv)
            if obs.name == fact and _is_set(obs) and not obs.inline:
                carried = obs
            elif self._resets(obs, venv):
                carried = None
            if obs.name == "venv":
                venv = obs.value
        self.carried.append(carried)
        self.venv.append(venv)

    def _resets(self, obs: Observation, venv: str | None) -> bool:
        return obs.name in self.resets and _is_set(obs) and (obs.name != "venv" or obs.value != venv)

    def runs(self, since: int, until: int | None) -> list[list[Observation]]:
        start = bisect_right(self.lines, since - 1)
        end = len(self.stated) if until is None else bisect_right(self.lines, until)
        carried, venv = self.carried[start], self.venv[start]
        runs: list[list[Observation]] = []
        run: list[Observation] = [carried] if carried else []
        for obs in self.stated[start:end]:
            if obs.name == self.fact:
                if _is_set(obs):
                    runs.append(run)
                    run = [obs]
                else:
                    run.append(obs)
            elif self._resets(obs, venv):
                runs.append(run)
                run = []
            if obs.name == "venv":
                venv = obs.value
        runs.append(run)
        return [r for r in runs if len(r) > 1]


# A contradiction of one fact that another's repeats on the same lines (torch 2.1.0+cu121 against 2.1.0+cu118
# is also CUDA 12.1 against 11.8; two versioned toolkit paths are two nvcc releases): told once, as the latter.
_ECHOES = {"torch_cuda": "torch", "cuda_home": "nvcc"}


def _without_echoes(found: list[Contradiction]) -> list[Contradiction]:
    lines = {(c.fact, tuple(v.line for v in c.values)) for c in found}
    return [c for c in found if (_ECHOES.get(c.fact), tuple(v.line for v in c.values)) not in lines]


def _judge(fact: str, run: list[Observation]) -> Contradiction | None:
    """The distinct values of a run (values that agree, like 12.1 and 12.1.105, count as one)."""
    by_value: dict[str, list[Observation]] = {}
    for obs in run:  # a verbose build states one value thousands of times: compare each distinct value once
        by_value.setdefault(obs.value, []).append(obs)
    if len(by_value) < 2:
        return None
    clusters: list[list[str]] = []
    for value in by_value:
        home = next((c for c in clusters if all(_agree(fact, value, other) for other in c)), None)
        if home is None:
            clusters.append([value])
        else:
            home.append(value)
    groups = [sorted((o for v in c for o in by_value[v]), key=lambda o: o.line) for c in clusters]
    if len(groups) < 2:
        return None
    used_in = [g for g in groups if any(o.role == "used" for o in g)]
    chosen = used_in[0] if len(used_in) == 1 else None  # the build itself said two things: nothing settles it
    values = [
        Statement(value=g[0].value, line=g[0].line, says=g[0].says or "the log", used=g is chosen)
        for g in sorted(groups, key=lambda g: g[0].line)
    ]
    used = None
    if chosen is not None:
        last = [o for o in chosen if o.role == "used"][-1]
        used = Statement(value=last.value, line=last.line, says=last.says or "the build", used=True)
    return Contradiction(fact=fact, values=values, used=used)


def _agree(fact: str, a: str, b: str) -> bool:
    if fact == "cuda_home":
        return _same_home(a, b)
    a, b = a.lower(), b.lower()
    if a == b:
        return True
    (pa, _, la), (pb, _, lb) = a.partition("+"), b.partition("+")
    if la and lb and la != lb:
        return False  # 2.5.1+cu121 and 2.5.1+cu124 are two builds
    short, long = sorted((pa.split("."), pb.split(".")), key=len)
    return long[: len(short)] == short  # 3.10 and 3.10.12, 12.1 and 12.1.105, 2.5.1 and 2.5.1+cu121


def _same_home(a: str, b: str) -> bool:
    """Two toolkit paths that may be one toolkit: equal, the same release, or `/usr/local/cuda` (the usual
    link) beside a versioned toolkit in the same folder."""
    if "$" in a or "$" in b or "%" in a or "%" in b:
        return True  # a variable not expanded: nothing to compare
    x, y = (p.replace("\\", "/").rstrip("/").lower() for p in (a, b))
    if x == y:
        return True
    rx, ry = toolkit_release(x), toolkit_release(y)
    if rx and ry:
        return rx == ry
    if rx or ry:
        versioned, plain = (x, y) if rx else (y, x)
        return plain.endswith("/cuda") and versioned.rsplit("/", 1)[0] == plain.rsplit("/", 1)[0]
    return False
