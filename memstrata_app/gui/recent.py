"""The ledgers the app opened lately, newest first (File → Open recent), kept in the data folder."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from .. import paths
from ..engine.ledger.files import write_private

log = logging.getLogger(__name__)
FILE_NAME = "recent_ledgers.json"
KEEP = 8


def _file() -> Path:
    return paths.data_dir() / FILE_NAME


def load() -> list[str]:
    """The recent ledger files that still exist, newest first."""
    try:
        raw = json.loads(_file().read_text("utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(raw, list):
        return []
    return [str(p) for p in raw if isinstance(p, str) and p and Path(p).is_file()][:KEEP]


def remember(location: str | Path) -> list[str]:
    """Put the ledger file `location` first in the list and save it; returns the list. A team
    ledger's URI is not kept (it names a server and a user)."""
    loc = str(location)
    if loc.startswith(("postgresql:", "postgres:")):
        return load()
    loc = str(Path(loc).expanduser().resolve())
    items = [loc, *(p for p in load() if p != loc)][:KEEP]
    try:  # owner-only like everything in the data folder (it names the user's files)
        write_private(_file(), json.dumps(items, indent=1).encode("utf-8"))
    except OSError as e:
        log.warning("could not save the recent ledgers: %s", e)
    return items
