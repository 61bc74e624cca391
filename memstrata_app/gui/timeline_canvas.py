"""Draws one key's history: a bar per value over its validity, supersession links, an as-of line."""

from __future__ import annotations

import html
from datetime import UTC, datetime, timedelta
from typing import Any

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsScene, QGraphicsView, QWidget

from memstrata_app.understood import method_label

from .style import (
    accent_color,
    blend,
    fmt_time,
    fmt_time_long,
    hint_color,
    status_color,
    status_text,
)

LANE = 36
BAR = 22
LABEL_W = 170
TOP = 34
AXIS_H = 34
STEPS = (timedelta(hours=1), timedelta(hours=6), timedelta(days=1), timedelta(days=2),
         timedelta(days=7), timedelta(days=14), timedelta(days=30), timedelta(days=91),
         timedelta(days=365))


def _tooltip(a: Any) -> str:
    return (f"<p style='max-width:420px'><b>{html.escape(a.text)}</b></p>"
            f"<p>{html.escape(str(a.object))} · <i>{status_text(a.status)}</i><br>"
            f"valid {fmt_time_long(a.valid_from)} → {fmt_time_long(a.valid_to)}<br>"
            f"recorded {fmt_time_long(a.recorded_at)} from <i>{html.escape(a.source)}</i>"
            f" ({html.escape(method_label(a.method) or a.method)},"
            f" confidence {a.confidence:.2f}) · #{int(a.id)}</p>")


