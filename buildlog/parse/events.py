"""Turns a cleaned candidate line into a typed event by parsing it with the right grammar.

A cheap look at the line picks which grammars may apply; lark then does the real parsing. A line
no grammar accepts is still an event (kind "text"): rules may match its words.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from buildlog.ingest.clean import clean_line
from buildlog.knowledge.vocabulary import GRAMMAR_RULES, EventKind

if TYPE_CHECKING:
    from lark import Tree

    from buildlog.knowledge.bundle import Knowledge


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One simple shell command: its inline variable assignments and its words."""

    env: Mapping[str, str]
    argv: tuple[str, ...]
    wrappers: tuple[str, ...] = ()  # what ran it: `sudo -E`, `time`, `env`, `conda run -n ml`, `bash -c`
    venv: str | None = None  # the environment a wrapper named (`conda run -n ml`)


class After:
    """The lines right after an event's line, cleaned only when someone reads them.

    Most candidates' neighbours are never read (only multi-line rules, the classifier's failure
    lines and the evidence of a fact do), so cleaning them all would be wasted work.
    """

    __slots__ = ("_clean", "_raw")

    def __init__(self, raw: tuple[bytes, ...] = (), clean: tuple[str, ...] | None = None) -> None:
        self._raw, self._clean = raw, clean

    @classmethod
    def of(cls, lines: tuple[str, ...]) -> After:
        return cls((), tuple(lines))

    def lines(self) -> tuple[str, ...]:
        if self._clean is None:
            self._clean = tuple(clean_line(r) for r in self._raw)
        return self._clean

    def __len__(self) -> int:
        return len(self._raw) if self._clean is None else len(self._clean)


_NOTHING_AFTER = After()


@dataclass(frozen=True, slots=True)
class Event:
    """A parsed line: what kind of line it is, where it is, and the parts the grammar named."""

    kind: EventKind
    line: int
    text: str
    indent: int = 0
    fields: Mapping[str, str] = field(default_factory=dict)
    context: After = _NOTHING_AFTER
    commands: tuple[SimpleCommand, ...] = ()
    anchors: frozenset[str] = frozenset()

    @property
    def after(self) -> tuple[str, ...]:
        """The cleaned lines right after this one."""
        return self.context.lines()


def let_go_after(event: Event) -> None:
    """Forget the lines after an event, once nothing that reads them will reach it (the pipeline's
    _Unread decides): the one change made to an event after it is built, so that a flood of errors
    does not hold each one's neighbours, nor the object that would clean them."""
    object.__setattr__(event, "context", _NOTHING_AFTER)


