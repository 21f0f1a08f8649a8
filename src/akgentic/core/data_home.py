"""Where akgentic keeps a user's data by default: one folder per user, not per project.

The CLI's default store (``akgentic.db``) and the workspace trees (``workspaces/``) live
there, so a team started in one folder can be listed, resumed and served from any other.
The folder follows each platform's convention:

- Linux and other Unixes: ``$XDG_DATA_HOME/akgentic``, else ``~/.local/share/akgentic``
  (the XDG Base Directory rule: a relative ``XDG_DATA_HOME`` is ignored);
- macOS: ``~/Library/Application Support/akgentic``;
- Windows: ``%LOCALAPPDATA%\\akgentic``, else ``~\\AppData\\Local\\akgentic``.

Nothing here creates the folder: whoever first writes there does.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["APP_FOLDER", "user_data_dir"]

APP_FOLDER = "akgentic"


def user_data_dir(
    *,
    environ: Mapping[str, str] | None = None,
    platform: str | None = None,
    home: Path | None = None,
) -> Path:
    """The user's akgentic data folder (see the module docstring); not created here.

    ``environ``, ``platform`` (``sys.platform``'s values) and ``home`` default to this
    process's; they are parameters so each platform's rule can be checked anywhere.
    A home folder that cannot be found is a ``RuntimeError`` saying what to set.
    """
    env = os.environ if environ is None else environ
    system = sys.platform if platform is None else platform
    if system.startswith("win"):
        local = env.get("LOCALAPPDATA", "").strip()
        if local and Path(local).is_absolute():
            return Path(local) / APP_FOLDER
        return _home(home) / "AppData" / "Local" / APP_FOLDER
    if system == "darwin":
        return _home(home) / "Library" / "Application Support" / APP_FOLDER
    xdg = env.get("XDG_DATA_HOME", "").strip()
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / APP_FOLDER
    return _home(home) / ".local" / "share" / APP_FOLDER


def _home(home: Path | None) -> Path:
    if home is not None:
        return home
    try:
        return Path.home()
    except RuntimeError:
        raise RuntimeError(
            "cannot find your home folder (HOME is not set) to keep akgentic's data in: "
            "set HOME, or XDG_DATA_HOME, or name a store with AKGENTIC_STORAGE"
        ) from None
