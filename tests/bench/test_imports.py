"""The evaluation suite stays headless: no Qt, no endpoint."""

from __future__ import annotations

import subprocess
import sys

MODULES = ["cli", "runner", "systems", "metrics", "report", "llm", "diagnostics", "verdict",
           "provenance", "generators", "conversations", "conversations_report", "embedders"]


def test_the_suite_imports_neither_qt_nor_the_endpoint() -> None:
    code = ("import sys\n"
            + "".join(f"import memstrata_app.bench.{m}\n" for m in MODULES)
            + "import memstrata_app.engine\n"
            + "bad = [m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph', "
              "'memstrata_app.proxy', 'memstrata_app.gui', 'starlette'))]\n"
            + "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