_PROMPT = re.compile(
    r"^(?:\(\S+\)\s+)?[\w.\-]+@[\w.\-]+:\S*[$#]\s"
    r"|^(?:\(\S+\)\s+)?[$%]\s|^#\s+(?=\S)|^\++\s|^##\[group\]Run\s|^#\d+ \[[^\]]*\] RUN\s|^Step \d+/\d+ : RUN\s|^RUN\s"
    r"|^(?:\(\S+\)\s+)?PS [A-Za-z]:\\|^(?:\(\S+\)\s+)?[A-Za-z]:\\[^>\s]*>(?=\S)|^[!%](?=pip|python|uv |conda|mamba)"
)
_BARE_COMMAND = re.compile(
    r"^(?:(?:[A-Z_][A-Z0-9_]*=\S*|time|nohup|env|sudo(?:\s+-\S+)*|nice(?:\s+-n\s*-?\d+)?)\s+)*"
    r"(?:(?:\S*/)?pip3?(?:\.\d+)?\s+(?:install|wheel|download|uninstall|list|show|freeze|config|cache|-V|--version)\b"
    r"|(?:\S*/)?python3?(?:\.\d+)?(?:\s+-\w+)*\s+(?:-m\s+\w|-c\s|\S+\.py\b|-V\b|--version\b)"
    r"|uv\s+(?:pip|sync|add|venv|run|build|python)\b"
    r"|(?:conda|mamba|micromamba)\s+(?:install|create|activate|deactivate|env|run)\b"
    r"|(?:export|source|unset)\s+\S|deactivate\s*$"
    # typed by a person, so without a path: ninja echoes its failed commands with the full path
    r"|(?:nvcc|cmake|make|ninja)(?:\s+-{1,2}\w|\s+\S+\.(?:cu|cpp|c)\b|\s*$)"
    r"|(?:bash|sh)\s+\S+\.sh\b)"
)
_KNOWN_PROGRAM = re.compile(
    r"^(?:\S*/)?(?:pip3?(?:\.\d+)?|python3?(?:\.\d+)?|uv|conda|mamba|micromamba|export|source|nvcc|cmake|make|ninja|"
    r"bash|sh|sudo|apt|apt-get|nvidia-smi|nproc|free|gcc|g\+\+|which|git|cd|ls|cat|echo|env|uname|df|time|nohup|nice)$"
)
_EXCEPTION = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Warning|Failure)\b")
_PIP_START = re.compile(
    r"^(?:ERROR|error|WARNING|warning|hint|note|help):|^[×╰├]|^Successfully |^Requirement already satisfied:"
    r"|^(?:Collecting|Downloading|Processing|Obtaining|Building|Installing|Preparing|Getting requirements|Running setup\.py"
    r"|Created wheel|Stored in|Resolved|Prepared|Built|Installed|Uninstall|Attempting|Audited|Using (?:Python|CPython)|Checking if)\b"
)
_BANNER = re.compile(
    r"^(?:Cuda compilation tools|\|?\s*NVIDIA-SMI|GPU \d+:|torch\.__version__|[Tt]orch version|Python \d|Mem:"
    r"|(?:[\w\-]*-)?(?:gcc|g\+\+|c\+\+|cc)(?:-\d+)? \(|(?:\w+ )?clang version"
    r"|(?:PyTorch version|CUDA used to build PyTorch|GCC version|Python version|Is CUDA available|CUDA runtime version"
    r"|GPU models and configuration|Nvidia driver version|OS|Clang version|CMake version):)"
)
# `\b(?:error|warning|fatal|note)\b`, written so that each way starts with its letter (the search
# skips to those letters; a leading `\b` would make it try every position): `(?<!\we)` after the
# `e` says what `\b` before it did.
_DIAG_WORD = re.compile(r"(?:e(?<!\we)rror|w(?<!\ww)arning|f(?<!\wf)atal|n(?<!\wn)ote)\b")


def grammars_for(text: str, indent: int) -> tuple[str, ...]:
    """Which grammars may parse this line, most likely first (cheap regex looks only).

    A line that starts with `/` (a compiler's diagnostic about a file, most of a flood) is looked
    at only where it can match: no look but _BARE_COMMAND and _DIAG_WORD can match at a `/`, and
    _BARE_COMMAND only through a path to `pip` or `python` right before a space, so where the last
    `/` of the line's first word is followed by one of those (tested against _looks).
    """
    if text.startswith("/"):
        order: list[str] = []
        if indent == 0 and text.split(None, 1)[0].rpartition("/")[2].startswith(("pip", "python")):
            if _BARE_COMMAND.match(text):
                order.append("command")
        if ".py:" in text and "Warning:" in text:
            order.append("python")
        if _DIAG_WORD.search(text):
            order += ["diagnostic", "python"] if ".py:" in text else ["diagnostic"]
        return tuple(dict.fromkeys(order))
    return _looks(text, indent)


def _looks(text: str, indent: int) -> tuple[str, ...]:
    """grammars_for, every look tried in turn."""
    if text.startswith(("Traceback", 'File "', "During handling", "The above exception")):
        return ("python",)
    if text.startswith(("FAILED:", "ninja:")) or (text.startswith("[") and text[1:2].isdigit()):
        return ("ninja",)
    if _BANNER.match(text):
        return ("banner",)
    order: list[str] = []
    if indent == 0 and (_PROMPT.match(text) or _BARE_COMMAND.match(text)):
        order.append("command")
    if _PIP_START.match(text):
        order.append("pip")
    if _EXCEPTION.match(text) or (".py:" in text and "Warning:" in text):
        order.append("python")
    if _DIAG_WORD.search(text):
        order += ["diagnostic", "python"] if ".py:" in text else ["diagnostic"]
    return tuple(dict.fromkeys(order))


