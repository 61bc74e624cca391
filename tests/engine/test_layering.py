"""The engine imports and works with no Qt and no HTTP server code present."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BLOCKED = ("PySide6", "pyqtgraph", "starlette", "uvicorn", "mcp")

PROBE = textwrap.dedent(f"""
    import importlib.abc, sys
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split('.')[0] in {BLOCKED!r}:
                raise ImportError(f"blocked in this test: {{name}}")
    sys.meta_path.insert(0, Block())
    import memstrata_app.engine as e
    import memstrata_app.engine.core, memstrata_app.engine.understand.pipeline
    bad = [m for m in sys.modules if m.split('.')[0] in {BLOCKED!r}
           or m.startswith(('memstrata_app.gui', 'memstrata_app.proxy'))]
    print("LOADED", bad)
""")


def test_engine_imports_without_qt_or_http_servers():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert "LOADED []" in out.stdout, out.stdout + out.stderr


def test_import_linter_contracts_hold():
    lint = Path(sys.executable).parent / "lint-imports"
    out = subprocess.run([str(lint)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Contracts: " in out.stdout and " broken" in out.stdout
    assert "0 broken" in out.stdout
