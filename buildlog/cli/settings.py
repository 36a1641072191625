"""Everything a run takes from outside its arguments: environment variables and config files.

Read here and only here, checked, and passed down as plain values; a bad value is a clear
message (exit 2), never an internal error. The variables:

  BUILDLOG_STORE        the store of past failures (default: the user data folder's store.sqlite)
  BUILDLOG_RULES        rule files or folders to add, separated by the path separator (: or ;)
  BUILDLOG_REDACT_PATHS 1 to mask user names, home folders and host names by default
  BUILDLOG_SCAN_ENGINE  auto (default), hyperscan or plain
  BUILDLOG_CACHE_DIR    where the scan engine keeps its compiled database (default: the user
                        cache folder, $XDG_CACHE_HOME/buildlog when that is an absolute path)
  BUILDLOG_DEBUG        1 to show the traceback of an internal error
  NO_COLOR              no colour in the terminal report
  GITLAB_CI             true (set by every GitLab runner): the report's default format is gitlab,
                        the terminal report in the job log's collapsible sections

Config: `[tool.buildlog]` in the nearest pyproject.toml, or a buildlog.toml, found from the
current folder upwards, may say `rules = ["folder", ...]` (relative to that file),
`disable = ["rule-id", ...]` and `redact_paths = true`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from buildlog.errors import BuildlogError

TRUE = ("1", "true", "yes", "on")
FALSE = ("", "0", "false", "no", "off")
ENGINES = ("auto", "hyperscan", "plain")
CONFIG_KEYS = frozenset({"rules", "disable", "redact_paths"})


def flag(env: Mapping[str, str], name: str) -> bool:
    """A yes/no variable: 1/true/yes/on or 0/false/no/off (any case); anything else is an error."""
    value = env.get(name, "").strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise BuildlogError(f"${name}={env[name]!r}: expected 1 or 0 (true/false, yes/no, on/off)")


class Settings(NamedTuple):
    """The checked settings of one run."""

    rules: tuple[Path, ...] = ()
    disable: tuple[str, ...] = ()
    redact_paths: bool = False
    engine: str = "auto"
    cache: Path | None = None
    store: str | None = None
    config: Path | None = None  # the file the config came from


def read_settings(env: Mapping[str, str], cwd: Path) -> Settings:
    """The settings from the environment and the nearest config file."""
    engine = env.get("BUILDLOG_SCAN_ENGINE", "auto").strip().lower() or "auto"
    if engine not in ENGINES:
        raise BuildlogError(
            f"$BUILDLOG_SCAN_ENGINE={env['BUILDLOG_SCAN_ENGINE']!r}: expected one of {', '.join(ENGINES)}"
        )
    config_path, config = find_config(cwd)
    rules = [Path(p) for p in env.get("BUILDLOG_RULES", "").split(os.pathsep) if p.strip()]
    if config_path is not None:
        rules = [config_path.parent / p for p in config.get("rules", [])] + rules
    redact = flag(env, "BUILDLOG_REDACT_PATHS") or bool(config.get("redact_paths", False))
    return Settings(
        rules=tuple(rules), disable=tuple(config.get("disable", [])), redact_paths=redact, engine=engine,
        cache=cache_folder(env), store=env.get("BUILDLOG_STORE") or None, config=config_path,
    )  # fmt: skip


def cache_folder(env: Mapping[str, str]) -> Path | None:
    """$BUILDLOG_CACHE_DIR, else $XDG_CACHE_HOME/buildlog, else ~/.cache/buildlog; a relative
    value is ignored (the XDG rule), so nothing is ever written into the current folder."""
    explicit = env.get("BUILDLOG_CACHE_DIR", "")
    if explicit and os.path.isabs(explicit):
        return Path(explicit)
    xdg = env.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "buildlog"
    try:
        return Path.home() / ".cache" / "buildlog"
    except RuntimeError:  # no home folder: no cache
        return None


def find_config(cwd: Path) -> tuple[Path | None, dict[str, Any]]:
    """The nearest buildlog.toml, or pyproject.toml with a [tool.buildlog] table, and that table."""
    for folder in (cwd, *cwd.parents):
        for name in ("buildlog.toml", "pyproject.toml"):
            path = folder / name
            if not path.is_file():
                continue
            table = _config_table(path)
            if table is not None:
                return path, table
    return None, {}


def _config_table(path: Path) -> dict[str, Any] | None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        doc = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        if path.name == "pyproject.toml":
            return None  # not ours to judge unless it says [tool.buildlog]
        raise BuildlogError(f"{path}: cannot read the config ({exc})") from None
    table = doc if path.name == "buildlog.toml" else doc.get("tool", {}).get("buildlog")
    if table is None:
        return None
    unknown = sorted(set(table) - CONFIG_KEYS)
    if unknown:
        raise BuildlogError(
            f"{path}: unknown buildlog setting {', '.join(unknown)} (settings: {', '.join(sorted(CONFIG_KEYS))})"
        )
    for key in ("rules", "disable"):
        if key in table and not (isinstance(table[key], list) and all(isinstance(v, str) for v in table[key])):
            raise BuildlogError(f"{path}: {key} must be a list of strings")
    if "redact_paths" in table and not isinstance(table["redact_paths"], bool):
        raise BuildlogError(f"{path}: redact_paths must be true or false")
    return dict(table)


def knowledge_for(settings: Settings, extra_rules: Sequence[str] = ()) -> Any:
    """The bundled knowledge with the user's rules (config, environment, --rules) added."""
    from buildlog.knowledge.artefact import bundled

    paths = [*settings.rules, *(Path(p) for p in extra_rules)]
    if not paths and not settings.disable:  # the loader of rule files is not needed
        return bundled()
    from buildlog.knowledge.load import with_user_rules

    return with_user_rules(bundled(), paths, settings.disable)


def default_format(env: Mapping[str, str]) -> str:
    """The report format when --format is not given: gitlab inside a GitLab CI job, else terminal."""
    return "gitlab" if env.get("GITLAB_CI", "").strip().lower() == "true" else "terminal"
