"""Segment: split a log into attempts (each build or install command and the output after it).

An attempt starts at a command that builds or installs: typed at a prompt, traced by `bash -x`,
announced by a CI step, or (without any prompt) a fresh pip run after the previous one ended. The
environment in force is tracked across the session (`export`, `source .../activate`, inline
`VAR=value`), and each attempt records how far the build got, so a later attempt can be judged
by whether it got past the stage where an earlier one failed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from buildlog.knowledge.bundle import Knowledge
from buildlog.knowledge.vocabulary import STAGES, EventKind
from buildlog.parse.events import Event, SimpleCommand

RANK = {name: i for i, name in enumerate(STAGES)}

_INFO_ARGS = frozenset({
    "--version", "-V", "-v", "list", "show", "freeze", "--help", "-h", "config", "cache", "inspect", "check", "venv",
})  # fmt: skip
_PY = re.compile(r"^(?:\S*/)?python(?:\d(?:\.\d+)?)?(?:\.exe)?$")
_PIP = re.compile(r"^(?:\S*/)?pip(?:\d(?:\.\d+)?)?(?:\.exe)?$")
_BUILD_TOOLS = re.compile(r"^(?:\S*/)?(?:nvcc|cmake|make|ninja|torchrun|accelerate|deepspeed)$")


@dataclass
class CheckRun:
    """A check after a build (`python -c "import ext"`, `python -m ext --version`, `pytest`)."""

    start: int
    end: int
    command: str
    outcome: str = "passed"  # "passed" | "failed"


@dataclass
class Span:
    """One attempt: where it is in the log, what ran, in what environment, how far it got."""

    number: int
    start: int
    end: int
    command: str
    env: dict[str, str]
    interpreter: str | None
    venv: str | None
    explicit: bool
    stages: dict[str, int] = field(default_factory=dict)  # stage -> first line reached
    closed: bool = False  # pip already said how it ended
    active: bool = False  # something other than a command happened in it
    prepared: list[str] = field(default_factory=list)  # helper installs folded into this attempt
    chained: bool = False  # several installs on one command line (`pip install a && pip install b`)
    check: bool = False  # the command only checks what an earlier attempt built
    raised: bool = False  # a traceback or an exception was printed in it
    checks: list[CheckRun] = field(default_factory=list)  # the checks run after this attempt
    shell: str = ""  # "cmd" typed at a Command Prompt (`C:\dir>`), "powershell" at a `PS C:\>` prompt

    @property
    def stage(self) -> str:
        return max(self.stages, key=RANK.__getitem__, default="start")

    def stage_at(self, line: int) -> str:
        """The furthest stage reached at or before `line`."""
        reached = [s for s, at in self.stages.items() if at <= line]
        return max(reached, key=RANK.__getitem__, default="start")


def stage_of(event: Event, knowledge: Knowledge) -> str | None:
    """The stage that this line shows, if any."""
    for marker in knowledge.stages_for(event.anchors):
        if marker.regex.search(event.text):
            return marker.stage
    return None


def is_build_command(cmd: SimpleCommand) -> bool:
    """Does this simple command try to build, install or run something (not just inspect)?"""
    argv = [a for a in cmd.argv if a != "sudo"] or [""]
    head, rest = argv[0], argv[1:]
    name = head.rsplit("/", 1)[-1]  # /opt/venv/bin/uv is uv
    if _PIP.match(head):
        return bool(rest) and rest[0] in ("install", "wheel", "download")
    if name == "uv":
        return bool(rest) and (rest[0] in ("add", "sync", "build", "run") or rest[:2] == ["pip", "install"])
    if name in ("conda", "mamba", "micromamba"):
        return bool(rest) and rest[0] == "install"
    if _PY.match(head):
        return _python_runs_something(rest)
    if _BUILD_TOOLS.match(head):
        return not (set(rest) & _INFO_ARGS)
    return name in ("bash", "sh") and bool(rest) and rest[0].endswith(".sh")


_NOT_WRAPPERS = frozenset({
    "echo", "printf", "which", "type", "man", "git", "grep", "cat", "ls", "cd", "tee", "export", "source", ".",
    "unset", "alias", "history", "less", "head", "tail", "Tee-Object", "Write-Output", "rm", "mv", "cp",
})  # fmt: skip


def build_part(cmd: SimpleCommand) -> SimpleCommand | None:
    """The part of a simple command that builds: itself, or what an unknown wrapper runs
    (`weirdtool --go pip install x`: at worst the raw command still names an attempt)."""
    if is_build_command(cmd):
        return cmd
    if not cmd.argv or cmd.argv[0].rsplit("/", 1)[-1] in _NOT_WRAPPERS:
        return None
    for i in range(1, len(cmd.argv)):
        word = cmd.argv[i]
        if _PIP.match(word) or _PY.match(word) or word.rsplit("/", 1)[-1] in ("uv", "conda", "mamba"):
            tail = SimpleCommand(cmd.env, cmd.argv[i:], (*cmd.wrappers, " ".join(cmd.argv[:i])), cmd.venv)
            if is_build_command(tail):
                return tail
    return None


_BUILDS_IN_CODE = re.compile(r"\b(?:load|load_inline|setup|build_ext|check_call|system)\s*\(|cpp_extension")


def is_check_command(cmd: SimpleCommand) -> bool:
    """Does this command only check an install: an import, a version, a test run?"""
    argv = list(cmd.argv)
    if not argv:
        return False
    head, rest = argv[0].rsplit("/", 1)[-1], argv[1:]
    if head in ("pytest", "py.test"):
        return True
    if not _PY.match(argv[0]):
        return False
    if rest[:1] == ["-c"] and len(rest) > 1:
        return "import" in rest[1] and not _BUILDS_IN_CODE.search(rest[1])
    if rest[:1] == ["-m"] and len(rest) > 1:
        module = rest[1]
        if module in ("pytest", "unittest", "torch.utils.collect_env"):
            return True
        return module not in ("pip", "build", "venv", "setuptools", "uv") and bool(set(rest[2:]) & {"--version", "-V"})
    return False


def _python_runs_something(rest: list[str]) -> bool:
    if not rest or rest[0] in ("--version", "-V"):
        return False
    if rest[0] == "-m" and len(rest) > 1:
        if rest[1] == "venv":
            return False
        if rest[1] == "pip":
            return len(rest) > 2 and rest[2] in ("install", "wheel", "download")
    return True


def interpreter_of(cmd: SimpleCommand, venv: str | None) -> str | None:
    """Which interpreter or pip actually ran, as far as the command line says."""
    argv = list(cmd.argv)
    sudo = argv[:1] == ["sudo"] or any(w.split()[0] == "sudo" for w in cmd.wrappers if w)
    argv = [a for a in argv if a != "sudo"]
    venv = cmd.venv or venv
    if not argv:
        return None
    head = argv[0]
    if head.rsplit("/", 1)[-1] == "uv" and "--python" in argv:
        i = argv.index("--python")
        return argv[i + 1] if i + 1 < len(argv) else "uv"
    if head.rsplit("/", 1)[-1] == "uv" and "--system" in argv:
        return "uv --system"
    name = head
    if "/" not in head and venv and (_PIP.match(head) or _PY.match(head)):
        name = f"{venv}/bin/{head}"
    if _PY.match(head) and argv[1:3] == ["-m", "pip"]:
        name += " -m pip"
    return f"sudo {name}" if sudo else name


_VALUE_OPTIONS = frozenset({
    "-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f", "--find-links",
    "--python", "-p", "-t", "--target", "--prefix", "--root", "--config-settings", "-C", "--cache-dir",
})  # fmt: skip


def targets_of(command: str) -> frozenset[str]:
    """What a command builds or installs: package names, or "." for the project in the current folder."""
    found: set[str] = set()
    for part in re.split(r"\s*(?:&&|\|\||\|&|;|\||(?<![>&])&(?!>))\s*", core_command(command)):
        found |= _targets_of_simple(part.split())
    return frozenset(found)


_REDIRECTION = re.compile(r"(?<!\S)(?:\d|&)?>>?(?:&\d+|&-|\s*[^\s;&|<>'\"]+)|(?<!\S)\d?<\s*[^\s;&|<>'\"]+")
_LOG_PIPE = re.compile(r"\s*\|&?\s*(?:tee|Tee-Object|Out-File)\b[^;&|]*", re.IGNORECASE)


def core_command(command: str) -> str:
    """The command without what only saves or shows its output (`2>&1`, `> log`, `| tee -a log`)
    or its quotes (`bash -c '...'`), so two attempts compare by what they ran."""
    text = _LOG_PIPE.sub(" ", _REDIRECTION.sub(" ", command))
    return re.sub(r"\s+", " ", text.replace("'", " ").replace('"', " ")).strip()


def _targets_of_simple(words: list[str]) -> set[str]:
    found: set[str] = set()
    for i, word in enumerate(words):
        if (
            word.endswith("setup.py")
            or word in (".", "./")
            or (word == "-e" and i + 1 < len(words) and words[i + 1] in (".", "./"))
        ):
            found.add(".")
    verb = next(
        (
            i
            for i, w in enumerate(words)
            if w in ("install", "add") or (w == "wheel" and i and words[i - 1].endswith("pip"))
        ),
        None,
    )
    if verb is None:
        return found
    skip = False
    for word in words[verb + 1 :]:
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in _VALUE_OPTIONS
            continue
        name = re.split(r"[<>=!~\[;@ ]", word, maxsplit=1)[0].lower().replace("_", "-")
        if name and name not in (".", "./"):
            found.add(name)
    return found


_NEW_RUN = re.compile(r"^#1 \[internal\] load build definition|^Step 1/\d+ : FROM ")
_CI_ENV = re.compile(r"^([A-Z_][A-Z0-9_]*): (.*)$")
_ACTIVITY = frozenset({
    EventKind.EXCEPTION, EventKind.TRACEBACK, EventKind.DIAGNOSTIC, EventKind.TOOL_MESSAGE, EventKind.PIP_ERROR,
    EventKind.PIP_BLOCK, EventKind.PIP_SUCCESS, EventKind.NINJA_FAILED, EventKind.NINJA_MESSAGE, EventKind.UV_CHAIN,
})  # fmt: skip


_SHELLS = {"cmd_prompt": "cmd", "ps_prompt": "powershell"}  # the prompt a command was typed at


class Segmenter:
    """Walks events in order and cuts them into attempt spans."""

    def __init__(self, knowledge: Knowledge) -> None:
        self.knowledge = knowledge
        self.env: dict[str, str] = {}
        self.venv: str | None = None
        self.spans: list[Span] = [Span(1, 1, 0, "", {}, None, None, explicit=False)]
        self.ci_header = False
        self.setup_from: int | None = None  # where the set-up of the next attempt began (`export ...`)
        self.prompted = False  # a command was typed at a user@host prompt: the person's commands all show one

    @staticmethod
    def may_open(event: Event, knowledge: Knowledge) -> bool:
        """Could this event start a step (or end the one before it)? True for every event that
        `feed` may open a step at or mark as its setup (a command, a fresh docker build, a
        line that shows a stage), and for some that it will not: what reads the lines before
        a step's end may rely on it."""
        return (
            event.kind is EventKind.COMMAND
            or bool(_NEW_RUN.match(event.text))
            or bool(knowledge.stages_for(event.anchors))
        )

    def feed(self, event: Event) -> None:
        if event.kind is EventKind.COMMAND:
            unprompted = event.fields.get("prompt") == "none"
            if unprompted and self.prompted:
                return  # in a session typed at a prompt, a command line without one is output (`cat build.sh`)
            self.prompted = self.prompted or event.fields.get("prompt") in ("user_prompt", "ps_prompt", "cmd_prompt")
            if not (self.ci_header and unprompted):
                self._command(event)  # a CI step echoes its script under its header: not a new command
            return
        if self.ci_header and self._ci_header_line(event):
            return
        if _NEW_RUN.match(event.text):  # a fresh `docker build`: what follows is a new try
            self._open(event.line, "docker build", explicit=False)
            return
        span = self.spans[-1]
        stage = stage_of(event, self.knowledge)
        span.active = span.active or bool(stage) or event.kind in _ACTIVITY
        span.raised = span.raised or event.kind in (EventKind.TRACEBACK, EventKind.EXCEPTION)
        if stage == "resolve" and span.chained and (span.closed or "install" in span.stages):
            span.closed = False  # `pip install a && pip install b`: still the same command,
            span.stages.clear()  # and how far it got is measured on the part that follows
        elif stage == "resolve" and span.closed and not event.indent:
            span = self._open(event.line, _implied_command(event), explicit=False)
        elif stage == "resolve" and not span.command and not event.indent:
            span.command = _implied_command(event)  # a log that starts with pip's own output
        if stage:
            span.stages.setdefault(stage, event.line)
        if event.kind in (EventKind.PIP_SUCCESS, EventKind.PIP_ERROR) and not event.indent:
            span.closed = span.closed or _pip_final(event)

    def _ci_header_line(self, event: Event) -> bool:
        """Lines between `##[group]Run ...` and `##[endgroup]`: the script echo and the step's env."""
        if event.text.startswith("##[endgroup]"):
            self.ci_header = False
            return True
        m = _CI_ENV.match(event.text)
        if m and self.spans[-1].explicit:
            self.spans[-1].env[m.group(1)] = m.group(2).strip()
        return bool(m)

    def _command(self, event: Event) -> None:
        self.ci_header = event.fields.get("gh_step") is not None
        builds: list[SimpleCommand] = []
        sets_environment = False
        for cmd in event.commands:
            sets_environment |= self._track_env(cmd)
            part = build_part(cmd) or (cmd if is_check_command(cmd) else None)
            if part is not None:
                builds.append(part)
        if not builds:
            if sets_environment and self.setup_from is None:
                self.setup_from = event.line  # `export CUDA_HOME=...` before the next try belongs to it
            return
        build = builds[-1]  # in `pip install helpers && pip install thing`, the last one is the point
        env = {**self.env, **build.env}
        text = event.fields.get("command") or event.text
        span = self._open(event.line, text, explicit=True)
        span.env, span.venv, span.chained = env, build.venv or self.venv, len(builds) > 1
        span.interpreter = interpreter_of(build, self.venv)
        span.check = all(is_check_command(b) for b in builds)
        span.shell = _SHELLS.get(event.fields.get("prompt", ""), "")

    def _open(self, line: int, command: str, explicit: bool) -> Span:
        current = self.spans[-1]
        if current.number == 1 and not current.explicit and not current.active:
            self.spans.pop()  # nothing happened before the first command
        else:
            current.end = (self.setup_from if self.setup_from and self.setup_from > current.start else line) - 1
        self.setup_from = None
        number = len(self.spans) + 1
        span = Span(number, line, 0, command, dict(self.env), None, self.venv, explicit)
        self.spans.append(span)
        return span

    def _track_env(self, cmd: SimpleCommand) -> bool:
        """Follow what a command does to the environment; True when it sets or changes it."""
        argv = cmd.argv
        if argv[:1] == ("export",) or (not argv and cmd.env):
            self.env.update(cmd.env)
        elif len(argv) >= 2 and argv[0] in ("source", ".") and argv[1].endswith("/activate"):
            self.venv = argv[1].rsplit("/bin/activate", 1)[0]
        elif argv[1:2] == ("activate",) and argv[0] in ("conda", "mamba", "micromamba"):
            if len(argv) >= 3:  # a bare `conda activate` is the base environment: no venv named
                self.venv = argv[2]
        elif argv[:1] == ("deactivate",) or argv[:2] in (("conda", "deactivate"), ("mamba", "deactivate")):
            self.venv = None
        elif argv[:1] == ("unset",):
            for name in argv[1:]:
                self.env.pop(name, None)
        else:
            return False
        return True

    def finish(self, last_line: int) -> list[Span]:
        self.spans[-1].end = last_line
        return self.spans


