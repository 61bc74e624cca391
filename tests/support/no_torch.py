"""Run a MemStrata entry point in this process with torch unavailable, and say whether any
code asked for it.

    python -m tests.support.no_torch REPORT.json cli ARG…      # memstrata ARG…
    python -m tests.support.no_torch REPORT.json code 'PYTHON'  # any code (servers, the app)

An import hook refuses `torch`, `sentence_transformers` and `transformers` (ImportError, as on
a machine without them) and records every attempt, caught or not; at exit REPORT.json holds
{"attempts": [...], "loaded": [...], "rc": N}. tests/test_runtime_no_torch.py reads it.
"""

from __future__ import annotations

import atexit
import importlib.abc
import json
import sys
import traceback
from pathlib import Path

BLOCKED = ("torch", "sentence_transformers", "transformers")
attempts: list[str] = []


class _Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):  # type: ignore[no-untyped-def]
        if name.split(".")[0] in BLOCKED:
            caller = next((f"{f.filename}:{f.lineno}" for f in reversed(
                traceback.extract_stack()[:-1]) if "importlib" not in f.filename
                and "no_torch" not in f.filename), "?")
            attempts.append(f"{name} (from {caller})")
            raise ImportError(f"{name} is not available (blocked: the runtime must not need it)")
        return None


def main() -> None:
    report = Path(sys.argv[1])
    kind, rest = sys.argv[2], sys.argv[3:]
    sys.meta_path.insert(0, _Refuse())
    rc = {"rc": None}

    def write() -> None:
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
        report.write_text(json.dumps({"attempts": attempts, "loaded": loaded, "rc": rc["rc"]}))

    atexit.register(write)
    if kind == "cli":
        from memstrata_app.cli.dispatch import main as cli_main

        rc["rc"] = cli_main(rest)
    else:
        scope: dict[str, object] = {"__name__": "__no_torch__"}
        exec(compile(rest[0], "<no_torch>", "exec"), scope)
        rc["rc"] = 0
    sys.stdout.flush()
    sys.exit(rc["rc"])


if __name__ == "__main__":
    main()
