"""Icons drawn with QPainter: the strata mark (showing memory/endpoint state) and badges."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPainter, QPen, QPixmap

ON = ("#1f7a8c", "#2e9d6e", "#8fd3a8")
OFF = ("#6b7280", "#9ca3af", "#d1d5db")


def strata_pixmap(size: int, memory_on: bool = True, endpoint_up: bool | None = None) -> QPixmap:
    """Three stacked layers (coloured when memory is injected, grey when off) and a status dot."""
    pm = QPixmap(size, size)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    s = size / 32
    colors = ON if memory_on else OFF
    for i, c in enumerate(colors):  # bottom layer first
        y = (21 - i * 7) * s
        rect = QRectF(3 * s + i * 1.5 * s, y, 26 * s - i * 3 * s, 7 * s)
        p.setPen(QPen(QColor("#ffffff"), max(1.0, s)))
        p.setBrush(QBrush(QColor(c)))
        p.drawRoundedRect(rect, 2.5 * s, 2.5 * s)
    if endpoint_up is not None:
        dot = QColor("#22c55e") if endpoint_up else QColor("#ef4444")
        p.setPen(QPen(QColor("#ffffff"), 1.5 * s))
        p.setBrush(dot)
        p.drawEllipse(QRectF(20 * s, 20 * s, 11 * s, 11 * s))
    p.end()
    return pm


def strata_icon(memory_on: bool = True, endpoint_up: bool | None = None) -> QIcon:
    icon = QIcon()
    for size in (16, 22, 32, 48, 64, 128):
        icon.addPixmap(strata_pixmap(size, memory_on, endpoint_up))
    return icon


def badge_icon(count: int, size: int = 18) -> QIcon:
    """A round count badge for a tab (empty icon when the count is zero)."""
    if count <= 0:
        return QIcon()
    pm = QPixmap(size * 2, size)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    text = str(count) if count < 100 else "99+"
    font = QFont()
    font.setPixelSize(int(size * 0.62))
    font.setBold(True)
    p.setFont(font)
    w = max(size, p.fontMetrics().horizontalAdvance(text) + 8)
    rect = QRectF(0, 0, w, size)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor("#e0a030"))
    p.drawRoundedRect(rect, size / 2, size / 2)
    p.setPen(QColor("white"))
    p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
    p.end()
    return QIcon(pm.copy(0, 0, int(w), size))
