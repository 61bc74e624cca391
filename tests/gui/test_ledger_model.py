"""The ledger model pages rows in from the worker and passes Qt's model checks."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableView

from memstrata_app.engine import LedgerFilter, Status
from memstrata_app.gui.ledger_model import PAGE, LedgerModel
from memstrata_app.gui.worker import EngineClient

from .fake_engine import FakeEngine, make_rows


@pytest.fixture
def fake_client(qtbot: Any) -> Any:
    engine = FakeEngine(make_rows(100_000))
    client = EngineClient(lambda: engine)
    with qtbot.waitSignal(client.ready, timeout=5000):
        pass
    yield client, engine
    client.shutdown()
    assert engine.closed


def test_first_page_then_fetch_more_on_scroll(qtbot: Any, fake_client: Any) -> None:
    client, engine = fake_client
    model = LedgerModel(client)
    with qtbot.waitSignal(model.loaded):
        model.set_filter(LedgerFilter())
    assert model.total == 100_000
    assert model.rowCount() == PAGE
    assert model.canFetchMore()
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(600, 400)
    view.show()
    for _ in range(3):  # scrolling to the bottom asks for the next page, and only that page
        with qtbot.waitSignal(model.loaded):
            view.scrollToBottom()
    assert model.rowCount() >= 4 * PAGE
    assert all(limit == PAGE for _, _, limit in engine.calls)
    assert engine.thread is not None and engine.thread.name != "MainThread"
    assert model.data(model.index(0, 0)) == "100000"  # newest first


def test_filter_and_sort_reload(qtbot: Any, fake_client: Any) -> None:
    client, _ = fake_client
    model = LedgerModel(client)
    with qtbot.waitSignal(model.loaded):
        model.set_filter(LedgerFilter(statuses=(Status.SUPERSEDED,)))
    assert model.total == 10_000
    assert {model.assertion(r).status for r in range(model.rowCount())} == {Status.SUPERSEDED}
    with qtbot.waitSignal(model.loaded):
        model.sort(0, Qt.SortOrder.AscendingOrder)
    assert model.data(model.index(0, 0)) == "10"
    with qtbot.waitSignal(model.loaded):
        model.update_filter(search="service-7 ", statuses=())
    assert model.total > 0
    assert all("service-7 " in model.assertion(r).text for r in range(model.rowCount()))


def test_model_passes_qtmodeltester(qtbot: Any, qtmodeltester: Any, fake_client: Any) -> None:
    client, _ = fake_client
    model = LedgerModel(client)
    with qtbot.waitSignal(model.loaded):
        model.set_filter(LedgerFilter())
    qtmodeltester.check(model, force_py=True)
    with qtbot.waitSignal(model.loaded):
        model.fetchMore()
    qtmodeltester.check(model, force_py=True)
