"""Latency tab (pyqtgraph): a series over time with p50/p95 lines, its histogram, and a summary;
and "where the time goes": each proxied request as a stacked bar (memory, load, prompt, rest of
the wait for the first token, generation), a model that had to load outlined, with a per-model
table (time to first token, Ollama's load / prompt eval / eval, tokens/s)."""

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
          "endpoint.ingest", "endpoint.memory", "endpoint.upstream_first_token", "ollama.load",
          "ollama.prompt_eval", "ollama.eval", "ollama.tokens_per_s")
SPLIT = "where the time goes (per request)"  # the stacked-bar view, in the picker
SPLIT_PARTS = (  # (label, colour) bottom to top
    ("memory (ingest + retrieve)", "#4a7fc1"), ("model load", "#c8553d"),
    ("prompt eval", "#e0a030"), ("rest of the first-token wait", "#9b6fb5"),
    ("generation", "#2e9d6e"))
SPLIT_HEADERS = ("Model", "Requests", "Memory", "First token", "Load", "Prompt eval",
                 "Generation", "Tokens/s", "Had to load")
SPLIT_BARS = 60  # the most recent requests drawn
LOADED_BRUSH = (200, 85, 61, 230)  # a point whose request had to load its model
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
SUMMARY_HEADERS = ("Series", "Count", "p50 ms", "p95 ms", "Last ms")
MIN_SPAN_S = 60.0  # the time axis shows at least this much around the calls
P50_PEN = pg.mkPen("#2e9d6e", width=2, style=pg.QtCore.Qt.PenStyle.DashLine)
P95_PEN = pg.mkPen("#c8553d", width=2, style=pg.QtCore.Qt.PenStyle.DashLine)


class ClockAxis(pg.AxisItem):
    """Bottom axis for unix times, labelled as local wall-clock time (`plain`: as numbers)."""

    plain = False

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        if self.plain:
            return [f"{v + 1:.0f}" if float(v).is_integer() else "" for v in values]
        fmt = "%H:%M:%S" if spacing < 60 else "%H:%M" if spacing < 86400 else "%d %b"
        out, last = [], None
        for v in values:  # a label says one instant once: a repeat stays blank
            label = time.strftime(fmt, time.localtime(v))
            out.append("" if label == last else label)
            last = label
        return out


