"""Where the store lives: `--store PATH`, else BUILDLOG_STORE, else the user's data directory.

Written here rather than taken from a platform-directories package: three cases do not justify
a dependency, and the rules (XDG on Linux, Application Support on macOS, LOCALAPPDATA on
Windows) are stable.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

STORE_ENV = "BUILDLOG_STORE"
STORE_FILE = "store.sqlite"


def data_dir(platform: str, env: Mapping[str, str], home: Path | None = None) -> Path:
    """The per-user data directory for buildlog on this platform.

    Parameters default to the running system; tests pass others to check every platform.
    """
    home = home if home is not None else Path.home()
    if platform == "win32":
        base = env.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(base) / "buildlog"
    if platform == "darwin":
        return home / "Library" / "Application Support" / "buildlog"
    xdg = env.get("XDG_DATA_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    base_path = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".local" / "share"
    return base_path / "buildlog"


def store_path(option: str | None, env: Mapping[str, str]) -> Path | str:
    """The store to use: the command-line option wins, then BUILDLOG_STORE, then the default.

    A database URL (`postgresql://...`) is kept as text: it is never a file name.
    """
    chosen = option or env.get(STORE_ENV)
    if chosen:
        return chosen.strip() if "://" in chosen else Path(chosen).expanduser()
    return data_dir(sys.platform, env) / STORE_FILE
