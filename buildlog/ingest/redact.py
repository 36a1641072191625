"""Masks secrets (and, on request, user names, home directories and host names) in log text.

Applied to every line buildlog keeps — evidence, facts, commands, stored logs — so that a report
pasted into a public ticket or a shared store never carries a token.
"""

from __future__ import annotations

import re

MASK = "[REDACTED]"

_SECRETS = [
    re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),  # Hugging Face
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b"),  # GitHub classic tokens
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}\b"),  # GitHub fine-grained tokens
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\bpypi-[A-Za-z0-9_\-]{40,}"),  # PyPI API tokens
    re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}\b"),  # GitLab
    re.compile(r"\bsk-[A-Za-z0-9_\-]{32,}\b"),  # API keys in the common sk- form
]
# user:password@ in URLs keeps the user, masks the password.
_URL_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.\-]*://[^/\s:@]+:)(?P<secret>[^@\s/]+)(?=@)", re.IGNORECASE)
_AUTH_HEADER = re.compile(
    r"(?P<head>\bAuthorization:\s*(?:Bearer|Basic|token|Token)?\s*)(?P<secret>\S+)", re.IGNORECASE
)
_ASSIGNMENT = re.compile(
    r"(?P<head>\b[A-Z0-9_]*(?:TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIALS)[A-Z0-9_]*\s*[=:]\s*[\"']?)"
    r"(?P<secret>[^\s\"']+)"
)

_HOME = re.compile(r"(?P<head>/home/|/Users/|[A-Za-z]:\\Users\\)(?P<user>[^/\\\s\"':]+)")
_PROMPT_HOST = re.compile(r"(?P<user>\b[\w.\-]+)@(?P<host>[\w.\-]+)(?=:[~/\w]*[$#]\s)")
_ROOT_HOME = re.compile(r"/root(?=/|\b)")


# A literal every match of the secret patterns contains: most lines hold none, and a substring
# test costs far less than running the patterns over a long compiler command line.
_SECRET_HINTS = ("hf_", "gh", "AKIA", "ASIA", "pypi-", "glpat-", "sk-")
_NAMED_HINTS = ("TOKEN", "KEY", "SECRET", "PASSW", "CREDENTIALS")


def _may_hold_secret(text: str) -> bool:
    return (
        any(hint in text for hint in _SECRET_HINTS)
        or "://" in text
        or any(hint in text for hint in _NAMED_HINTS)
        or "uthor" in text.lower()  # Authorization:, in any case
    )


def redact(text: str, paths: bool = False) -> str:
    """Mask secrets; with `paths`, also user names, home directories and host names."""
    if _may_hold_secret(text):
        for pattern in _SECRETS:
            text = pattern.sub(MASK, text)
        for pattern in (_URL_PASSWORD, _AUTH_HEADER, _ASSIGNMENT):
            text = pattern.sub(lambda m: m.group("head") + MASK, text)
    if paths:
        text = _HOME.sub(lambda m: m.group("head") + "user", text)
        text = _PROMPT_HOST.sub("user@host", text)
        text = _ROOT_HOME.sub("/home/user", text)
    return text