# Parsed lines remembered per log (see parse_line's `memo`), at most this many.
MEMO_SIZE = 4096


def parse_line(
    knowledge: Knowledge,
    number: int,
    cleaned: str,
    after: After = _NOTHING_AFTER,
    anchors: frozenset[str] = frozenset(),
    memo: dict[str, Event] | None = None,
) -> Event:
    """Parse one cleaned line; the first grammar that accepts it names the event.

    With a `memo` (one per log), a line seen before at the same indent is not parsed again: its
    event shares the first one's text, fields and commands (a CI log of ten thousand jobs repeats
    the same few commands and pip lines), with its own line number, neighbours and anchors.
    """
    text = cleaned.lstrip()
    indent = len(cleaned) - len(text)
    if memo is not None:
        seen = memo.get(cleaned)
        if seen is not None:
            return Event(seen.kind, number, seen.text, indent, seen.fields, after, seen.commands, anchors)
    event = _parse(knowledge, number, text, indent, after, anchors)
    # Not a `\\` continuation (its text took the lines after), nor one of a flood's errors.
    if memo is not None and len(memo) < MEMO_SIZE and event.kind is not EventKind.DIAGNOSTIC and event.text is text:
        memo[cleaned] = event
    return event


def _parse(knowledge: Knowledge, number: int, text: str, indent: int, after: After, anchors: frozenset[str]) -> Event:
    grammars = grammars_for(text, indent)
    if "command" in grammars and text.endswith("\\"):
        text = _join_continuations(text, after)
    for name in grammars:
        if name == "diagnostic":
            reader = _located(knowledge)
            if reader is not None and reader.fields(text, keep=False) is not None:
                return Event(EventKind.DIAGNOSTIC, number, text, indent, _Fields(reader, text), after, (), anchors)
        from lark.exceptions import LarkError  # here: an import statement costs a located line a tenth of its parse

        try:
            tree = knowledge.parser(name).parse(text)
        except LarkError:
            continue
        event = _event_from_tree(knowledge, name, tree, number, text, indent, after, anchors)
        if event is not None:
            return event
    if "command" in grammars and _PROMPT.match(text) and _BUILD_WORDS.search(text):
        return _raw_command_event(knowledge, number, text, indent, after, anchors)
    return Event(EventKind.TEXT, number, text, indent, {}, after, (), anchors)


