"""docs/ARCHITECTURE.md names every module of the engine, in its folder's table, so the next
person finds where a file belongs (and a new module is placed in the doc too)."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "memstrata_app" / "engine"


def test_every_engine_module_is_in_the_architecture_doc() -> None:
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text("utf-8")
    named = set(re.findall(r"`([\w*]+\.py|rules/)`", doc)) | set(re.findall(r"\b(\w+)\.py\b", doc))
    missing = []
    for path in sorted(ENGINE.rglob("*.py")):
        rel = path.relative_to(ENGINE)
        if path.name == "__init__.py" or rel.parts[:2] == ("understand", "rules"):
            continue
        if not any(fnmatch.fnmatch(path.name, pat) or pat == path.stem for pat in named):
            missing.append(str(rel))
    assert not missing, f"not in docs/ARCHITECTURE.md: {missing}"
    assert "`rules/`" in doc
