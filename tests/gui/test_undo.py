"""Edit → Undo in the app: its text names the action, Ctrl+Z takes it back through the real
engine, it is off when there is nothing to undo, when the action's rows changed since (the
tooltip says why) and on a read-only ledger."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

from memstrata_app.engine import Status

from .conftest import seed

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
OLD = "The billing service timeout is 30 seconds."
NEW = "The billing service timeout is 45 seconds."


@pytest.fixture
def db(tmp_path: Path, local_embedder: Any) -> Path:
    path = tmp_path / "ledger.db"
    seed(path, local_embedder, [(OLD, T0)])
    seed(path, local_embedder, [(NEW, T0 + timedelta(days=7))], quarantine_threshold=0.99)
    return path


def approve_in_review(qtbot: Any, win: Any) -> int:
    review = win.review
    qtbot.waitUntil(lambda: len(review.rows) == 1)
    win.show_view("review")
    review.table.selectRow(0)
    aid = int(review.current().id)
    with qtbot.waitSignal(review.decided), qtbot.waitSignal(win.edit.refreshed):
        review.approve_button.click()
    return aid


def chain(win: Any) -> list[tuple[str, Status]]:
    return [(a.object, a.status) for a in win.client.engine.history("billing service",
                                                                     "timeout")]


def test_ctrl_z_undoes_the_approval_the_edit_menu_names(qtbot: Any, db: Path,
                                                        make_window: Any) -> None:
    win = make_window(db)
    edit, act = win.edit, win.edit.undo_action
    titles = [a.text() for a in win.menuBar().actions()]
    assert titles.index("Ed&it") == titles.index("&File") + 1
    assert act.shortcut().matches(QKeySequence("Ctrl+Z")) == QKeySequence.SequenceMatch.ExactMatch
    qtbot.waitUntil(lambda: act.toolTip().startswith("Nothing to undo"))
    assert not act.isEnabled() and act.text() == "&Undo"

    aid = approve_in_review(qtbot, win)
    qtbot.waitUntil(act.isEnabled)
    assert act.text() == f"&Undo approve #{aid}, retiring #1"
    assert f"approve #{aid}" in act.toolTip()
    assert chain(win) == [("30 seconds", Status.SUPERSEDED), ("45 seconds", Status.ACTIVE)]

    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)
    win.show_view("ledger")
    win.ledger.table.setFocus()
    with qtbot.waitSignal(edit.undone) as undone, qtbot.waitSignal(win.review.loaded):
        qtbot.keyClick(win.ledger.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)

    res = undone.args[0]
    assert res.undone.summary == f"approve #{aid}, retiring #1"
    assert chain(win) == [("30 seconds", Status.ACTIVE)]
    assert [int(a.id) for a in win.review.rows] == [aid]  # back in review
    assert win.statusBar().currentMessage().startswith(f"Undone: approve #{aid}, retiring #1")
    qtbot.waitUntil(lambda: act.text() == "&Undo" and not act.isEnabled())
    assert win.tabs.tabText(2) == "Review (1)"


def test_undo_is_off_with_the_reason_when_the_rows_changed_since(qtbot: Any, db: Path,
                                                                 make_window: Any) -> None:
    win = make_window(db)
    act = win.edit.undo_action
    aid = approve_in_review(qtbot, win)
    qtbot.waitUntil(act.isEnabled)
    with qtbot.waitSignal(win.edit.refreshed):
        win.client.call("ingest", lambda e: e.ingest("The billing service timeout is 60 "
                                                     "seconds."), writes=("ledger",))
    qtbot.waitUntil(lambda: act.text().startswith("Can't"))
    assert not act.isEnabled()
    assert act.text() == f"Can't &undo approve #{aid}, retiring #1"
    assert f"#{aid} is superseded now (replaced by #3)" in act.toolTip()
    act.trigger()  # off: nothing happens
    assert chain(win)[-1] == ("60 seconds", Status.ACTIVE)


def test_undo_is_off_on_a_read_only_ledger(qtbot: Any, db: Path, settings: Any,
                                          local_embedder: Any) -> None:
    from memstrata_app.engine import MemoryEngine
    from memstrata_app.gui.state import AppState
    from memstrata_app.gui.window import MainWindow
    from memstrata_app.gui.worker import EngineClient

    with MemoryEngine.open(db, embedder=local_embedder) as eng:
        eng.reject(eng.quarantined()[0].id)
    client = EngineClient(lambda: MemoryEngine.open(db, embedder=local_embedder,
                                                    read_only=True))
    win = MainWindow(AppState(client, settings), tray_available=False)
    qtbot.addWidget(win)
    try:
        with qtbot.waitSignal(win.interactive, timeout=20000):
            win.show()
        act = win.edit.undo_action
        qtbot.waitUntil(lambda: act.text() == "&Undo reject #2")
        assert not act.isEnabled() and "read-only" in act.toolTip()
    finally:
        win.shutdown()
