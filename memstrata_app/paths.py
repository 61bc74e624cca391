"""The one place that decides where MemStrata keeps its files."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import platformdirs

log = logging.getLogger(__name__)

ENV_HOME = "MEMSTRATA_HOME"
DB_NAME = "memstrata.db"
SETTINGS_NAME = "settings.json"
TOKEN_NAME = "token"
PRIVATE_DIR = 0o700


def data_dir() -> Path:
    """`$MEMSTRATA_HOME` if set, else the platform's per-user data folder; owner-only (0700)."""
    home = os.environ.get(ENV_HOME)
    path = Path(home).expanduser() if home else Path(platformdirs.user_data_dir("memstrata", False))
    path.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    _private_dir(path)
    return path


def _private_dir(path: Path) -> None:
    """Take group and other permissions off the data folder (it holds the ledger and token)."""
    if os.name == "nt":  # the per-user folder is private by its ACL
        return
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            os.chmod(path, PRIVATE_DIR)
            log.info("data folder %s was open to other users (mode %04o); set to %04o",
                     path, mode, PRIVATE_DIR)
    except OSError as e:
        log.warning("could not make the data folder %s private: %s", path, e.strerror or e)


def db_path() -> Path:
    return data_dir() / DB_NAME


def settings_path() -> Path:
    return data_dir() / SETTINGS_NAME


def token_path() -> Path:
    """The per-install access token for the management API and the MCP write tools."""
    return data_dir() / TOKEN_NAME
