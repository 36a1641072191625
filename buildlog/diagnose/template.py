"""Fix templates: `{name}` placeholders filled from a mapping of values.

`{name|text}` gives `text` when the value is unknown; `text` may itself name one `{other}` value.
A template whose value is missing keeps a readable placeholder such as <name> instead of failing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_PLACEHOLDER = re.compile(r"\{(\w+)(?:\|((?:[^{}]|\{\w+\})*))?\}")


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace placeholders; unknown names without a fallback become <name>."""

    def one(match: re.Match[str]) -> str:
        name, fallback = match.group(1), match.group(2)
        value = values.get(name, "")
        if value:
            return value
        if fallback is None:
            return f"<{name}>"
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), "") or f"<{m.group(1)}>", fallback)

    return _PLACEHOLDER.sub(one, template).strip()