class _Located:
    """The diagnostic grammar's `located` lines (`file:12:5: error: ...`) read without lark.

    A compiler flood is tens of thousands of such lines, and lark costs more per line than the rest
    of the pipeline. This reads them with the grammar's own terminals, in the grammar's order and
    the way lark's lexer takes them (each terminal matched where the last one ended, spaces and
    tabs skipped between), so where it accepts a line lark gives the same tree; anything else is
    left to lark. It is built only when the grammar has exactly the shape it reads
    (`located: LOCATION SEVERITY CODE? ":" MESSAGE?`), so a changed grammar goes through lark.
    """

    SHAPE = frozenset({
        ("start", ("located",)), ("start", ("tool",)),
        ("located", ("LOCATION", "SEVERITY", "CODE", "COLON", "MESSAGE")), ("located", ("LOCATION", "SEVERITY", "CODE", "COLON")),
        ("located", ("LOCATION", "SEVERITY", "COLON", "MESSAGE")), ("located", ("LOCATION", "SEVERITY", "COLON")),
        ("tool", ("TOOL", "SEVERITY", "COLON", "MESSAGE")), ("tool", ("TOOL", "SEVERITY", "COLON")),
    })  # fmt: skip

    def __init__(self, terminals: Mapping[str, str]) -> None:
        self.location, self.severity, self.code, self.message = (
            re.compile(terminals[name]) for name in ("LOCATION", "SEVERITY", "CODE", "MESSAGE")
        )
        self.gap = re.compile(r"[ \t]*")
        self.whole = _whole_line(terminals)

    @classmethod
    def of(cls, parser: object) -> _Located | None:
        """The reader for this parser, or None where its grammar is not the shape read here."""
        try:
            rules = {(r.origin.name, tuple(s.name for s in r.expansion)) for r in parser.rules}  # type: ignore[attr-defined]
            terms = {t.name: t for t in parser.terminals}  # type: ignore[attr-defined]
            conf = parser.lexer_conf  # type: ignore[attr-defined]
            plain = all(
                not r.options.keep_all_tokens
                and not r.alias
                and all(s.filter_out == (s.name == "COLON") for s in r.expansion if s.is_term)
                for r in parser.rules  # type: ignore[attr-defined]
            )
            ok = (
                rules == cls.SHAPE
                and plain
                and list(conf.ignore) == ["__IGNORE_0"]
                and terms["__IGNORE_0"].pattern.to_regexp() == "[ \t]+"
                and terms["COLON"].pattern.value == ":"
                and terms["LOCATION"].priority > terms["TOOL"].priority
                and not conf.g_regex_flags
                and parser.options.lexer == "contextual"  # type: ignore[attr-defined]
            )
        except (AttributeError, KeyError, TypeError):
            return None
        if not ok:
            return None
        return cls({name: t.pattern.to_regexp() for name, t in terms.items()})

    def fields(self, text: str, keep: bool = True) -> dict[str, str] | None:
        """LOCATION SEVERITY CODE? ":" MESSAGE? as lark's tree would name them; None: ask lark.
        Without `keep`, only whether the line is read here (an empty dict)."""
        if not keep and self.whole is not None:
            return {} if self.whole.match(text) else None
        fields: dict[str, str] = {}
        m = self.location.match(text)
        if m is None:
            return None
        if keep:
            fields["location"] = m.group().strip()
        m = self.severity.match(text, self.gap.match(text, m.end()).end())
        if m is None:
            return None
        if keep:
            fields["severity"] = m.group().strip()
        pos = self.gap.match(text, m.end()).end()
        m = self.code.match(text, pos)
        if m is not None:
            if keep:
                fields["code"] = m.group().strip()
            pos = self.gap.match(text, m.end()).end()
        if not text.startswith(":", pos):
            return None
        pos = self.gap.match(text, pos + 1).end()
        if pos == len(text):
            return fields
        m = self.message.match(text, pos)
        if m is None or m.end() != len(text):
            return None
        if keep:
            fields["message"] = m.group().strip()
        return fields


def _whole_line(terminals: Mapping[str, str]) -> re.Pattern[str] | None:
    """`_Located.fields` as one pattern, for whether a line is read (a flood asks it of every line):
    each terminal atomic, so its first match is taken and never given back, as each `.match` in
    turn takes it; the gaps and the optional CODE likewise. None before Python 3.11 (no atomic
    groups) or where a terminal has groups of its own."""
    if sys.version_info < (3, 11):
        return None
    location, severity, code, message = (terminals[name] for name in ("LOCATION", "SEVERITY", "CODE", "MESSAGE"))
    try:
        if any(re.compile(p).groups for p in (location, severity, code, message)):
            return None
        gap = r"(?>[ \t]*)"
        return re.compile(
            f"(?>{location}){gap}(?>{severity}){gap}(?>(?:(?>{code}){gap})?):{gap}(?:\\Z|(?>{message})\\Z)"
        )
    except re.error:
        return None


class _Fields(Mapping[str, str]):
    """A located diagnostic's fields, read from its text when first asked for: nothing but the
    event's own text is held until then (a flood holds tens of thousands, few are ever read)."""

    __slots__ = ("_fields", "_reader", "_text")

    def __init__(self, reader: _Located, text: str) -> None:
        self._reader, self._text = reader, text
        self._fields: dict[str, str] | None = None

    def _read(self) -> dict[str, str]:
        if self._fields is None:
            self._fields = self._reader.fields(self._text) or {}
        return self._fields

    def __getitem__(self, key: str) -> str:
        return self._read()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())

    def __repr__(self) -> str:
        return repr(self._read())

    def __reduce__(self) -> tuple[type, tuple[dict[str, str]]]:
        return dict, (dict(self._read()),)


_READERS: dict[int, tuple[Knowledge, _Located | None]] = {}


