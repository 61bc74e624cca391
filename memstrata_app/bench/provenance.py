"""Which code produced a run: the commit, local edits, and extractor changes since the
held-out phrasings were added (which would void the held-out figures if fitted to them)."""

from __future__ import annotations

import fnmatch
import re
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HELD_OUT = "memstrata_app/bench/generators/heldout.py"
EXTRACTOR = ("memstrata_app/engine/understand/extract*.py",
             "memstrata_app/engine/understand/normalize*.py",
             "memstrata_app/engine/understand/vocabulary*.py",
             "memstrata_app/engine/understand/rules/*.py",
             "memstrata_app/engine/understand/slots.py",  # everything that turns a sentence
             # into a key; and where those files were before the engine had its folders, so
             # that a commit from then is still compared with the same files
             "memstrata_app/engine/extract*.py", "memstrata_app/engine/normalize*.py",
             "memstrata_app/engine/vocabulary*.py", "memstrata_app/engine/rules/*.py",
             "memstrata_app/engine/slots.py")


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                             timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.rstrip()


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]{4,}", text.lower()))


def new_held_out_words(since: str) -> list[str]:
    """Words of the held-out phrasings absent from the extractor sources at `since` and
    present now: a hint (not proof) that a rule was written for them."""
    from .generators.heldout import HELD_OUT

    held = set().union(*(_words(t.replace("{s}", " ").replace("{v}", " "))
                         for tpls in HELD_OUT.values() for t in tpls))
    listed = (_git("ls-tree", "-r", "--name-only", since, "--", "memstrata_app/engine") or "")
    then: set[str] = set()
    for f in listed.splitlines():
        if any(fnmatch.fnmatch(f, pat) for pat in EXTRACTOR):
            then |= _words(_git("show", f"{since}:{f}") or "")
    now: set[str] = set()
    for pat in EXTRACTOR:
        for path in ROOT.glob(pat):
            now |= _words(path.read_text(encoding="utf-8"))
    return sorted((held & now) - then)


def provenance() -> dict[str, Any]:
    """Commit, engine files edited but not committed, and extractor commits after heldout.py."""
    head = _git("rev-parse", "--short", "HEAD")
    if head is None:
        return {"commit": None, "note": "not a git checkout"}
    dirty = _git("status", "--porcelain", "--", "memstrata_app/engine") or ""
    added = (_git("log", "--diff-filter=A", "--format=%H", "--", HELD_OUT) or "").split()
    since: list[str] = []
    words: list[str] = []
    if added:
        log = _git("log", "--format=%h %s", f"{added[-1]}..HEAD", "--",
                   *(f":(glob){pat}" for pat in EXTRACTOR)) or ""
        since = [line for line in log.splitlines() if line]
        words = new_held_out_words(added[-1])
    return {"commit": head,
            "engine_uncommitted": [line[3:] for line in dirty.splitlines() if line],
            "extractor_commits_since_held_out": since,
            "held_out_words_new_in_extractor": words}
