"""GUI fixtures: a window over a real engine on a temp ledger; a guard against leaked threads."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")

import shiboken6
from PySide6.QtCore import QThread, QTimer


@pytest.fixture(autouse=True)
def no_leaked_threads_or_timers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail a test that leaves a QThread running or a QTimer active when it ends."""
    threads: list[QThread] = []
    timers: list[QTimer] = []
    thread_start, timer_start = QThread.start, QTimer.start

    def start_thread(self: QThread, *a: Any) -> None:
        threads.append(self)
        thread_start(self, *a)

    def start_timer(self: QTimer, *a: Any) -> None:
        timers.append(self)
        timer_start(self, *a)

    monkeypatch.setattr(QThread, "start", start_thread)
    monkeypatch.setattr(QTimer, "start", start_timer)
    yield
    running = [t.objectName() or repr(t) for t in threads
               if shiboken6.isValid(t) and t.isRunning()]
    active = [t.objectName() or repr(t) for t in timers
              if shiboken6.isValid(t) and t.isActive() and t.interval() > 0
              and "pyqtgraph" not in type(t.parent()).__module__]
    assert not running, f"QThread(s) left running: {running}"
    assert not active, f"QTimer(s) left active: {active}"


@pytest.fixture
def settings(memstrata_home: Path) -> Any:
    """Fresh settings in the temp data dir; the endpoint does not start on its own in tests."""
    from memstrata_app.settings import Settings

    s = Settings.load()
    s.set("start_endpoint", False)
    return s


@pytest.fixture
def make_window(qtbot: Any, settings: Any, local_embedder: Any
                ) -> Iterator[Callable[..., Any]]:
    """`make_window(db_path, tray_available=False)`: a shown window, ledger on screen."""
    from memstrata_app.engine import MemoryEngine
    from memstrata_app.gui.state import AppState
    from memstrata_app.gui.window import MainWindow
    from memstrata_app.gui.worker import EngineClient

    made: list[Any] = []

    def make(db: Path, tray_available: bool = False) -> Any:
        client = EngineClient(lambda: MemoryEngine.open(db, embedder=local_embedder))
        win = MainWindow(AppState(client, settings), tray_available=tray_available)
        made.append(win)
        qtbot.addWidget(win)
        with qtbot.waitSignal(win.interactive, timeout=20000):
            win.show()
        return win

    yield make
    for win in made:
        win.shutdown()


def seed(db: Path, local_embedder: Any, statements: list[tuple[str, Any]],
         quarantine_threshold: float = 0.6) -> None:
    """Write statements (text, at) into the ledger at `db` before the app opens it.

    A threshold near 1 sends every extraction to the review queue, whatever its confidence.
    """
    from memstrata_app.engine import MemoryEngine

    with MemoryEngine.open(db, embedder=local_embedder,
                           quarantine_threshold=quarantine_threshold) as eng:
        for text, at in statements:
            eng.ingest(text, source="seed", at=at)