def _located(knowledge: Knowledge) -> _Located | None:
    """The fast reader of located diagnostics for this knowledge's grammar (None: its shape differs)."""
    entry = _READERS.get(id(knowledge))
    if entry is None or entry[0] is not knowledge:
        entry = _READERS[id(knowledge)] = (knowledge, _Located.of(knowledge.parser("diagnostic")))
    return entry[1]


def _join_continuations(text: str, after: After) -> str:
    """`pip install x \\` and the lines it continues on (a shell shows them after its `> ` prompt)."""
    parts = [text[:-1].rstrip()]
    for line in after.lines():
        more = re.sub(r"^\s*(?:>\s)?\s*", "", line)
        parts.append(more[:-1].rstrip() if more.endswith("\\") else more)
        if not more.endswith("\\"):
            break
    return " ".join(p for p in parts if p)


# A command line the grammar cannot read still names an attempt when it runs one of these.
_BUILD_WORDS = re.compile(
    r"\b(?:pip3?|uv|conda|mamba)\s+(?:install|wheel|sync|add|build)\b|\bsetup\.py\b|\bpython3?\s+-m\s+(?:pip|build)\b"
)
_PROMPT_PREFIX = re.compile(
    r"^(?:\(\S+\)\s+)?(?:[\w.\-]+@[\w.\-]+:\S*[$#]|[$%#]|\++|##\[group\]Run|#\d+ \[[^\]]*\] RUN|Step \d+/\d+ : RUN|RUN"
    r"|PS [A-Za-z]:\\[^>]*>|[A-Za-z]:\\[^>\s]*>|[!%])\s*"
)


def _raw_command_event(
    knowledge: Knowledge, number: int, text: str, indent: int, after: After, anchors: frozenset[str]
) -> Event:
    """Shell syntax the grammar does not know: the words as they stand, split at the operators."""
    prompt = _PROMPT_PREFIX.match(text)
    command = text[prompt.end() :] if prompt else text
    commands = []
    for part in re.split(r"\s*(?:&&|\|\||\|&|;|\||(?<![>&])&(?!>))\s*", command):
        words = [_unquote(w) for w in part.split() if not _REDIRECT_WORD.match(w)]
        if words:
            commands.append(_unwrap({}, words, knowledge))
    fields = {"prompt": "raw", "command": command}
    return Event(EventKind.COMMAND, number, text, indent, fields, after, tuple(commands), anchors)


_REDIRECT_WORD = re.compile(r"^(?:\d|&)?>>?|^\d?<")


def _event_from_tree(
    knowledge: Knowledge,
    name: str,
    tree: Tree,
    number: int,
    text: str,
    indent: int,
    after: After,
    anchors: frozenset[str],
) -> Event | None:
    from lark import Tree

    if name == "command":
        return _command_event(knowledge, tree, number, text, indent, after, anchors)
    node = tree.children[0] if tree.children and isinstance(tree.children[0], Tree) else tree
    return Event(GRAMMAR_RULES[(name, str(node.data))], number, text, indent, _token_fields(node), after, (), anchors)


def _token_fields(node: Tree) -> dict[str, str]:
    """Token values by lower-cased terminal name; repeats get _2, _3 suffixes."""
    from lark import Token

    out: dict[str, str] = {}
    for token in node.scan_values(lambda v: isinstance(v, Token)):
        key = token.type.lower()
        n = 2
        while key in out:
            key = f"{token.type.lower()}_{n}"
            n += 1
        out[key] = str(token).strip()
    return out


def _command_event(
    knowledge: Knowledge, tree: Tree, number: int, text: str, indent: int, after: After, anchors: frozenset[str]
) -> Event | None:
    from lark import Token, Tree

    fields: dict[str, str] = {"prompt": "none"}
    commands: list[SimpleCommand] = []
    for child in tree.children:
        if not isinstance(child, Tree):
            continue
        if child.data == "command_list":
            commands = [_simple(c, knowledge) for c in child.children if isinstance(c, Tree)]
            first = next(child.scan_values(lambda v: isinstance(v, Token)), None)
            fields["command"] = text[first.start_pos :] if first is not None and first.start_pos is not None else text
        else:
            fields["prompt"] = child.data
            fields.update(_token_fields(child))
    if not commands or not commands[0].argv and not commands[0].env:
        return None
    first = commands[0].argv[0] if commands[0].argv else "export"
    if fields["prompt"] in ("bare_prompt", "none") and fields.get("sigil") != "$" and not _KNOWN_PROGRAM.match(first):
        return None
    return Event(EventKind.COMMAND, number, text, indent, fields, after, tuple(commands), anchors)


