"""The story of a session in a few sentences, attempt by attempt, as a person would tell it.

"The first install failed: the package imports torch inside pip's isolated build environment.
Attempt 2 added --no-build-isolation and got past that, but failed: the compiler ran out of memory.
Attempt 3 set MAX_JOBS=2 and succeeded; its check `python -c "import ext"` passed."

Built only from the attempts, incidents and causes already decided: nothing is judged here.
"""

from __future__ import annotations

from collections.abc import Sequence

from buildlog.report.schema import Attempt, Incident, RootCause, Status

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
MAX_COMMAND = 70


def narrative(
    status: Status, attempts: Sequence[Attempt], incidents: Sequence[Incident], roots: Sequence[RootCause]
) -> list[str]:
    """A sentence per attempt (and one for the end), or nothing for a single plain attempt."""
    if len(attempts) < 2 and not any(a.checks for a in attempts):
        return []
    titles = {r.id: _lower(r.title) for r in roots}
    by_id = {i.id: i for i in incidents}
    out: list[str] = []
    seen: set[str] = set()
    before: set[str] = set()  # the causes the attempt before this one failed with
    for attempt in attempts:
        causes = [by_id[i] for i in attempt.incidents if i in by_id]
        new = [i for i in causes if i.cause not in seen]
        again = [i for i in causes if i.cause in seen]
        resolved = [i for i in incidents if i.resolved_by and i.resolved_by.attempt == attempt.number]
        out.append(_sentence(attempt, new, again, resolved, titles, first=not out, just_before=before))
        seen |= {i.cause for i in causes}
        before = {i.cause for i in causes}
    if status == "failure" and roots:
        open_ = [r for r in roots if not any(i.cause == r.id and i.resolved_by for i in incidents)]
        if open_:
            out.append(f"Still broken: {titles.get(open_[0].id, open_[0].id)}.")
    return out


def _sentence(
    attempt: Attempt,
    new: list[Incident],
    again: list[Incident],
    resolved: list[Incident],
    titles: dict[str, str],
    first: bool,
    just_before: set[str],
) -> str:
    who = (
        f"The {_ordinal(attempt.number)} attempt (`{_short(attempt.command)}`)"
        if first
        else f"Attempt {attempt.number}"
    )
    if resolved:
        changes = list(dict.fromkeys(_as_action(i.resolved_by.change) for i in resolved if i.resolved_by))
        if {i.cause for i in resolved} == just_before:
            past = "that" if len(resolved) == 1 else "both"
        else:
            past = "the problem of " + " and ".join(
                f"attempt {i.attempts[-1]} ({titles.get(i.cause, i.cause)})" for i in resolved
            )
        head = f"{who} {_and(changes)} and got past {past}"
    else:
        head = who
    built = attempt.outcome == "success"
    if built:
        tail = "succeeded" if not resolved else "the build succeeded"
    elif attempt.outcome == "failure" and new:
        tail = "failed: " + "; ".join(titles.get(i.cause, i.cause) for i in new)
    elif attempt.outcome == "failure" and again:
        tail = "failed the same way (" + "; ".join(titles.get(i.cause, i.cause) for i in again) + ")"
    elif attempt.outcome == "failure":
        tail = "failed, for a reason no rule names"
    else:
        tail = "ended without saying how"
    joiner = "; " if built and resolved else (", but " if resolved else " ")
    text = head + joiner + tail
    for check in attempt.checks:
        if check.outcome == "passed":
            text += f"; the check `{_short(check.command)}` passed"
        else:
            why = [titles.get(i.cause, i.cause) for i in new + again] if built else []
            text += f"; but the check `{_short(check.command)}` failed" + (f": {why[0]}" if why else "")
    return text + "."


def _as_action(change: str) -> str:
    """A resolution's change as something the user did: `MAX_JOBS=1 (was 8)` -> `set MAX_JOBS=1 (was 8)`."""
    if change.startswith("no visible change"):
        return "reran the same command"
    return f"set {change}" if change[:1].isupper() else change


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _ordinal(n: int) -> str:
    return _ORDINALS[n - 1] if 0 < n <= len(_ORDINALS) else f"#{n}"


def _short(command: str) -> str:
    return command if len(command) <= MAX_COMMAND else command[: MAX_COMMAND - 1] + "…"


def _lower(title: str) -> str:
    return title if title[1:2].isupper() else title[0].lower() + title[1:]
