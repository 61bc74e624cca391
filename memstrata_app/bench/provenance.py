"""Which code produced a run: the commit, local edits, and extractor changes since the
held-out phrasings were added (which would void the held-out figures if fitted to them)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HELD_OUT = "memstrata_app/bench/generators/heldout.py"
EXTRACTOR = ("memstrata_app/engine/extract.py", "memstrata_app/engine/vocabulary.py",
             "memstrata_app/engine/normalize.py")


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                             timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.rstrip()


def provenance() -> dict[str, Any]:
    """Commit, engine files edited but not committed, and extractor commits after heldout.py."""
    head = _git("rev-parse", "--short", "HEAD")
    if head is None:
        return {"commit": None, "note": "not a git checkout"}
    dirty = _git("status", "--porcelain", "--", "memstrata_app/engine") or ""
    added = (_git("log", "--diff-filter=A", "--format=%H", "--", HELD_OUT) or "").split()
    since: list[str] = []
    if added:
        log = _git("log", "--format=%h %s", f"{added[-1]}..HEAD", "--", *EXTRACTOR) or ""
        since = [line for line in log.splitlines() if line]
    return {"commit": head,
            "engine_uncommitted": [line[3:] for line in dirty.splitlines() if line],
            "extractor_commits_since_held_out": since}
