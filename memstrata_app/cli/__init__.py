"""`memstrata`: no arguments opens the desktop app; subcommands work headless.

One module per command group (memory, keys, spaces, review, governance, transfer,
maintenance, endpoint, ollama, app) over a shared layer: options (what --db, --space and
times mean), output (--json and the printed forms), errors (one line, an exit status) and
remote (a running endpoint that serves the same ledger)."""

from .dispatch import main
from .parser import build_parser

__all__ = ["build_parser", "main"]
