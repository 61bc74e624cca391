"""Short-lived background threads whose results come back to the GUI thread by queued signal
(the Models tab's Ollama calls: a slow Ollama must never hold up the window or the ledger)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot


class Background(QObject):
    """Runs functions on daemon threads and calls back on the GUI thread."""

    _finished = Signal(object, object, object)  # callback, result, error

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._threads: list[threading.Thread] = []
        self.closed = False
        self._finished.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    def run(self, fn: Callable[[], Any], done: Callable[[Any, BaseException | None], None]
            ) -> None:
        if self.closed:
            return

        def work() -> None:
            try:
                result, error = fn(), None
            except BaseException as e:  # handed to `done` on the GUI thread
                result, error = None, e
            if not self.closed:
                self._finished.emit(done, result, error)

        t = threading.Thread(target=work, name="memstrata-ollama", daemon=True)
        self._threads = [x for x in self._threads if x.is_alive()] + [t]
        t.start()

    def report(self, callback: Callable[[Any, Any], None], value: Any) -> None:
        """From a background thread: call `callback(value, None)` on the GUI thread."""
        if not self.closed:
            self._finished.emit(callback, value, None)

    @Slot(object, object, object)
    def _deliver(self, done: Any, result: Any, error: Any) -> None:
        if not self.closed:
            done(result, error)

    @property
    def busy(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    def close(self, timeout: float = 2.0) -> None:
        """No more callbacks; wait up to `timeout` s in all for the calls in flight (daemon
        threads: one stuck on a slow Ollama does not hold the app's exit)."""
        import time

        self.closed = True
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
