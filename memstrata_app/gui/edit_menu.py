"""The Edit menu: Undo (Ctrl+Z) of this writer's latest approve, reject, forget, move or
contest. Its text names the action ("Undo approve #12, retiring #4"); it is off when there
is nothing to undo, when the ledger is read-only, or when the action's rows changed since
(the tooltip says why). The engine puts the rows back (`MemoryEngine.undo`)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow

from .state import AppState

NOTHING = "Nothing to undo: approve, reject, forget, move and contest can be undone"


class EditMenu(QObject):
    """Adds "Ed&it" to the window's menu bar (Alt+I: Alt+E is the detail pane's Redact…)
    and keeps its Undo action current."""

    undone = Signal(object)  # the engine's UndoResult
    refreshed = Signal()  # the Undo action shows the latest entry

    def __init__(self, window: QMainWindow, state: AppState):
        super().__init__(window)
        self._window = window
        self._state = state
        self._client = state.client
        self.entry: Any = None  # the action Undo would take back (an AuditEntry)
        self.menu = window.menuBar().addMenu("Ed&it")
        self.menu.setObjectName("edit_menu")
        self.menu.setToolTipsVisible(True)
        act = QAction("&Undo", window)
        act.setObjectName("undo_action")
        act.setShortcut(QKeySequence(QKeySequence.StandardKey.Undo))
        if act.shortcut().isEmpty():  # a platform with no standard key for it
            act.setShortcut(QKeySequence("Ctrl+Z"))
        act.setEnabled(False)
        act.setToolTip(NOTHING)
        act.triggered.connect(self.undo)
        self.menu.addAction(act)
        self.undo_action = act
        self.menu.aboutToShow.connect(self.refresh)
        self._client.ready.connect(self.refresh)
        self._client.changed.connect(lambda _change: self.refresh())
        if self._client.engine is not None:
            self.refresh()

    def refresh(self) -> None:
        """Ask the engine (on the worker) what Undo would take back now."""
        if self._client.engine is not None:
            self._client.call("undoable", lambda e: e.undoable(limit=1), self._show,
                              lambda _e: self._show([]))

    def _show(self, entries: list[Any]) -> None:
        entry = entries[0] if entries else None
        self.entry = entry
        act = self.undo_action
        if entry is None:
            act.setText("&Undo")
            act.setEnabled(False)
            act.setToolTip(NOTHING)
        elif entry.blocked:
            act.setText(f"Can't &undo {entry.summary}")
            act.setEnabled(False)
            act.setToolTip(f"Can't undo {entry.summary}: {entry.blocked}")
        elif self._state.read_only:
            act.setText(f"&Undo {entry.summary}")
            act.setEnabled(False)
            act.setToolTip(f"The ledger is read-only ({self._state.read_only})")
        else:
            act.setText(f"&Undo {entry.summary}")
            act.setEnabled(True)
            act.setToolTip(f"Put back every row that {entry.summary} changed, as it was "
                           f"({entry.at.astimezone():%Y-%m-%d %H:%M}); the audit log keeps both")
        self.refreshed.emit()

    def undo(self) -> None:
        entry = self.entry
        if entry is None or not self.undo_action.isEnabled():
            return
        self.undo_action.setEnabled(False)  # one undo at a time
        eid = int(entry.id)
        self._client.call("undo", lambda e: e.undo(eid), self._on_undone, self._on_refused,
                          writes=("ledger", "review"))

    def _on_undone(self, res: Any) -> None:
        rows = ", ".join(f"#{a.id}" for a in res.restored)
        self._window.statusBar().showMessage(
            f"Undone: {res.undone.summary}" + (f" (restored {rows})" if rows else ""), 10000)
        self.undone.emit(res)

    def _on_refused(self, exc: BaseException) -> None:
        self._window.statusBar().showMessage(str(exc), 20000)
        self.refresh()
