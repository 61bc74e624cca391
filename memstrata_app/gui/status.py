"""The status bar's parts: a label elided in the middle, and which ledger the app is on."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """One line of text elided in the middle to the room it is given (full text in `full`)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.full = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(60)
        self.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def set_full_text(self, text: str) -> None:
        self.full = text
        self._elide()
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance(self.full) + 8,
                     super().sizeHint().height())

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        self.setText(self.fontMetrics().elidedText(self.full, Qt.TextElideMode.ElideMiddle,
                                                   max(0, self.width() - 4)))


def ledger_location(engine: Any) -> str:
    """Where the ledger lives: the engine's own words (a PostgreSQL ledger says
    "PostgreSQL · user@host:5432/db"), else the SQLite file's path."""
    loc = getattr(engine, "location", None)
    if loc:
        return str(loc)
    path = getattr(engine, "path", None)
    return str(path) if path is not None else ""
