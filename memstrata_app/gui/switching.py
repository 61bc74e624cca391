"""File → Open ledger…: the window moves to another ledger file. The worker opens the new one
and only then closes the one in use; the views reload when it is open (the window's `ready`),
and the endpoint, if it ran, starts again on the new engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def ledger_file(win: Any) -> str:
    """The ledger file in use ("" for a team ledger or none)."""
    path = getattr(win.client.engine, "path", None)
    return str(Path(path).resolve()) if path else ""


def choose_ledger(win: Any) -> None:
    """Pick a ledger file (a new name creates one) and switch to it."""
    from PySide6.QtWidgets import QFileDialog

    start = ledger_file(win) or str(Path.home())
    path, _ = QFileDialog.getOpenFileName(
        win, "Open a ledger", start, "Ledgers (*.db *.sqlite *.sqlite3);;All files (*)")
    if path:
        switch_ledger(win, path)


def switch_ledger(win: Any, path: str | Path) -> None:
    """Stop what serves the old engine (the endpoint, the write watcher, the charts), then
    ask the worker to open `path`; a file that cannot be opened leaves the app where it was."""
    target = str(Path(path).expanduser().resolve())
    if target == ledger_file(win):
        win.statusBar().showMessage(f"{target} is the ledger in use", 5000)
        return
    if win.client.switching:
        return
    win._restart_endpoint = win.endpoint.running or win._restart_endpoint
    win.endpoint.stop()  # it serves the old engine: stopped before that one closes
    win.watcher.stop()
    if win.latency is not None:  # charts of the old engine's metrics
        win.bridge.close()
        win.latency.setParent(None)
        win.latency.deleteLater()
        win.latency = win.bridge = None
    win.engine_label.setText("Opening the ledger…")
    win.statusBar().showMessage(f"Opening {target}…")
    win.client.reopen(target)
