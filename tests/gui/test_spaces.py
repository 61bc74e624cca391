"""The space switcher and "Move to space…", driven through the widgets over a real engine."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memstrata_app.engine import MemoryEngine

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def win(qtbot: Any, tmp_path: Path, local_embedder: Any, make_window: Any) -> Any:
    db = tmp_path / "ledger.db"
    with MemoryEngine.open(db, embedder=local_embedder) as eng:
        eng.ingest("The API port is 3000.", source="seed", at=T0, space="shop")
        eng.ingest("The API port is 8080.", source="seed", at=T0, space="billing")
        eng.ingest("Our style guide forbids tabs.", source="seed", at=T0)
    w = make_window(db)
    qtbot.waitUntil(lambda: w.spaces.combo.count() == 4, timeout=10000)
    return w


def texts(model: Any) -> list[str]:
    return [model.assertion(r).text for r in range(model.rowCount())]


def test_the_switcher_lists_spaces_with_counts_and_filters_ledger_and_query(
        qtbot: Any, win: Any) -> None:
    sw, ledger = win.spaces, win.ledger
    assert [sw.combo.itemText(i) for i in range(sw.combo.count())] == [
        "All spaces (3)", "global (1)", "billing (1)", "shop (1)"]
    assert sw.names() == ["global", "billing", "shop"]
    assert ledger.model.total == 3

    with qtbot.waitSignal(ledger.model.loaded):
        sw.combo.setCurrentIndex(sw.names().index("shop") + 1)
    assert win.state.space == "shop"
    assert texts(ledger.model) == ["The API port is 3000."]

    win.query.question.setText("which port does the API use?")
    with qtbot.waitSignal(win.query.answered, timeout=20000) as got:
        win.query.run()
    answered = [h.text for h in got.args[0]]
    assert "The API port is 3000." in answered and "The API port is 8080." not in answered
    assert "reading the space shop and the global space" in win.query.when.text()

    ing = win.ingest  # the Ingest tab writes into the space shown
    ing.text.setPlainText("The API port is 3100.")
    with qtbot.waitSignal(ing.ingested) as got, qtbot.waitSignal(ledger.model.loaded):
        ing.remember.click()
    assert got.args[0].actions[0].action.value == "superseded"  # retired shop's 3000, only
    assert texts(ledger.model) == ["The API port is 3100.", "The API port is 3000."]
    qtbot.waitUntil(lambda: sw.counts.get("shop") == {"total": 2, "current": 1})

    with qtbot.waitSignal(ledger.model.loaded):
        sw.select(None)
    assert win.state.space is None and ledger.model.total == 4
    win.query.question.setText("which port does the API use?")
    with qtbot.waitSignal(win.query.answered, timeout=20000) as got:
        win.query.run()
    assert {"The API port is 3100.", "The API port is 8080."} <= {h.text for h in got.args[0]}


def test_engine_calls_stay_off_the_gui_thread(qtbot: Any, win: Any) -> None:
    seen: list[int] = []
    win.client.call("probe", lambda e: seen.append(threading.get_ident()))
    qtbot.waitUntil(lambda: bool(seen))
    assert seen[0] != threading.get_ident() and seen[0] == win.client.worker_ident


def test_moving_a_fact_to_a_new_space_and_a_refused_move(qtbot: Any, win: Any) -> None:
    ledger, sw = win.ledger, win.spaces
    row = texts(ledger.model).index("The API port is 3000.")
    ledger.select_row(row)
    assert ledger.detail.fields["Space"].text() == "shop"
    with qtbot.waitSignal(ledger.detail.move_asked) as asked:
        ledger.detail.move_button.click()
    dlg = asked.args[0]
    offered = [dlg.target.itemText(i) for i in range(dlg.target.count())]
    assert offered == ["global", "billing"]  # every space but its own

    dlg.target.setEditText("../etc")
    dlg.accept()
    assert dlg.isVisible() and "not a space name" in dlg.error.text()
    dlg.target.setEditText("Web App")
    with qtbot.waitSignal(sw.refreshed, timeout=10000):
        dlg.accept()
    qtbot.waitUntil(lambda: "web-app" in sw.names())
    assert sw.counts["web-app"] == {"total": 1, "current": 1} and "shop" not in sw.counts
    with qtbot.waitSignal(ledger.model.loaded):
        sw.select("web-app")
    assert texts(ledger.model) == ["The API port is 3000."]

    with qtbot.waitSignal(ledger.model.loaded):
        sw.select("billing")
    ledger.select_row(0)
    with qtbot.waitSignal(ledger.detail.move_asked) as asked:
        ledger.detail.move_button.click()
    dlg = asked.args[0]
    dlg.target.setEditText("web-app")  # holds a current API port already
    dlg.accept()
    qtbot.waitUntil(lambda: "already holds a current value" in win.statusBar().currentMessage())
    assert texts(ledger.model) == ["The API port is 8080."]
