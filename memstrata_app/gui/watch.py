"""Notices writes made outside the worker (the endpoint ingesting turns) so the views refresh."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from .worker import Change, EngineClient

WRITE_SERIES = frozenset({"ingest"})  # the engine records one sample per ingest, on the caller


class ExternalWrites(QObject):
    """Turns ingest samples from other threads into at most one `Change` per `interval_ms`."""

    _sampled = Signal()

    def __init__(self, client: EngineClient, interval_ms: int = 1000,
                 parent: QObject | None = None):
        super().__init__(parent)
        self._client = client
        self._worker_ident: int | None = None
        self._timer = QTimer(self, singleShot=True, interval=interval_ms)
        self._timer.timeout.connect(self._announce)
        self._sampled.connect(self._on_sample)
        self._unsubscribe: Callable[[], None] | None = None

    def watch(self, metrics: Any, worker_ident: int | None, engine: Any = None) -> None:
        """Start listening; samples recorded on `worker_ident` (our own writes) are ignored.
        On a team ledger, other machines' writes (the engine's remote-change hook) count too."""
        self._worker_ident = worker_ident
        unsubscribe = [metrics.subscribe(self._listener)]
        subscribe_remote = getattr(engine, "subscribe_remote", None)
        if subscribe_remote is not None:
            unsubscribe.append(subscribe_remote(lambda _gen: self._sampled.emit()))

        def stop_all() -> None:
            for u in unsubscribe:
                u()

        self._unsubscribe = stop_all

    def _listener(self, series: str, _t: float, _ms: float) -> None:
        if series in WRITE_SERIES and threading.get_ident() != self._worker_ident:
            self._sampled.emit()  # queued: this runs on the writer's thread

    def _on_sample(self) -> None:
        if self._unsubscribe is not None and not self._timer.isActive():
            self._timer.start()

    def _announce(self) -> None:
        self._client.changed.emit(Change(frozenset({"ledger", "review"}), "external write"))

    def stop(self) -> None:
        self._timer.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
