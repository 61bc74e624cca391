"""One worker thread owns the engine: requests go in by queued signal, results return by signal.

Every engine call the GUI makes is an `Operation`: a function of the engine plus `success` and
`failure` callbacks that run on the GUI thread. Writes announce a `Change` afterwards so every
view can decide whether to refresh.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

log = logging.getLogger(__name__)

EngineFn = Callable[[Any], Any]  # takes the MemoryEngine


@dataclass(frozen=True)
class Change:
    """What a write touched: views refresh when a kind they show changed."""

    kinds: frozenset[str]  # of "ledger" | "review" | "embedder"
    op: str

    def touches(self, *kinds: str) -> bool:
        return not self.kinds.isdisjoint(kinds)


@dataclass(eq=False)
class Operation:
    """One engine call: `fn(engine)` on the worker, then `success(result)` or `failure(exc)`."""

    name: str
    fn: EngineFn
    success: Callable[[Any], None] | None = None
    failure: Callable[[BaseException], None] | None = None
    writes: tuple[str, ...] = ()  # Change kinds announced after success
    progress: Callable[[int, int], None] | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    report: Callable[[int, int], None] | None = None  # set by the client; worker-thread safe


class _Worker(QObject):
    """Lives in the worker thread; runs operations in the order they arrive."""

    opened = Signal(object)  # the engine
    open_failed = Signal(object)  # the exception
    done = Signal(object, object)  # operation, result
    failed = Signal(object, object)  # operation, exception
    progressed = Signal(object, int, int)  # operation, done, total
    closed = Signal()

    reopened = Signal(object, object)  # the new engine, the old one (closed)
    prepare_failed = Signal(str)  # an `after_open` function failed: what happened
    reopen_failed = Signal(object)  # the exception; the engine in use stays open

    def __init__(self, opener: Callable[[], Any]):
        super().__init__()
        self._opener = opener
        self.engine: Any = None
        self.ident: int | None = None
        self.after_open: list[EngineFn] = []  # run on each engine opened (settings in force)

    def _prepared(self, engine: Any) -> Any:
        for fn in self.after_open:
            try:
                fn(engine)
            except Exception as e:
                log.exception("preparing the ledger failed")
                self.prepare_failed.emit(f"{getattr(fn, '__name__', 'setting up')} failed: {e}")
        return engine

    @Slot()
    def open(self) -> None:
        self.ident = threading.get_ident()
        try:
            self.engine = self._prepared(self._opener())
        except BaseException as e:
            log.exception("could not open the ledger")
            self.open_failed.emit(e)
            return
        self.opened.emit(self.engine)

    @Slot(object)
    def reopen(self, opener: Callable[[], Any]) -> None:
        """Open another ledger; only once it is open is the one in use closed (a file that
        cannot be opened leaves the app where it was)."""
        try:
            new = self._prepared(opener())
        except BaseException as e:
            log.warning("could not open the other ledger: %s", e)
            self.reopen_failed.emit(e)
            return
        old, self.engine = self.engine, new
        self._opener = opener
        if old is not None:
            try:
                old.close()
            except Exception:
                log.exception("closing the previous ledger failed")
        self.reopened.emit(new, old)

    @Slot(object)
    def run(self, op: Operation) -> None:
        if self.engine is None:
            self.failed.emit(op, RuntimeError("the ledger is not open"))
            return
        if op.cancel.is_set():  # cancelled while queued (e.g. the app is closing)
            self.failed.emit(op, _cancelled(op))
            return
        last = [0.0]

        def report(done: int, total: int) -> None:  # at most ~20 updates a second
            now = time.monotonic()
            if done >= total or now - last[0] >= 0.05:
                last[0] = now
                self.progressed.emit(op, done, total)

        op.report = report
        try:
            result = op.fn(self.engine)
        except BaseException as e:
            log.debug("operation %s failed: %s", op.name, e)
            self.failed.emit(op, e)
            return
        self.done.emit(op, result)

    @Slot()
    def close(self) -> None:
        if self.engine is not None:
            try:
                self.engine.close()
            except Exception:
                log.exception("closing the ledger failed")
            self.engine = None
        self.closed.emit()
        QThread.currentThread().quit()  # after every operation queued before the close


class EngineClient(QObject):
    """The GUI's handle on the engine: `submit` operations, listen to `changed`."""

    ready = Signal()  # the ledger is open (the embedder may still be loading); again after
    # a switch to another ledger (`reopen`)
    warm = Signal()  # the embedder is loaded
    warm_failed = Signal(object)  # the embedder could not load: the exception
    error = Signal(str)  # a failure nobody handled, for the status bar
    open_failed = Signal(str)  # the ledger could not be opened: what happened
    reopen_failed = Signal(object)  # another ledger could not be opened (the exception)
    store_failed = Signal(object)  # a ledger failure (locked, damaged, read-only), handled or not
    changed = Signal(object)  # Change
    busy = Signal(bool)
    _run = Signal(object)
    _close = Signal()
    _reopen = Signal(object)

    def __init__(self, opener: Callable[[], Any], parent: QObject | None = None,
                 open_path: Callable[[Path | str], Any] | None = None,
                 after_open: Sequence[EngineFn] = ()):
        super().__init__(parent)
        self.engine: Any = None  # for the endpoint and metrics only; engine calls go via submit
        self.is_warm = False
        self.open_error: BaseException | None = None  # why the ledger could not be opened
        self.switching = False  # a switch to another ledger is under way
        # how to open another ledger (File → Open ledger…): the same embedder and options
        self.open_path = open_path or _default_open_path
        self._closing = False
        self._pending = 0
        self._live: set[Operation] = set()
        self._thread = QThread()
        self._thread.setObjectName("memstrata-engine")
        self._worker = _Worker(opener)
        self._worker.after_open.extend(after_open)  # before the thread starts: the first open
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.open)
        self._run.connect(self._worker.run)
        self._close.connect(self._worker.close)
        self._reopen.connect(self._worker.reopen)
        self._worker.reopened.connect(self._on_reopened)
        self._worker.prepare_failed.connect(self.error)
        self._worker.reopen_failed.connect(self._on_reopen_failed)
        self._worker.opened.connect(self._on_opened)
        self._worker.open_failed.connect(self._on_open_failed)
        self._worker.done.connect(self._on_done)
        self._worker.failed.connect(self._on_failed)
        self._worker.progressed.connect(self._on_progress)
        self._thread.start()

    @classmethod
    def for_path(cls, path: Path | str, embedder: Any = "local",
                 after_open: Sequence[EngineFn] = (), **kw: Any) -> EngineClient:
        """A client whose worker opens the ledger at `path` (and, on File → Open ledger…,
        others the same way); `after_open` runs on each ledger opened."""

        def open_path(where: Path | str) -> Any:
            from memstrata_app.engine import MemoryEngine

            return MemoryEngine.open(where, embedder=embedder, **kw)

        return cls(lambda: open_path(path), open_path=open_path, after_open=after_open)

    def reopen(self, path: Path | str) -> None:
        """Switch to the ledger at `path` on the worker: `ready` fires again once it is open
        (the old one is closed then), `reopen_failed` if it cannot be opened."""
        if self._closing:
            return
        self.switching = True
        self._reopen.emit(lambda: self.open_path(path))

    # --- submitting ---------------------------------------------------------------------------
    def submit(self, op: Operation) -> Operation:
        """Queue `op` on the worker; returns it (hold it to cancel). Ignored once shut down."""
        if self._closing:
            log.debug("dropping %s: the engine worker is shut down", op.name)
            return op
        self._live.add(op)
        self._pending += 1
        if self._pending == 1:
            self.busy.emit(True)
        self._run.emit(op)
        return op

    def call(self, name: str, fn: EngineFn, success: Callable[[Any], None] | None = None,
             failure: Callable[[BaseException], None] | None = None,
             writes: tuple[str, ...] = ()) -> Operation:
        return self.submit(Operation(name, fn, success, failure, writes))

    def warm_up(self) -> None:
        """Load the embedder on the worker; `warm` fires when it is ready, `warm_failed`
        (with the exception) when it cannot load. The secret detector loads next, after
        `warm` (a query does not wait for it; the first write or request that redacts
        would load it anyway)."""

        def done(_: Any) -> None:
            self.is_warm = True
            self.warm.emit()
            self.call("warm up the secret detector", lambda e: e.warm_secrets())

        def failed(exc: BaseException) -> None:
            log.warning("the embedder could not load: %s", exc)
            self.warm_failed.emit(exc)

        self.call("warm_up", lambda e: e.warm_up(secrets=False), done, failed)

    @property
    def pending(self) -> int:
        return self._pending

    @property
    def worker_ident(self) -> int | None:
        """The worker thread's `threading.get_ident()` (set once the worker has started)."""
        return self._worker.ident

    # --- results (GUI thread) --------------------------------------------------------------
    @Slot(object)
    def _on_opened(self, engine: Any) -> None:
        self.engine = engine
        self.ready.emit()

    @Slot(object)
    def _on_open_failed(self, exc: BaseException) -> None:
        self.open_error = exc
        self.open_failed.emit(f"Could not open the ledger: {exc}")

    @Slot(object, object)
    def _on_reopened(self, engine: Any, _old: Any) -> None:
        self.switching = False
        if self._closing:
            return
        self.engine = engine
        self.open_error = None
        self.is_warm = False  # the new engine's embedder loads next (the window asks)
        self.ready.emit()

    @Slot(object)
    def _on_reopen_failed(self, exc: BaseException) -> None:
        self.switching = False
        if not self._closing:
            self.reopen_failed.emit(exc)

    def _finish(self, op: Operation) -> None:
        self._live.discard(op)
        self._pending -= 1
        if self._pending == 0:
            self.busy.emit(False)

    @Slot(object, object)
    def _on_done(self, op: Operation, result: Any) -> None:
        self._finish(op)
        if self._closing:  # late results after shutdown: the views are going away
            return
        if op.success is not None:
            try:
                op.success(result)
            except Exception:
                log.exception("handling the result of %s failed", op.name)
        if op.writes:
            self.changed.emit(Change(frozenset(op.writes), op.name))

    @Slot(object, object)
    def _on_failed(self, op: Operation, exc: BaseException) -> None:
        self._finish(op)
        if self._closing:
            return
        if op.failure is not None:
            op.failure(exc)
        else:
            self.error.emit(f"{op.name} failed: {exc}")
        if _is_store_error(exc):  # locked, damaged, read-only: the window says what to do
            self.store_failed.emit(exc)
        if _is_cancel(exc) and op.writes:  # a cancelled bulk job may have written some items
            self.changed.emit(Change(frozenset(op.writes), op.name))

    @Slot(object, int, int)
    def _on_progress(self, op: Operation, done: int, total: int) -> None:
        if op.progress is not None:
            op.progress(done, total)

    # --- shutdown -----------------------------------------------------------------------------
    def shutdown(self, timeout_ms: int = 15000) -> None:
        """Cancel running jobs, close the ledger on its own thread, stop the thread."""
        self._closing = True
        if not self._thread.isRunning():
            return
        for op in list(self._live):
            op.cancel.set()
        self._close.emit()
        if not self._thread.wait(timeout_ms):
            log.error("the engine worker did not stop in time")
        self.engine = None


def _cancelled(op: Operation) -> BaseException:
    from memstrata_app.engine import Cancelled

    return Cancelled(f"{op.name} was cancelled before it started")


def _is_cancel(exc: BaseException) -> bool:
    return type(exc).__name__ == "Cancelled"


def _is_store_error(exc: BaseException) -> bool:
    return type(exc).__name__ in ("StoreLocked", "StoreCorrupt", "StoreReadOnly")


def _default_open_path(path: Path | str) -> Any:
    from memstrata_app.engine import MemoryEngine

    return MemoryEngine.open(path)
