"""Main window: the as-of bar over tabbed views, a status bar, and tray-aware closing."""

from __future__ import annotations

import logging
from itertools import pairwise
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QMainWindow,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from . import recent, switching
from .asof import AsOfBar
from .audit import AuditView
from .dialogs import open_settings
from .endpoint import EndpointController
from .icons import badge_icon, strata_icon
from .ingest import IngestView
from .ledger_view import LedgerView
from .menus import build_menus
from .models import ModelsView
from .notices import NoticeArea, ledger_failed
from .query import QueryView
from .review import ReviewView
from .spaces import SpaceSwitcher
from .state import AppState
from .status import ElidedLabel, ledger_location
from .timeline import TimelineView
from .tray import TrayController
from .troubles import Troubles
from .watch import ExternalWrites
from .worker import Change

log = logging.getLogger(__name__)
TABS = ("ledger", "timeline", "review", "query", "ingest", "latency", "audit", "models")
OLLAMA_PROBE_MS = 60_000  # how often the tray's GPU line is refreshed from /api/ps
NARROW = 1100  # below this width the status bar keeps only what matters most


class MainWindow(QMainWindow):
    """Owns the views, the endpoint controller and the tray; `shutdown` stops everything."""

    interactive = Signal()  # the ledger is open and its first page is on screen

    def __init__(self, state: AppState, tray_available: bool | None = None):
        super().__init__()
        self.state = state
        self.client = state.client
        self.setWindowTitle("MemStrata")
        self.setWindowIcon(strata_icon())
        self.resize(1400, 860)
        self.setMinimumSize(640, 480)
        self.asof = AsOfBar(state)
        self.spaces = SpaceSwitcher(state)
        bar = QToolBar("Space")
        bar.setObjectName("space_toolbar")
        bar.setMovable(False)
        self.space_toolbar = bar
        bar.addWidget(self.spaces)
        self.addToolBar(bar)
        self.ledger = LedgerView(state)
        self.timeline = TimelineView(state)
        self.review = ReviewView(state)
        self.query = QueryView(state)
        self.ingest = IngestView(state)
        self.audit = AuditView(state)
        self.models = ModelsView(state.settings)
        self.latency: Any = None  # built on first view: pyqtgraph loads lazily
        self._latency_box = QWidget()
        QVBoxLayout(self._latency_box).setContentsMargins(0, 0, 0, 0)
        self.bridge: Any = None
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        for name, view, title in (
                (TABS[0], self.ledger, "Ledger"), (TABS[1], self.timeline, "Timeline"),
                (TABS[2], self.review, "Review"), (TABS[3], self.query, "Query"),
                (TABS[4], self.ingest, "Ingest"), (TABS[5], self._latency_box, "Latency"),
                (TABS[6], self.audit, "Audit"), (TABS[7], self.models, "Models")):
            view.setObjectName(f"view_{name}")
            self.tabs.addTab(view, title)
        self.tabs.setTabToolTip(TABS.index("audit"), "Why did the assistant see this? The "
                                "endpoint's log of served requests (Ctrl+7)")
        self.tabs.setTabToolTip(TABS.index("models"), "Ollama: installed and loaded models, "
                                "GPU or CPU, pull, try (Ctrl+8)")
        self.tabs.currentChanged.connect(self._on_tab)
        central = QWidget()
        v = QVBoxLayout(central)
        v.setContentsMargins(0, 0, 0, 0)
        v.setSpacing(0)
        v.addWidget(self.asof)
        self.read_only_banner = QLabel()
        self.read_only_banner.setObjectName("read_only_banner")
        self.read_only_banner.setWordWrap(True)
        self.read_only_banner.setStyleSheet("background: #fff3cd; color: #4d3a02; padding: 6px;"
                                            " border-bottom: 1px solid #e0c36a;")
        self.read_only_banner.hide()
        v.addWidget(self.read_only_banner)
        self.notices = NoticeArea()  # what went wrong and what to do (troubles.py)
        v.addWidget(self.notices)
        v.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        self.engine_label, self.endpoint_label = QLabel("Opening the ledger…"), QLabel()
        self.stats_label = QLabel()
        self.stats_label.setObjectName("stats_label")
        self._stats_full = self._stats_short = ""
        self.location_label = ElidedLabel()
        self.location_label.setObjectName("ledger_location")
        self.statusBar().addWidget(self.stats_label)
        self.statusBar().addWidget(self.location_label, 1)
        self.statusBar().addPermanentWidget(self.endpoint_label)
        self.statusBar().addPermanentWidget(self.engine_label)

        self.watcher = ExternalWrites(self.client, parent=self)
        self.endpoint = EndpointController(self.client, state.settings, self)
        self.endpoint.state_changed.connect(self.show_endpoint_state)
        self.endpoint.error.connect(self._show_error)
        self.troubles = Troubles(self)
        self.tray = TrayController(self.endpoint, tray_available, self)
        self.tray.open_requested.connect(self.bring_to_front)
        self.tray.quit_requested.connect(self.quit)
        self.models.status_changed.connect(self._on_ollama_status)
        self._told_about_ollama = False
        self.models.settings_requested.connect(self.open_settings)
        self._ollama_timer = QTimer(self, interval=OLLAMA_PROBE_MS)
        self._ollama_timer.setObjectName("ollama_probe_timer")
        self._ollama_timer.timeout.connect(self._probe_ollama)
        self.data_dialog: Any = None
        self.connect_dialog: Any = None
        self._restart_endpoint = False  # a ledger switch stopped it: start it on the new one
        build_menus(self)
        self._chain_focus()
        self._quitting = False
        self._told_about_tray = False
        self._interactive = False
        self._background_started = False
        self._warm_submitted = False  # the first ledger's embedder load is queued
        self.is_shut_down = False

        state.show_view.connect(self.show_view)
        state.review_count.connect(self._on_review_count)
        self.client.ready.connect(self._on_ready)
        self.client.warm.connect(lambda: self.engine_label.setText("Embedder ready"))
        self.client.error.connect(self._show_error)
        self.client.open_failed.connect(self._on_open_failed)
        self.client.reopen_failed.connect(self._on_switch_failed)
        self.client.changed.connect(self._on_changed)
        self.ledger.model.loaded.connect(self._mark_interactive)
        self.show_endpoint_state()
        if self.client.engine is not None:  # the worker beat us to it
            self._on_ready()

    def focus_chain(self) -> list[QWidget]:
        """The window's Tab order: the space, the as-of bar, the tabs, then the current view's
        controls (widgets of hidden tabs are skipped)."""
        views: list[Any] = [self.ledger, self.timeline, self.review, self.query, self.ingest]
        if self.latency is not None:
            views.append(self.latency)
        views += [self.audit, self.models]
        banners = [b for banner in self.notices.banners.values()
                   for b in (*banner.buttons.values(), banner.dismiss_button)]
        return [self.spaces.combo, self.asof.slider, self.asof.edit, self.asof.now_button,
                self.asof.valid_button, self.asof.known_button,
                self.tabs.tabBar(), *(w for v in views for w in v.focus_chain()), *banners]

    def _chain_focus(self) -> None:
        chain = self.focus_chain()
        for a, b in pairwise(chain):
            QWidget.setTabOrder(a, b)

    def refresh_focus_chain(self) -> None:
        """A banner came or went: its buttons follow the views in the Tab order."""
        self._chain_focus()

    # --- startup ------------------------------------------------------------------------------
    def _on_ready(self) -> None:
        reason = getattr(self.client.engine, "read_only_reason", None)
        if reason:
            self._show_read_only(reason)
        elif self.state.read_only:  # switched from a read-only ledger to a writable one
            self._show_writable()
        self.notices.dismiss("ledger")
        self.engine_label.setText("Loading the embedder…")
        self._show_location()
        if self.ledger_file():
            recent.remember(self.ledger_file())
        self.spaces.refresh()
        self.ledger.start()
        if not self._background_started:
            # the embedder loads on the worker right after the ledger's first page, before
            # the other tabs' pages (the worker runs them in order)
            self._warm_submitted = True
            self.client.warm_up()
        self.timeline.start()
        self.review.reload()
        self.audit.reload()
        self.asof.refresh_range()
        self._refresh_stats()
        self.watcher.watch(self.client.engine.metrics, self.client.worker_ident,
                           self.client.engine)
        if self.tabs.currentIndex() == TABS.index("latency"):
            self._build_latency()
        if self._background_started:  # a switch to another ledger: load its embedder
            self.client.warm_up()
            if self._restart_endpoint:
                self._restart_endpoint = False
                self.endpoint.start()
            self.statusBar().showMessage(f"Opened {ledger_location(self.client.engine)}", 8000)

    def ledger_file(self) -> str:
        """The ledger file in use ("" for a team ledger or none)."""
        return switching.ledger_file(self)

    def choose_ledger(self) -> None:
        """File → Open ledger…: pick a ledger file and switch to it."""
        switching.choose_ledger(self)

    def switch_ledger(self, path: str | Path) -> None:
        """Open the ledger at `path` in place of this one (switching.py)."""
        switching.switch_ledger(self, path)

    def _on_switch_failed(self, _exc: BaseException) -> None:
        """The other ledger did not open: this one stays, with what served it (the banner says
        why, troubles.py)."""
        self.engine_label.setText("Embedder ready" if self.client.is_warm else "")
        self.watcher.watch(self.client.engine.metrics, self.client.worker_ident,
                           self.client.engine)
        if self._restart_endpoint:
            self._restart_endpoint = False
            self.endpoint.start()

    def _show_location(self) -> None:
        """Which ledger the app is on, in the status bar (elided; the full text in a tooltip)."""
        loc = ledger_location(self.client.engine)
        self.location_label.set_full_text(loc)
        self.location_label.setToolTip(f"Ledger: {loc}" if loc else "")

    def _show_read_only(self, reason: str) -> None:
        """Browse and query only: say so above the tabs and turn the writing controls off."""
        self.state.read_only = reason
        self.read_only_banner.setText(
            f"<b>Read-only ledger</b> ({reason}). You can browse, replay and query it; "
            "ingest, import, review, forget and re-embed are off. To write, make the ledger "
            "file and its folder writable and open it again (File → Open ledger…).")
        self.read_only_banner.show()
        self.setWindowTitle("MemStrata (read-only)")
        self.ingest.setEnabled(False)
        for act in self.write_actions:
            act.setEnabled(False)
        self.review.reload()  # its buttons follow state.read_only

    def _show_writable(self) -> None:
        self.state.read_only = None
        self.read_only_banner.hide()
        self.setWindowTitle("MemStrata")
        self.ingest.setEnabled(True)
        for act in self.write_actions:
            act.setEnabled(True)

    def _mark_interactive(self) -> None:
        if not self._interactive:
            self._interactive = True
            self.interactive.emit()
            self._start_background()

    def _start_background(self) -> None:
        """After the first page is on screen: load the embedder, then start the endpoint."""
        if self._background_started or self.is_shut_down:
            return
        self._background_started = True
        if not self._warm_submitted:
            self.client.warm_up()
        self.client.call("rejudge", lambda e: e.rejudge_on_upgrade(), self._on_rejudged,
                         lambda _e: None)
        self._probe_ollama()  # the Models tab and the tray's GPU line
        self._ollama_timer.start()
        if self.state.settings.get("start_endpoint") and self.endpoint.available:
            self.endpoint.start()

    def _on_rejudged(self, found: Any) -> None:
        """A judge new to this ledger read it: say what it proposes (the Review tab)."""
        if found:
            n = len(found)
            self.statusBar().showMessage(
                f"The update judge read this ledger and proposes {n} retirement"
                f"{'s' if n != 1 else ''} for review (Review tab); nothing was retired.", 15000)
            self.review.reload()

    def _refresh_stats(self) -> None:
        def shown(st: dict[str, Any]) -> None:
            by = st.get("by_status", {})
            total = int(st.get("total", 0))
            # every status with rows, so the parts add up to the total
            counted = [f"{int(n):,} {name}" for name, n in by.items() if n]
            rows = f"{total:,} rows" + (f" ({', '.join(counted)})" if counted else "")
            parts = [rows, f"{st.get('keys', 0):,} keys", str(st.get("embedder", ""))]
            self._stats_full = " · ".join(p for p in parts if p)
            self._stats_short = rows  # a narrow window: the counts (they add up), no more
            self._fit_status()
            self.stats_label.setToolTip("Rows in the whole ledger (every space) by status; "
                                        + self._stats_full)

        self.client.call("stats", lambda e: e.stats(), shown, failure=lambda _e: None)

    def _on_changed(self, change: Change) -> None:
        if change.touches("ledger", "review"):
            self._refresh_stats()

    # --- views --------------------------------------------------------------------------------
    def show_view(self, name: str) -> None:
        self.tabs.setCurrentIndex(TABS.index(name))

    def _on_ollama_status(self, st: Any) -> None:
        """The tray's GPU line; a banner when Ollama is needed and not running; once, in the
        status bar, what the first probe found missing."""
        self.tray.set_ollama(st.gpu_summary())
        self.troubles.ollama_status(st)
        if self._told_about_ollama or self.statusBar().currentMessage():
            return  # said once, and never over another message
        self._told_about_ollama = True
        if not st.reachable:
            self.statusBar().showMessage(
                f"Ollama is not running at {st.url}: the app works on its embedded defaults; "
                "the Models tab (Ctrl+8) says how to install it", 15000)
            return
        wanted = self.state.settings.get("extraction_model")
        if wanted and not st.installed(wanted):
            self.statusBar().showMessage(
                f"The extraction model {wanted} is not installed in Ollama: pull it in the "
                "Models tab (Ctrl+8)", 15000)

    def open_settings(self) -> None:
        open_settings(self)
        self.models.refresh()

    def connect_tool(self) -> Any:
        """Memory → Connect a tool…: addresses, snippets, a test request (one window)."""
        from .connect_dialog import ConnectDialog

        if self.connect_dialog is None:
            self.connect_dialog = ConnectDialog(self)
            self.connect_dialog.finished.connect(self._connect_closed)
        self.connect_dialog.show()
        self.connect_dialog.raise_()
        return self.connect_dialog

    def _connect_closed(self, _r: int) -> None:
        if self.connect_dialog is not None:
            self.connect_dialog.deleteLater()
            self.connect_dialog = None

    def _probe_ollama(self) -> None:
        if not self.is_shut_down:
            self.models.refresh()  # one probe at a time: a call during one is dropped
            self.troubles.check_endpoint()

    def _on_tab(self, index: int) -> None:
        if TABS[index] == "models":
            self.models.refresh()
        if TABS[index] == "latency" and self.latency is None and self.client.engine is not None:
            self._build_latency()

    def _build_latency(self) -> None:
        from .latency import LatencyView, MetricsBridge

        self.bridge = MetricsBridge(self.client.engine.metrics, self)
        self.latency = LatencyView(self.bridge)
        self.latency.setObjectName("latency_view")
        box = self._latency_box.layout()
        assert box is not None  # set in __init__
        box.addWidget(self.latency)
        self._chain_focus()

    def _on_review_count(self, n: int) -> None:
        i = TABS.index("review")
        self.tabs.setTabText(i, f"Review ({n})" if n else "Review")
        self.tabs.setTabIcon(i, badge_icon(n))
        self.tabs.setTabToolTip(i, f"{n} extraction{'s' if n != 1 else ''} awaiting review")
        self.tray.set_review_count(n)

    def show_endpoint_state(self) -> None:
        """The status bar's endpoint part: its address, or why it is not running."""
        ep = self.endpoint
        mem = "memory on" if ep.memory_enabled else "memory OFF"
        problem = getattr(getattr(self, "troubles", None), "endpoint_problem", None)
        if not ep.available:
            self.endpoint_label.setText(f"Endpoint not installed · {mem}")
        else:
            narrow = self.width() < NARROW  # the status-bar counts need the room
            stopped = (f"Endpoint: {problem}" if narrow else f"Endpoint stopped: {problem}"
                       ) if problem else "Endpoint stopped"
            where = (("Endpoint on" if narrow else f"Endpoint {ep.url}") if ep.running
                     else stopped)
            self.endpoint_label.setText(f"{where} · {mem}")
            self.endpoint_label.setToolTip(
                f"Endpoint {ep.url}" if ep.running else
                f"{stopped}. {ep.last_error or ''}".strip() if problem else "")
        self.setWindowIcon(strata_icon(ep.memory_enabled, ep.running if ep.available else None))

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        if hasattr(self, "notices"):
            self.notices.fit(self.height())
        self.engine_label.setVisible(self.width() >= NARROW)
        if hasattr(self, "endpoint"):
            self.show_endpoint_state()
        self._fit_status()

    def _fit_status(self) -> None:
        if not hasattr(self, "_stats_full"):
            return
        self.stats_label.setText(self._stats_short if self.width() < NARROW
                                 else self._stats_full)

    def _on_open_failed(self, message: str) -> None:
        """Say what happened and what to do; the window stays up so Settings and File → Open
        ledger… can be reached."""
        from PySide6.QtWidgets import QMessageBox

        self.engine_label.setText("Ledger not open")
        exc = self.client.open_error or RuntimeError(message)
        self.troubles.show(ledger_failed(exc))
        self.statusBar().showMessage(message)
        advice = ("Close other programs using this ledger (another MemStrata, `memstrata "
                  "serve`), or open another file with File → Open ledger…" if "locked" in message
                  else "Open another file with File → Open ledger… (or start with --db).")
        box = QMessageBox(QMessageBox.Icon.Critical, "MemStrata", f"{message}\n\n{advice}",
                          parent=self)
        box.setObjectName("open_failed_box")
        box.open()

    def _show_error(self, message: str) -> None:
        log.warning("%s", message)
        if self.client.engine is not None:
            self._start_background()
        self.statusBar().showMessage(message, 10000)

    def focus_space(self) -> None:
        self.space_toolbar.show()
        combo = getattr(self.spaces, "combo", self.spaces)
        combo.setFocus()

    def focus_search(self) -> None:
        self.show_view("ledger")
        self.ledger.search.setFocus()
        self.ledger.search.selectAll()

    def import_statements(self) -> None:
        self.show_view("ingest")
        self.ingest._pick_file()

    # --- closing ------------------------------------------------------------------------------
    def bring_to_front(self) -> None:
        self.show()
        if QApplication.platformName() != "offscreen":  # it has no window stack to raise in
            self.raise_()
        self.activateWindow()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.tray.available and not self._quitting:
            event.ignore()
            self.hide()
            if not self._told_about_tray:
                self._told_about_tray = True
                self.tray.notify("MemStrata keeps running",
                                 "Memory stays available to your tools. Use the tray icon to "
                                 "open the window again or to quit.")
            return
        self.shutdown()
        event.accept()
        app = QApplication.instance()
        if app is not None and not self.tray.available:
            app.quit()

    def quit(self) -> None:
        self._quitting = True
        self.close()
        app = QApplication.instance()
        if app is not None:
            app.quit()

    def shutdown(self) -> None:
        """Stop timers, the endpoint, the metrics feed and the worker thread (idempotent)."""
        if self.is_shut_down:
            return
        self.is_shut_down = True
        self._ollama_timer.stop()
        for view in (self.ledger, self.timeline, self.asof, self.latency, self.models):
            if view is not None:
                view.shutdown()
        self.endpoint.stop()
        self.watcher.stop()
        if self.bridge is not None:
            self.bridge.close()
        self.tray.hide()
        self.client.shutdown()