def _simple(node: Tree, knowledge: Knowledge) -> SimpleCommand:
    from lark import Token

    env: dict[str, str] = {}
    argv: list[str] = []
    for token in node.children:
        value = str(token)
        if isinstance(token, Token) and token.type == "REDIRECT":
            continue  # `2>&1`, `> build.log`: where the output went, not what ran
        if isinstance(token, Token) and token.type == "ASSIGN" and not argv:
            key, _, raw = value.partition("=")
            env[key] = _unquote(raw)
        else:
            argv.append(_unquote(value))
    return _unwrap(env, argv, knowledge)


_SUDO_VALUE = frozenset({"-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D", "-R", "-T"})
_CONDA_VALUE = frozenset({"-n", "--name", "-p", "--prefix", "--cwd"})


def _unwrap(env: dict[str, str], argv: list[str], knowledge: Knowledge | None = None) -> SimpleCommand:
    """Take off what only runs the command (`time`, `sudo -E`, `env A=1`, `nohup`, `conda run -n x`,
    `bash -c '...'`) so that argv starts at the program that does the work."""
    wrappers: list[str] = []
    venv = None
    while argv:
        head = argv[0].rsplit("/", 1)[-1]
        i = 1
        if head in ("time", "nohup", "command", "exec", "builtin", "stdbuf", "nice", "timeout", "sudo", "env"):
            while i < len(argv) and argv[i].startswith("-"):
                takes_value = (head == "sudo" and argv[i] in _SUDO_VALUE) or (head, argv[i]) in (
                    ("env", "-u"), ("nice", "-n"), ("timeout", "-s"), ("timeout", "-k"))  # fmt: skip
                i += 2 if takes_value else 1
            if head == "timeout" and i < len(argv):
                i += 1  # the duration
            while head in ("env", "sudo") and i < len(argv) and re.match(r"[A-Za-z_]\w*=", argv[i]):
                key, _, raw = argv[i].partition("=")
                env[key] = _unquote(raw)
                i += 1
        elif head in ("conda", "mamba", "micromamba") and argv[1:2] == ["run"]:
            i = 2
            while i < len(argv) and argv[i].startswith("-"):
                if argv[i] in _CONDA_VALUE and i + 1 < len(argv):
                    venv = argv[i + 1]
                    i += 1
                i += 1
        elif head in ("bash", "sh", "zsh") and len(argv) >= 3 and re.fullmatch(r"-\w*c\w*", argv[1]):
            inner = _parse_inner(argv[2], knowledge)
            if inner is not None:
                return replace(inner, env={**env, **inner.env}, wrappers=(*wrappers, head + " " + argv[1]))
            break
        else:
            break
        if i >= len(argv):
            break
        wrappers.append(" ".join(argv[:i]))
        argv = argv[i:]
    if argv and argv[0] == "export":  # `export A=1 B=2` sets variables like inline assignments do
        for word in argv[1:]:
            key, eq, raw = word.partition("=")
            if eq:
                env[key] = _unquote(raw)
    return SimpleCommand(env, tuple(argv), tuple(wrappers), venv)


def _parse_inner(script: str, knowledge: Knowledge | None) -> SimpleCommand | None:
    """The command inside `bash -c '...'`: the last simple command of it that does something."""
    if knowledge is None:
        return None
    from lark.exceptions import LarkError

    try:
        tree = knowledge.parser("command").parse(script)
    except LarkError:
        return None
    event = _command_event(knowledge, tree, 0, script, 0, _NOTHING_AFTER, frozenset())
    if event is None or not event.commands:
        return None
    doing = [c for c in event.commands if c.argv and c.argv[0] not in ("cd", "echo", "export", "source", ".")]
    return doing[-1] if doing else event.commands[-1]


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    if "=" in value:
        key, _, raw = value.partition("=")
        return f"{key}={_unquote(raw)}"
    return value
