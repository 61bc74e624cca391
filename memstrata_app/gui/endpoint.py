"""Hosts the local endpoint (memstrata_app.proxy, imported lazily) and its memory switch."""

from __future__ import annotations

import importlib.util
import logging
from typing import Any

from PySide6.QtCore import QObject, Signal

from .worker import EngineClient, Operation

log = logging.getLogger(__name__)
NEEDS = ("memstrata_app.proxy", "starlette", "uvicorn")


def endpoint_class() -> Any:
    """`EndpointServer`, or None when the endpoint package is not installed or not importable."""
    try:
        from memstrata_app.proxy.server import EndpointServer
    except Exception as e:  # missing extra, or a broken optional dependency
        log.info("the local endpoint is not available: %s", e)
        return None
    return EndpointServer


class EndpointController(QObject):
    """Start/stop the endpoint (on the worker, after the embedder is warm) and flip injection."""

    state_changed = Signal()
    error = Signal(str)
    start_failed = Signal(str, object)  # why, in words; the port it tried

    def __init__(self, client: EngineClient, settings: Any, parent: QObject | None = None):
        super().__init__(parent)
        self._client = client
        self._settings = settings
        self.server: Any = None
        self._starting = False
        self.last_error: str | None = None  # why the last start failed
        self.memory_enabled = bool(settings.get("memory_enabled"))

    @property
    def available(self) -> bool:
        """Whether the endpoint package and its dependencies are installed (without importing)."""
        return all(importlib.util.find_spec(m) is not None for m in NEEDS)

    @property
    def running(self) -> bool:
        return self.server is not None and bool(getattr(self.server, "running", False))

    @property
    def starting(self) -> bool:
        return self._starting

    @property
    def died(self) -> bool:
        """Started, and no longer serving (its thread ended without being stopped)."""
        return self.server is not None and not self.running

    @property
    def url(self) -> str | None:
        return getattr(self.server, "url", None) if self.running else None

    def set_memory_enabled(self, on: bool) -> None:
        """The runtime switch: off makes the endpoint a pure pass-through. Saved in settings."""
        self.memory_enabled = bool(on)
        if self.server is not None:
            self.server.memory_enabled = self.memory_enabled
        try:
            self._settings.set("memory_enabled", self.memory_enabled)
            self._settings.save()
        except Exception as e:
            log.warning("could not save memory_enabled: %s", e)
        self.state_changed.emit()

    def start(self) -> None:
        cls = endpoint_class()
        if cls is None:
            self.start_failed.emit("the local endpoint is not installed",
                                   self._settings.get("endpoint_port"))
            self.error.emit("The local endpoint is not installed "
                            "(pip install memstrata-desktop[proxy]).")
            return
        if self.running or self._starting:
            return
        self._starting = True
        port = int(self._settings.get("endpoint_port"))

        def run(engine: Any) -> Any:
            server = cls(engine, self._settings, port=port)
            server.memory_enabled = self.memory_enabled
            server.start()
            return server

        self._client.submit(Operation("start endpoint", run, self._on_started, self._on_failed))

    def _on_started(self, server: Any) -> None:
        self._starting = False
        self.server = server
        self.last_error = None
        log.info("endpoint listening on %s", getattr(server, "url", "?"))
        self.state_changed.emit()

    def _on_failed(self, exc: BaseException) -> None:
        self._starting = False
        port = self._settings.get("endpoint_port")
        self.last_error = str(exc)
        log.warning("the endpoint could not start on port %s: %s", port, exc)
        self.start_failed.emit(str(exc), port)
        self.state_changed.emit()

    def stop(self) -> None:
        """Stop synchronously (it only joins the server's own thread)."""
        server, self.server = self.server, None
        if server is not None:
            try:
                server.stop()
            except Exception:
                log.exception("stopping the endpoint failed")
        self.state_changed.emit()

    def set_running(self, on: bool) -> None:
        if on:
            self.start()
        else:
            self.stop()