class TimelineCanvas(QGraphicsView):
    """A Gantt-like chart of a supersession chain; redraws to fit its width."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.rows: list[Any] = []
        self.as_of: datetime | None = None
        self.bars: dict[int, QGraphicsRectItem] = {}
        self.setMinimumHeight(160)

    def set_rows(self, rows: list[Any], as_of: datetime | None) -> None:
        self.rows, self.as_of = list(rows), as_of
        self.updateGeometry()
        self.redraw()

    def sizeHint(self) -> QSize:
        return QSize(800, TOP + LANE * max(len(self.rows), 2) + AXIS_H + 12)

    def set_as_of(self, as_of: datetime | None) -> None:
        self.as_of = as_of
        self.redraw()

    def valid_ids(self) -> list[int]:
        """Ids of the bars valid at the as-of instant (now when none), the highlighted ones."""
        t = self.as_of or datetime.now(UTC)
        return [int(a.id) for a in self.rows if self._counts(a) and a.valid_at(t)]

    @staticmethod
    def _counts(a: Any) -> bool:
        return status_text(a.status) not in ("quarantined", "rejected", "retracted") or (
            status_text(a.status) == "retracted" and a.valid_to is not None)

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self.redraw()

    def changeEvent(self, event: Any) -> None:
        from PySide6.QtCore import QEvent

        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the theme changed: redraw in its colours
            self.redraw()

    # --- drawing ------------------------------------------------------------------------------
    def _span(self) -> tuple[datetime, datetime]:
        now = datetime.now(UTC)
        lo = min(a.valid_from for a in self.rows)
        hi = max([a.valid_to or now for a in self.rows] + [a.valid_from for a in self.rows])
        if self.as_of is not None:
            lo, hi = min(lo, self.as_of), max(hi, self.as_of)
        pad = max((hi - lo) * 0.04, timedelta(hours=1))
        return lo - pad, hi + pad

    def redraw(self) -> None:
        scene = self.scene()
        scene.clear()
        self.bars = {}
        width = max(self.viewport().width(), 480)
        if not self.rows:
            t = scene.addText("Pick a subject and relation to see how its value changed over time.")
            t.setDefaultTextColor(hint_color(self.palette()))
            t.setPos(16, 16)
            scene.setSceneRect(QRectF(0, 0, width - 4, 120))
            return
        lo, hi = self._span()
        plot_w = width - LABEL_W - 24
        total = (hi - lo).total_seconds()

        def x(t: datetime) -> float:
            return LABEL_W + (t - lo).total_seconds() / total * plot_w

        bottom = TOP + LANE * len(self.rows)
        self._draw_axis(lo, hi, x, bottom)
        valid = set(self.valid_ids())
        now = datetime.now(UTC)
        ends: dict[int, tuple[QPointF, int]] = {}
        for i, a in enumerate(self.rows):
            y = TOP + i * LANE + (LANE - BAR) / 2
            x0, x1 = x(a.valid_from), x(a.valid_to or now)
            rect = QRectF(x0, y, max(x1 - x0, 3), BAR)
            color = status_color(a.status)
            lit = int(a.id) in valid
            fill = QColor(color)
            fill.setAlpha(235 if lit else 90)
            brush = QBrush(fill)
            pen = QPen(color.darker(140) if lit else QColor(0, 0, 0, 0), 2 if lit else 0)
            pending = status_text(a.status) in ("quarantined", "rejected")
            if pending:  # proposed or refused: hatched, dashed outline, never "valid"
                brush = QBrush(color, Qt.BrushStyle.BDiagPattern)
                pen = QPen(color, 1.2, Qt.PenStyle.DashLine)
            item = scene.addRect(rect, pen, brush)
            item.setToolTip(_tooltip(a))
            item.setData(0, int(a.id))
            self.bars[int(a.id)] = item
            if a.valid_to is None and not pending:
                arrow = QPolygonF([QPointF(x1, y), QPointF(x1 + 9, y + BAR / 2),
                                   QPointF(x1, y + BAR)])
                scene.addPolygon(arrow, QPen(Qt.PenStyle.NoPen), QBrush(fill)).setToolTip(
                    "still valid (open-ended)")
            label = scene.addSimpleText(self._elide(str(a.object if a.object else a.text), 22))
            font = QFont(label.font())
            font.setBold(lit)
            label.setFont(font)
            label.setBrush(self.palette().text().color())
            label.setPos(8, y + (BAR - label.boundingRect().height()) / 2)
            label.setToolTip(_tooltip(a))
            inside = scene.addSimpleText(fmt_time(a.valid_from))
            if rect.width() < inside.boundingRect().width() + 10 or pending:
                scene.removeItem(inside)
            else:
                inside.setBrush(QColor("white") if lit else self.palette().text().color())
                inside.setPos(x0 + 5, y + (BAR - inside.boundingRect().height()) / 2)
                inside.setToolTip(_tooltip(a))
            ends[int(a.id)] = (QPointF(x1, y + BAR / 2), i)
        self._draw_links(ends)
        if self.as_of is not None:
            ax = x(self.as_of)
            accent = accent_color(self.palette())
            pen = QPen(accent, 2, Qt.PenStyle.DashLine)
            # behind the bars and their labels, so the line never crosses their text
            scene.addLine(ax, TOP - 14, ax, bottom + 4, pen).setZValue(-1)
            tag = scene.addSimpleText(f"as of {fmt_time(self.as_of)}")
            tag.setBrush(accent)
            tag.setPos(min(ax + 4, width - tag.boundingRect().width() - 8), 2)
        scene.setSceneRect(QRectF(0, 0, width - 4, bottom + AXIS_H))

    def _draw_links(self, ends: dict[int, tuple[QPointF, int]]) -> None:
        """An arrow from the end of each superseded bar down to the bar that replaced it."""
        pal = self.palette()
        color = blend(pal.text().color(), pal.base().color(), 0.3)
        pen = QPen(color, 1.5)
        for a in self.rows:
            nxt = a.superseded_by
            if nxt is None or int(nxt) not in ends or int(a.id) not in ends:
                continue
            end_pt, _ = ends[int(a.id)]
            succ = self.bars[int(nxt)].rect()
            start = QPointF(end_pt.x(), end_pt.y() + BAR / 2)
            tip = QPointF(succ.left() + 1, succ.top())
            down = tip.y() > start.y()
            path = QPainterPath(start)
            path.lineTo(QPointF(start.x(), (start.y() + tip.y()) / 2))
            path.lineTo(QPointF(tip.x(), (start.y() + tip.y()) / 2))
            path.lineTo(QPointF(tip.x(), tip.y() - (5 if down else -5)))
            self.scene().addPath(path, pen).setToolTip(f"#{int(a.id)} superseded by #{int(nxt)}")
            d = 6 if down else -6
            head = QPolygonF([tip, QPointF(tip.x() - 4, tip.y() - d),
                              QPointF(tip.x() + 4, tip.y() - d)])
            self.scene().addPolygon(head, QPen(Qt.PenStyle.NoPen), QBrush(color))

    def _draw_axis(self, lo: datetime, hi: datetime, x: Any, bottom: float) -> None:
        scene = self.scene()
        grid = QPen(blend(self.palette().base().color(), self.palette().text().color(), 0.25),
                    0.6, Qt.PenStyle.DotLine)
        scene.addLine(LABEL_W, bottom, x(hi), bottom, QPen(self.palette().mid().color()))
        plot_w = x(hi) - LABEL_W
        step = next((s for s in STEPS if (hi - lo) / s <= max(plot_w / 110, 2)), STEPS[-1])
        local = lo.astimezone()
        t = local.replace(minute=0, second=0, microsecond=0)
        if step >= timedelta(days=1):
            t = t.replace(hour=0)
        while t < hi:
            if t >= lo:
                tx = x(t)
                scene.addLine(tx, TOP - 4, tx, bottom, grid)
                fmt = "%d %b %H:%M" if step < timedelta(days=1) else "%d %b %Y"
                label = scene.addSimpleText(t.strftime(fmt))
                label.setBrush(self.palette().text().color())
                label.setPos(tx - label.boundingRect().width() / 2, bottom + 6)
            t += step

    @staticmethod
    def _elide(s: str, n: int) -> str:
        return s if len(s) <= n else s[: n - 1] + "…"