def _pip_final(event: Event) -> bool:
    rest = event.fields.get("rest", "")
    return event.kind is EventKind.PIP_SUCCESS or rest.startswith(
        ("Failed building wheel", "Could not build wheels", "Failed to build")
    )


def _implied_command(event: Event) -> str:
    m = re.match(r"(?:Collecting|Obtaining|Processing)\s+(\S+)", event.text)
    return f"pip install {m.group(1)}" if m else "pip install"


def segment(events: Sequence[Event], last_line: int, knowledge: Knowledge) -> list[Span]:
    """Cut the events of a whole log into attempts."""
    segmenter = Segmenter(knowledge)
    for event in events:
        segmenter.feed(event)
    return segmenter.finish(last_line)


_BUILT = frozenset({"build-deps", "metadata", "setup", "configure", "compile", "link"})


def _is_attempt(step: Span, outcome: str, build_targets: frozenset[str]) -> bool:
    """A step counts as an attempt if it failed, built something, or installs what others build."""
    if step.check:
        return outcome == "failure"
    if outcome == "failure" or _BUILT & set(step.stages):
        return True
    targets = targets_of(step.command)
    if not targets:
        return step.explicit and bool(step.command) and not _PY.match(step.command.split()[0])
    return bool(targets & build_targets)


def _attempt(step: Span, number: int, prepared: Sequence[Span] = ()) -> Span:
    """A step as attempt `number`, with the helper installs before it folded in."""
    return replace(step, number=number, stages=dict(step.stages), checks=[],
                   prepared=[p.command for p in prepared if p.command])  # fmt: skip


