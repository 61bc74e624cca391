"""The one place that decides where MemStrata keeps its files."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

ENV_HOME = "MEMSTRATA_HOME"
DB_NAME = "memstrata.db"
SETTINGS_NAME = "settings.json"


def data_dir() -> Path:
    """`$MEMSTRATA_HOME` if set, else the platform's per-user data folder."""
    home = os.environ.get(ENV_HOME)
    path = Path(home).expanduser() if home else Path(platformdirs.user_data_dir("memstrata", False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def db_path() -> Path:
    return data_dir() / DB_NAME


def settings_path() -> Path:
    return data_dir() / SETTINGS_NAME
