"""System tray: the icon shows memory on/off and endpoint up/down; its menu flips them."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from .endpoint import EndpointController
from .icons import strata_icon


class TrayController(QObject):
    """Owns the tray icon and its menu; `available` is False where the platform has no tray."""

    open_requested = Signal()
    quit_requested = Signal()

    def __init__(self, endpoint: EndpointController, available: bool | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.endpoint = endpoint
        self.review_count = 0
        self.ollama_line = ""  # where the loaded models run, from the last /api/ps
        self.available = (QSystemTrayIcon.isSystemTrayAvailable() if available is None
                          else available)
        self.menu = QMenu()
        self.memory_action = QAction("Memory injection", self.menu, checkable=True)
        self.memory_action.toggled.connect(self._on_memory)
        self.endpoint_action = QAction("Local endpoint", self.menu, checkable=True)
        self.endpoint_action.toggled.connect(self._on_endpoint)
        self.open_action = QAction("Open MemStrata", self.menu)
        self.open_action.triggered.connect(self.open_requested)
        self.quit_action = QAction("Quit", self.menu)
        self.quit_action.triggered.connect(self.quit_requested)
        self.menu.addAction(self.open_action)
        self.menu.addSeparator()
        self.menu.addAction(self.memory_action)
        self.menu.addAction(self.endpoint_action)
        self.menu.addSeparator()
        self.menu.addAction(self.quit_action)
        self.icon = QSystemTrayIcon(self)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._on_activated)
        endpoint.state_changed.connect(self.refresh)
        self.refresh()
        if self.available and QSystemTrayIcon.isSystemTrayAvailable():
            self.icon.show()

    def refresh(self) -> None:
        """Sync the icon, tooltip and check marks with the endpoint's state."""
        ep = self.endpoint
        up: bool | None = ep.running if ep.available else None
        checks = ((self.memory_action, ep.memory_enabled), (self.endpoint_action, ep.running))
        for action, on in checks:
            action.blockSignals(True)
            action.setChecked(on)
            action.blockSignals(False)
        self.endpoint_action.setEnabled(ep.available)
        self.icon.setIcon(strata_icon(ep.memory_enabled, up))
        mem = "memory on" if ep.memory_enabled else "memory off (pass-through)"
        where = f"endpoint {ep.url}" if ep.running else (
            "endpoint stopped" if ep.available else "endpoint not installed")
        review = f", {self.review_count} awaiting review" if self.review_count else ""
        ollama = f"\n{self.ollama_line}" if self.ollama_line else ""
        self.icon.setToolTip(f"MemStrata — {mem}, {where}{review}{ollama}")

    def set_ollama(self, line: str) -> None:
        """Say in the tooltip whether the GPU is in use ("Ollama: m on GPU (100%)", "… on
        CPU", "Ollama not reachable at …")."""
        self.ollama_line = line
        self.refresh()

    def set_review_count(self, n: int) -> None:
        self.review_count = n
        self.refresh()

    def _on_memory(self, on: bool) -> None:
        self.endpoint.set_memory_enabled(on)

    def _on_endpoint(self, on: bool) -> None:
        self.endpoint.set_running(on)

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger,
                      QSystemTrayIcon.ActivationReason.DoubleClick):
            self.open_requested.emit()

    def notify(self, title: str, message: str) -> None:
        if self.available and self.icon.isVisible():
            self.icon.showMessage(title, message, strata_icon(self.endpoint.memory_enabled), 6000)

    def hide(self) -> None:
        self.icon.hide()
