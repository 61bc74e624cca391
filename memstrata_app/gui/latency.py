"""Latency tab (pyqtgraph): a series over time with p50/p95 lines, its histogram, and a summary."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

pg.setConfigOptions(background="w", foreground="#333", antialias=True)
SERIES = ("retrieve", "ingest", "endpoint.total", "endpoint.first_byte", "endpoint.retrieve",
          "endpoint.ingest")
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
SUMMARY_HEADERS = ("Series", "Count", "p50 ms", "p95 ms", "Last ms")
P50_PEN = pg.mkPen("#2e9d6e", width=2, style=pg.QtCore.Qt.PenStyle.DashLine)
P95_PEN = pg.mkPen("#c8553d", width=2, style=pg.QtCore.Qt.PenStyle.DashLine)


class ClockAxis(pg.AxisItem):
    """Bottom axis for unix times, labelled as local wall-clock time."""

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        fmt = "%H:%M:%S" if spacing < 60 else "%H:%M" if spacing < 86400 else "%d %b"
        return [time.strftime(fmt, time.localtime(v)) for v in values]


class MetricsBridge(QObject):
    """Carries metric samples from whichever thread records them to the GUI thread."""

    sample = Signal(str, float, float)  # series, unix time, ms

    def __init__(self, metrics: Any, parent: QObject | None = None):
        super().__init__(parent)
        self.metrics = metrics
        self._unsubscribe = metrics.subscribe(self._on_sample)

    def _on_sample(self, series: str, t: float, ms: float) -> None:
        self.sample.emit(series, t, ms)  # queued to the GUI thread: the bridge lives there

    def close(self) -> None:
        self._unsubscribe()


class LatencyView(QWidget):
    """Live charts over `engine.metrics`; redraws at most ~4 times a second."""

    redrawn = Signal()

    def __init__(self, bridge: MetricsBridge, parent: QWidget | None = None):
        super().__init__(parent)
        self._bridge = bridge
        self.data: dict[str, list[tuple[float, float]]] = {
            s: list(bridge.metrics.samples(s)) for s in SERIES}
        for name in bridge.metrics.series_names():
            self.data.setdefault(name, list(bridge.metrics.samples(name)))
        self.series = QComboBox()
        self.series.setObjectName("latency_series")
        self.series.addItems(list(self.data))
        self.series.currentTextChanged.connect(lambda _: self.redraw())
        self.stats = QLabel()
        self.stats.setObjectName("latency_stats")
        top = QHBoxLayout()
        series_label = QLabel("S&eries:")
        series_label.setBuddy(self.series)
        top.addWidget(series_label)
        top.addWidget(self.series)
        top.addWidget(self.stats, 1)
        self.plot = pg.PlotWidget(axisItems={"bottom": ClockAxis("bottom")})
        self.plot.setLabel("left", "latency (ms)")
        self.plot.setLabel("bottom", "time of the call")
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.points = self.plot.plot([], [], pen=None, symbol="o", symbolSize=6,
                                     symbolBrush=(74, 127, 193, 200), symbolPen=None)
        self.p50 = pg.InfiniteLine(angle=0, pen=P50_PEN, label="p50 {value:.1f} ms",
                                   labelOpts={"position": 0.92, "color": "#2e9d6e",
                                              "anchors": [(1, 1), (1, 1)]})
        self.p95 = pg.InfiniteLine(angle=0, pen=P95_PEN, label="p95 {value:.1f} ms",
                                   labelOpts={"position": 0.92, "color": "#c8553d",
                                              "anchors": [(1, 1), (1, 1)]})
        self.plot.addItem(self.p50)
        self.plot.addItem(self.p95)
        self.hist = pg.PlotWidget()
        self.hist.setLabel("bottom", "latency (ms)")
        self.hist.setLabel("left", "samples")
        self.hist_curve = self.hist.plot([0, 1], [0], stepMode="center", fillLevel=0,
                                         brush=(74, 127, 193, 140), pen=pg.mkPen("#4a7fc1"))
        self.summary = QTableWidget(0, len(SUMMARY_HEADERS))
        self.summary.setObjectName("latency_summary")
        self.summary.setHorizontalHeaderLabels(SUMMARY_HEADERS)
        self.summary.verticalHeader().hide()
        self.summary.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.summary.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)  # the series name
        for col in range(1, len(SUMMARY_HEADERS)):  # the numbers: one even width each
            self.summary.setColumnWidth(col, 100)
        header.setStretchLastSection(False)
        self.summary.setTabKeyNavigation(False)
        self.summary.setAlternatingRowColors(True)  # a row reads across the wide name column
        self.summary.verticalHeader().setDefaultSectionSize(22)
        self.summary.setMinimumHeight(22 * (len(SERIES) + 1) + 8)
        self.summary.setMaximumHeight(22 * (len(SERIES) + 1) + 8)
        for chart in (self.plot, self.hist):
            chart.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # pictures; the summary has the numbers
        charts = QSplitter()
        charts.addWidget(self.plot)
        charts.addWidget(self.hist)
        charts.setSizes([700, 360])
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(charts, 3)
        layout.addWidget(self.summary, 1)
        self._timer = QTimer(self, singleShot=True, interval=250)
        self._timer.timeout.connect(self.redraw)
        bridge.sample.connect(self._on_sample)
        self._apply_colors()
        self.redraw()

    def focus_chain(self) -> list[QWidget]:
        """Its controls in Tab order: the series picker, then the summary table."""
        return [self.series, self.summary]

    def _apply_colors(self) -> None:
        """Chart background, axes and text from the palette (light or dark theme)."""
        from .style import blend

        pal = self.palette()
        base, text = pal.base().color(), pal.text().color()
        for plot in (self.plot, self.hist):
            plot.setBackground(base)
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                axis.setPen(pg.mkPen(blend(text, base, 0.4)))
                axis.setTextPen(pg.mkPen(text))
                axis.label.setDefaultTextColor(text)

    def changeEvent(self, event: Any) -> None:
        from PySide6.QtCore import QEvent

        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_colors()

    def _on_sample(self, series: str, t: float, ms: float) -> None:
        buf = self.data.get(series)
        if buf is None:
            buf = self.data[series] = []
            self.series.addItem(series)
        buf.append((t, ms))
        if len(buf) > 5000:
            del buf[:1000]
        if not self._timer.isActive():
            self._timer.start()

    def redraw(self) -> None:
        name = self.series.currentText()
        samples = self.data.get(name, [])
        if samples:
            arr = np.asarray(samples, dtype=float)
            t, ms = arr[:, 0], arr[:, 1]
            p50, p95 = float(np.percentile(ms, 50)), float(np.percentile(ms, 95))
            self.points.setData(t, ms)
            self.p50.setValue(p50)
            self.p95.setValue(p95)
            self.p50.show()
            self.p95.show()
            counts, edges = np.histogram(ms, bins=min(40, max(5, len(ms) // 4)))
            self.hist_curve.setData(edges, counts)
            self.stats.setText(f"{len(ms)} samples · p50 {p50:.1f} ms · p95 {p95:.1f} ms · "
                               f"last {ms[-1]:.1f} ms")
        else:
            self.points.setData([], [])
            self.hist_curve.setData([0, 1], [0])
            self.p50.hide()
            self.p95.hide()
            self.plot.setXRange(time.time() - 60, time.time())
            self.stats.setText("no samples yet: run a query, ingest something or use the endpoint")
        self._fill_summary()
        self.redrawn.emit()

    def _fill_summary(self) -> None:
        rows = [(n, [ms for _, ms in s]) for n, s in self.data.items() if s]
        self.summary.setRowCount(len(rows))
        for i, (name, ms) in enumerate(rows):
            a = np.asarray(ms)
            cells = (name, str(len(ms)), f"{np.percentile(a, 50):.1f}",
                     f"{np.percentile(a, 95):.1f}", f"{ms[-1]:.1f}")
            for j, c in enumerate(cells):
                item = QTableWidgetItem(c)
                if j:  # numbers line up on the right
                    item.setTextAlignment(RIGHT)
                self.summary.setItem(i, j, item)

    def point_count(self, series: str) -> int:
        return len(self.data.get(series, []))

    def shutdown(self) -> None:
        self._timer.stop()
