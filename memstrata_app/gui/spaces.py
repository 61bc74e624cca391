"""Spaces in the app: the switcher (which project the views show) and the move-to-space dialog.

Every row belongs to a space (a project, or the global space for facts meant for all). The
switcher sets `AppState.space`: the ledger lists that space's rows, the query box retrieves
as a request in that space would (its rows plus the global ones). Engine calls go through
the worker, as everywhere in the app.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from .state import AppState
from .worker import Change

ALL_SPACES = "All spaces"


class SpaceSwitcher(QWidget):
    """"Space:" and a combo box: All spaces first, then each space with its current rows."""

    refreshed = Signal()  # the list of spaces was (re)loaded

    def __init__(self, state: AppState, parent: QWidget | None = None):
        super().__init__(parent)
        self._state = state
        self.counts: dict[str, dict[str, int]] = {}
        self.combo = QComboBox()
        self.combo.setObjectName("space_switcher")
        self.combo.setToolTip("Which space (project) the ledger and the query box show; "
                              "All spaces: every row")
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.combo.addItem(ALL_SPACES, None)
        self.combo.currentIndexChanged.connect(self._on_pick)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 0, 8, 0)
        layout.addWidget(QLabel("Space:"))
        layout.addWidget(self.combo)
        state.client.changed.connect(self._on_changed)
        state.space_changed.connect(self._follow)

    def refresh(self) -> None:
        """Reload the spaces and their counts on the worker."""
        self._state.client.call("spaces", lambda e: e.spaces(), self._fill,
                                failure=lambda _e: None)

    def _fill(self, counts: dict[str, dict[str, int]]) -> None:
        self.counts = dict(counts)
        current = self._state.space
        names = list(counts)
        if current is not None and current not in counts:
            names.append(current)  # chosen, now empty: keep it until the user picks another
        self.combo.blockSignals(True)
        self.combo.clear()
        self.combo.addItem(f"{ALL_SPACES} ({sum(c['current'] for c in counts.values()):,})",
                           None)
        for name in names:
            c = counts.get(name, {"current": 0, "total": 0})
            self.combo.addItem(f"{name} ({c['current']:,})", name)
            self.combo.setItemData(self.combo.count() - 1,
                                   f"{c['current']:,} current of {c['total']:,} rows",
                                   Qt.ItemDataRole.ToolTipRole)
        self.combo.setCurrentIndex(self._index_of(current))
        self.combo.blockSignals(False)
        self.refreshed.emit()

    def names(self) -> list[str]:
        """The spaces listed (without All spaces)."""
        return [self.combo.itemData(i) for i in range(1, self.combo.count())]

    def select(self, name: str | None) -> None:
        """Show `name` (None: all spaces), as if picked in the combo box."""
        self.combo.setCurrentIndex(self._index_of(name))

    def _index_of(self, name: str | None) -> int:
        for i in range(1, self.combo.count()):
            if self.combo.itemData(i) == name:
                return i
        return 0

    def _on_pick(self, index: int) -> None:
        self._state.set_space(self.combo.itemData(index) if index > 0 else None)

    def _follow(self, name: str | None) -> None:
        if self._index_of(name) != self.combo.currentIndex():
            self.combo.blockSignals(True)
            self.combo.setCurrentIndex(self._index_of(name))
            self.combo.blockSignals(False)

    def _on_changed(self, change: Change) -> None:
        if change.touches("ledger", "review"):
            self.refresh()


class MoveDialog(QDialog):
    """Pick (or type) the space a fact moves to."""

    def __init__(self, assertion: Any, spaces: list[str], parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("move_dialog")
        self.setWindowTitle("Move to space")
        here = getattr(assertion, "space", "global")
        text = QLabel(f"“{html.escape(assertion.text or '')}” is in the space "
                      f"<b>{html.escape(here)}</b>. Move it, with its earlier values, to:")
        text.setWordWrap(True)
        self.target = QComboBox()
        self.target.setObjectName("move_target")
        self.target.setEditable(True)
        self.target.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        others = [s for s in spaces if s != here]
        if "global" not in others and here != "global":
            others.insert(0, "global")
        self.target.addItems(others)
        self.target.lineEdit().setPlaceholderText("a new space: the project's name")
        self.error = QLabel()
        self.error.setObjectName("move_error")
        self.error.setStyleSheet("color: #b00020;")
        self.error.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        layout.addWidget(self.target)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self._here = here

    def chosen(self) -> str:
        """The normalized target space name (accept() has checked it)."""
        from memstrata_app.engine.ledger.keys import normalize_space

        return normalize_space(self.target.currentText())

    def accept(self) -> None:
        name = self.target.currentText().strip()
        if not name:
            self.error.setText("Name the space to move it to.")
            return
        try:
            target = self.chosen()
        except ValueError as e:
            self.error.setText(str(e))
            return
        if target == self._here:
            self.error.setText(f"It is already in the space {target}.")
            return
        super().accept()