class CountAxis(pg.AxisItem):
    """A left axis for counts: whole-number ticks only (no 0.5 of a sample)."""

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:
        levels = super().tickSpacing(minVal, maxVal, size)
        whole = [(float(max(1, round(sp))), 0.0) for sp, _off in levels if sp >= 1]
        return whole or [(1.0, 0.0)]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [f"{v:.0f}" if float(v).is_integer() else "" for v in values]


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
        self.series.addItems([n for n in self.data if ":" not in n])
        self.series.addItem(SPLIT)
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
        self.bars: list[Any] = []  # the stacked bars of the split view
        self.legend = self.plot.addLegend(offset=(10, 5), labelTextSize="8pt")
        self.legend.hide()
        self.hist = pg.PlotWidget(axisItems={"left": CountAxis("left")})
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
        self.summary.setMinimumHeight(22 * 7 + 8)
        self.summary.setMaximumHeight(22 * (len(SERIES) + 1) + 8)
        self.split = QTableWidget(0, len(SPLIT_HEADERS))
        self.split.setObjectName("latency_split")
        self.split.setHorizontalHeaderLabels(SPLIT_HEADERS)
        self.split.verticalHeader().hide()
        self.split.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.split.setTabKeyNavigation(False)
        self.split.setAlternatingRowColors(True)
        self.split.verticalHeader().setDefaultSectionSize(22)
        self.split.setToolTip("p50 per model, in ms (tokens/s: a rate): the first token as the "
                              "endpoint saw it; load, prompt eval and generation as Ollama "
                              "reported them; 'had to load': requests that waited for the "
                              "model to load")
        sh = self.split.horizontalHeader()
        sh.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        sh.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.split.setMinimumHeight(22 * 4 + 8)
        self.split.setMaximumHeight(22 * 8 + 8)
        for chart in (self.plot, self.hist):
            chart.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # pictures; the summary has the numbers
        charts = QSplitter()
        charts.addWidget(self.plot)
        charts.addWidget(self.hist)
        charts.setSizes([700, 360])
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(charts, 3)
        layout.addWidget(self.summary, 2)
        layout.addWidget(self.split, 2)
        self._timer = QTimer(self, singleShot=True, interval=250)
        self._timer.timeout.connect(self.redraw)
        bridge.sample.connect(self._on_sample)
        self._apply_colors()
        self.redraw()

    def focus_chain(self) -> list[QWidget]:
        """Its controls in Tab order: the series picker, then the summary (or split) table."""
        return [self.series, self.summary, self.split]

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
        if hasattr(self, "legend"):
            self.legend.setLabelTextColor(text)
            bg = pg.mkColor(base)
            bg.setAlpha(210)
            self.legend.setBrush(pg.mkBrush(bg))

    def changeEvent(self, event: Any) -> None:
        from PySide6.QtCore import QEvent

        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_colors()

    def _on_sample(self, series: str, t: float, ms: float) -> None:
        buf = self.data.get(series)
        if buf is None:
            buf = self.data[series] = []
            if ":" not in series:  # "<series>:<model>" feed the split table, not the picker
                self.series.addItem(series)
        buf.append((t, ms))
        if len(buf) > 5000:
            del buf[:1000]
        if not self._timer.isActive():
            self._timer.start()

    def redraw(self) -> None:
        name = self.series.currentText()
        split = name == SPLIT
        self.summary.setVisible(not split)
        self.split.setVisible(split)
        self._clear_bars()
        axis = self.plot.getAxis("bottom")
        if isinstance(axis, ClockAxis) and axis.plain != split:
            axis.plain = split
            axis.picture = None
            axis.update()
            if not split:
                self.plot.enableAutoRange()
        if split:
            self._draw_split()
            self._fill_split()
            self.redrawn.emit()
            return
        self.plot.setLabel("left", "tokens/s" if name.endswith("tokens_per_s")
                           else "latency (ms)")
        self.plot.setLabel("bottom", "time of the call")
        self.hist.setLabel("bottom", "latency (ms)")
        samples = self.data.get(name, [])
        if samples:
            arr = np.asarray(samples, dtype=float)
            t, ms = arr[:, 0], arr[:, 1]
            p50, p95 = float(np.percentile(ms, 50)), float(np.percentile(ms, 95))
            loaded = {at for at, _ in self.data.get("ollama.loaded", [])}
            brushes = [pg.mkBrush(LOADED_BRUSH if at in loaded else (74, 127, 193, 200))
                       for at in t]
            self.points.setData(t, ms, symbolBrush=brushes)
            self._fit_view(t, ms)
            self._percentile_lines(p50, p95)
            counts, edges = np.histogram(ms, bins=min(40, max(5, len(ms) // 4)))
            self._histogram(edges, counts)
            plural = "s" if len(ms) != 1 else ""
            self.stats.setText(f"{len(ms)} sample{plural} · p50 {p50:.1f} ms · p95 {p95:.1f} ms · "
                               f"last {ms[-1]:.1f} ms")
        else:
            self.points.setData([], [])
            self._histogram(np.array([0.0, 1.0]), np.array([0]))
            self.p50.hide()
            self.p95.hide()
            self.plot.setXRange(time.time() - 60, time.time())
            self.stats.setText("no samples yet: run a query, ingest something or use the endpoint")
        self._fill_summary()
        self.redrawn.emit()

    def _histogram(self, edges: np.ndarray, counts: np.ndarray) -> None:
        """The histogram's bars; its count axis from 0 to just above the tallest (whole
        numbers: CountAxis)."""
        self.hist_curve.setData(edges, counts)
        self.hist.setYRange(0, max(1, int(counts.max()) if len(counts) else 1) * 1.15, padding=0)

    def _fit_view(self, t: np.ndarray, ms: np.ndarray) -> None:
        """Time spans at least a minute around the calls (one call is not a zoom into a
        fraction of a second), latency from 0 to above the slowest."""
        lo, hi = float(t.min()), float(t.max())
        pad = max(MIN_SPAN_S - (hi - lo), 0.0) / 2 + (hi - lo) * 0.03
        self.plot.setXRange(lo - pad, hi + pad, padding=0)
        self.plot.setYRange(0, max(float(ms.max()), 1e-3) * 1.2, padding=0)

    def _percentile_lines(self, p50: float, p95: float) -> None:
        """The p50 and p95 lines; one line when they meet, labels apart when they are close."""
        self.p50.setValue(p50)
        self.p95.setValue(p95)
        self.p50.show()
        top = self.plot.getViewBox().viewRange()[1][1] or 1.0
        if abs(p95 - p50) <= 1e-9 * max(1.0, abs(p50)):
            self.p95.hide()
            self.p50.label.setFormat("p50 = p95 {value:.1f} ms")
            return
        self.p95.show()
        self.p50.label.setFormat("p50 {value:.1f} ms")
        close = abs(p95 - p50) < 0.08 * top  # labels would overlap: p50's goes to the left
        self.p50.label.setPosition(0.08 if close else 0.92)
        self.p50.label.anchors = [(0, 1), (0, 1)] if close else [(1, 1), (1, 1)]
        self.p50.label.updatePosition()

    # --- where the time goes --------------------------------------------------------------------
    def requests(self) -> list[dict[str, Any]]:
        """The proxied requests, oldest first: per request (the instant its parts share) the
        total, memory, first-token wait and Ollama's parts in ms, and whether it loaded."""
        parts = {"total": "endpoint.total", "memory": "endpoint.memory",
                 "first": "endpoint.upstream_first_token", "load": "ollama.load",
                 "prompt": "ollama.prompt_eval", "eval": "ollama.eval"}
        by_t: dict[float, dict[str, Any]] = {}
        for key, series in parts.items():
            for t, ms in self.data.get(series, []):
                by_t.setdefault(t, {"t": t})[key] = ms
        for t, _ in self.data.get("ollama.loaded", []):
            if t in by_t:
                by_t[t]["loaded"] = True
        return [r for _, r in sorted(by_t.items()) if "memory" in r and "total" in r]

    def _clear_bars(self) -> None:
        for item in self.bars:
            self.plot.removeItem(item)
        self.bars.clear()
        self.legend.clear()
        self.legend.hide()

    def _draw_split(self) -> None:
        reqs = self.requests()[-SPLIT_BARS:]
        self.points.setData([], [])
        self.p50.hide()
        self.p95.hide()
        self.plot.setLabel("left", "time (ms)")
        self.plot.setLabel("bottom", "proxied request (oldest left; outlined red: the model "
                           "had to load)")
        if not reqs:
            self._histogram(np.array([0.0, 1.0]), np.array([0]))
            self.stats.setText("no proxied requests yet: point a tool at the endpoint")
            return
        x = np.arange(len(reqs), dtype=float)
        stacks = []
        for r in reqs:
            load, prompt = r.get("load", 0.0), r.get("prompt", 0.0)
            first = r.get("first", 0.0)
            rest = max(0.0, first - load - prompt)
            gen = max(0.0, r["total"] - r["memory"] - first)
            stacks.append((r["memory"], load, prompt, rest, gen))
        arr = np.asarray(stacks)
        bottom = np.zeros(len(reqs))
        loaded = [bool(r.get("loaded")) for r in reqs]
        outline = [pg.mkPen("#c8553d", width=2.5) if ld else pg.mkPen(None) for ld in loaded]
        for i, (label, color) in enumerate(SPLIT_PARTS):
            bar = pg.BarGraphItem(x=x, y0=bottom.copy(), height=arr[:, i], width=0.7,
                                  brush=color, pen=pg.mkPen(None), name=label)
            self.plot.addItem(bar)
            self.bars.append(bar)
            bottom += arr[:, i]
        frame = pg.BarGraphItem(x=x, y0=np.zeros(len(reqs)), height=bottom, width=0.7,
                                brush=None, pens=outline)
        self.plot.addItem(frame)
        self.bars.append(frame)
        self.legend.show()
        self.plot.setXRange(-0.6, max(len(reqs), 8) - 0.4)
        self.plot.setYRange(0, float(bottom.max()) * 1.25 or 1.0)
        rates = [ms for _, ms in self.data.get("ollama.tokens_per_s", [])]
        if rates:
            lo, hi = min(rates), max(rates)
            if hi - lo < 1.0:  # one steady rate: a readable bin around it
                lo, hi = lo - 2.5, hi + 2.5
            counts, edges = np.histogram(rates, bins=min(20, max(5, len(rates) // 3)),
                                         range=(lo, hi))
            self._histogram(edges, counts)
        else:
            self._histogram(np.array([0.0, 1.0]), np.array([0]))
        self.hist.setLabel("bottom", "tokens/s (generation)")
        last = reqs[-1]
        share = 100 * last["memory"] / last["total"] if last["total"] else 0.0
        self.stats.setText(f"{len(reqs)} requests · last: {last['total']:.0f} ms, memory "
                           f"{last['memory']:.1f} ms ({share:.0f}%), first token "
                           f"{last.get('first', 0):.0f} ms" + (
                               f", load {last['load']:.0f} ms" if last.get("loaded") else ""))

    def _fill_split(self) -> None:
        models: dict[str, dict[str, list[float]]] = {}
        for key, samples in self.data.items():
            base, _, model = key.partition(":")
            if model and samples:
                models.setdefault(model, {})[base] = [ms for _, ms in samples]
        self.split.setRowCount(len(models))
        for i, (model, series) in enumerate(sorted(models.items())):
            def p50(name: str, s: dict[str, list[float]] = series) -> str:
                v = s.get(name)
                return f"{np.percentile(np.asarray(v), 50):.1f}" if v else "—"

            count = max((len(v) for v in series.values()), default=0)
            cells = (model, str(count), p50("endpoint.memory"),
                     p50("endpoint.upstream_first_token"), p50("ollama.load"),
                     p50("ollama.prompt_eval"), p50("ollama.eval"), p50("ollama.tokens_per_s"),
                     str(len(series.get("ollama.loaded", []))))
            for j, c in enumerate(cells):
                item = QTableWidgetItem(c)
                if j:
                    item.setTextAlignment(RIGHT)
                self.split.setItem(i, j, item)

    def _fill_summary(self) -> None:
        rows = [(n, [ms for _, ms in s]) for n, s in self.data.items() if s and ":" not in n]
        self.summary.setRowCount(len(rows))
        for i, (name, ms) in enumerate(rows):
            a = np.asarray(ms)
            label = f"{name} (tokens/s, not ms)" if name.endswith("tokens_per_s") else name
            cells = (label, str(len(ms)), f"{np.percentile(a, 50):.1f}",
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
