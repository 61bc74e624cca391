"""Window-level flows: applying saved settings, and re-embedding the ledger with progress."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QProgressDialog

from .. import autostart
from ..settings import apply_judge
from .settings_dialog import LABELS, SettingsDialog
from .worker import Operation

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from .endpoint import EndpointController
    from .query import QueryView
    from .state import AppState
    from .worker import EngineClient

NEXT_START = ("ollama_url", "chat_model")


class Window(Protocol):
    """What these flows use of the main window, which passes itself in (and is the parent of
    the dialogs they show): defined here so that this module never imports the window."""

    state: AppState
    client: EngineClient
    endpoint: EndpointController
    query: QueryView

    def statusBar(self) -> QStatusBar: ...


def open_settings(win: Window) -> SettingsDialog:
    """Show the dialog modally and apply what changed."""
    dlg = SettingsDialog(win.state.settings, win)
    if dlg.exec():
        apply_settings(win, dlg.changed)
    return dlg


def apply_settings(win: Window, changed: dict[str, Any]) -> None:
    """Make saved changes take effect where they can at runtime; say which wait for a restart."""
    if "memory_enabled" in changed:
        win.endpoint.set_memory_enabled(bool(changed["memory_enabled"]))
    if "injection_k" in changed:
        win.query.k.setValue(int(changed["injection_k"]))
    if "quarantine_threshold" in changed:
        value = float(changed["quarantine_threshold"])
        win.client.submit(Operation("set quarantine threshold",
                                    lambda e: setattr(e, "quarantine_threshold", value)))
    if "retrieval" in changed:
        hybrid = changed["retrieval"] == "hybrid"
        win.client.submit(Operation("set retrieval mode",
                                    lambda e: setattr(e, "hybrid", hybrid)))
    if {"update_judge", "judge_supersede", "judge_review", "judge_veto", "judge_relate",
        "judge_one_sided"} & set(changed):
        settings = win.state.settings
        win.client.submit(Operation("set the update judge",
                                    lambda e: apply_judge(e, settings)))
    if "start_at_login" in changed:
        try:
            autostart.set_enabled(bool(changed["start_at_login"]))
        except OSError as e:
            QMessageBox.warning(win, "Start at login", f"Could not change the login item: {e}")
    if "endpoint_port" in changed and win.endpoint.running:
        win.endpoint.stop()
        win.endpoint.start()
    later = [LABELS.get(n, n) for n in changed if n in NEXT_START]
    if later:
        win.statusBar().showMessage(f"Saved. {' and '.join(later)} take effect when the app or "
                                    "the endpoint next starts.", 8000)
    if "embedder" in changed:
        answer = QMessageBox.question(
            win, "Re-embed the ledger?",
            f"The embedder is now {changed['embedder']}. Re-embed every stored fact now? "
            "(Retrieval keeps using the old vectors until you do.)")
        if answer == QMessageBox.StandardButton.Yes:
            run_reindex(win)


def run_reindex(win: Window) -> Operation:
    """Re-embed every row with the configured embedder, with a cancellable progress dialog."""
    spec = win.state.settings.get("embedder")
    dialog = QProgressDialog("Re-embedding the ledger…", "Cancel", 0, 0, win)
    dialog.setWindowTitle("Re-embed")
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(300)
    op = Operation("reindex", lambda e: None, writes=("embedder",))
    op.fn = lambda e: e.reindex(spec, progress=op.report, cancel=op.cancel)

    def progress(done: int, total: int) -> None:
        dialog.setMaximum(max(total, 1))
        dialog.setValue(done)

    def finished(n: Any) -> None:
        dialog.reset()
        win.statusBar().showMessage(f"Re-embedded {n} rows with {spec}.", 8000)

    def failed(exc: BaseException) -> None:
        dialog.reset()
        cancelled = type(exc).__name__ == "Cancelled"
        win.statusBar().showMessage("Re-embedding cancelled; the old vectors stay in use."
                                    if cancelled else f"Re-embedding failed: {exc}", 10000)

    op.progress, op.success, op.failure = progress, finished, failed
    dialog.canceled.connect(op.cancel.set)
    return win.client.submit(op)