def group_steps(steps: Sequence[Span], outcomes: Mapping[int, str]) -> tuple[list[Span], dict[int, int]]:
    """Fold preparatory steps (helper installs that succeed, checks such as `python -c`) into the
    attempt that follows them, so attempts are the tries at the build itself.

    Returns the attempts and a map from step number to attempt number.
    """
    build_targets = frozenset(
        t for s in steps if outcomes.get(s.number) == "failure" or _BUILT & set(s.stages) for t in targets_of(s.command)
    )
    keep = [_is_attempt(s, outcomes.get(s.number, "unknown"), build_targets) for s in steps]
    if not any(keep):  # nothing to fold into: every step is its own attempt, checks aside
        keep = [True] * len(steps)
    attempts: list[Span] = []
    mapping: dict[int, int] = {}
    pending: list[Span] = []
    for step, is_attempt in zip(steps, keep, strict=True):
        if step.check and not attempts and pending:  # installs that all went through, then a check of them
            step_before = pending.pop()
            attempts.append(_attempt(step_before, 1, pending))
            for p in [*pending, step_before]:
                mapping[p.number] = 1
            pending = []
        if step.check and attempts:  # a check of what the attempt before it built: part of that attempt
            last = attempts[-1]
            failed = outcomes.get(step.number) == "failure" or step.raised
            last.checks.append(CheckRun(step.start, step.end, step.command, "failed" if failed else "passed"))
            last.end = step.end
            for p in [*pending, step]:
                mapping[p.number] = last.number
            pending = []
            continue
        if not is_attempt:
            pending.append(step)
            continue
        merged = _attempt(step, len(attempts) + 1, pending)
        for p in pending:
            mapping[p.number] = merged.number
        if attempts and pending:
            attempts[-1].end = pending[0].start - 1
        mapping[step.number] = merged.number
        attempts.append(merged)
        pending = []
    for p in pending:  # steps after the last attempt: their own attempt if they ended somehow
        if outcomes.get(p.number, "unknown") != "unknown":
            attempts.append(_attempt(p, len(attempts) + 1))
        else:
            attempts[-1].end = p.end
        mapping[p.number] = attempts[-1].number
    return attempts, mapping
