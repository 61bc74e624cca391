"""Shared look: status colours, time formatting, small widget helpers."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import QDateTime, QTimeZone
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel

STATUS_COLORS: dict[str, str] = {
    "active": "#2e9d6e",
    "superseded": "#8a94a6",
    "quarantined": "#e0a030",
    "rejected": "#c8553d",
    "plain": "#4a7fc1",
    "retracted": "#9b6fb5",
}


def status_color(status: object) -> QColor:
    """The colour a status is drawn in everywhere (ledger, timeline, badges)."""
    return QColor(STATUS_COLORS.get(str(getattr(status, "value", status)), "#666666"))


def status_text(status: object) -> str:
    return str(getattr(status, "value", status))


def fmt_time(t: datetime | None, empty: str = "—") -> str:
    """Local-time display of an aware datetime, minutes precision."""
    if t is None:
        return empty
    return t.astimezone().strftime("%Y-%m-%d %H:%M")


def fmt_time_long(t: datetime | None, empty: str = "open") -> str:
    if t is None:
        return empty
    return t.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


def to_qdatetime(t: datetime) -> QDateTime:
    return QDateTime.fromMSecsSinceEpoch(int(t.timestamp() * 1000), QTimeZone.systemTimeZone())


def from_qdatetime(q: QDateTime) -> datetime:
    return datetime.fromtimestamp(q.toMSecsSinceEpoch() / 1000, tz=UTC)


def heading(text: str) -> QLabel:
    label = QLabel(text)
    label.setStyleSheet("font-weight: 600; color: palette(text); margin-top: 4px;")
    return label


def muted(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setStyleSheet("color: palette(mid);")
    label.setWordWrap(True)
    return label
