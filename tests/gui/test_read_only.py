"""A read-only ledger in the app: a banner says so, browsing and queries work, writing is off."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .conftest import seed

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def test_the_app_browses_and_queries_a_read_only_ledger_with_writing_off(
        qtbot: Any, tmp_path: Path, settings: Any, local_embedder: Any) -> None:
    from memstrata_app.engine import MemoryEngine
    from memstrata_app.gui.state import AppState
    from memstrata_app.gui.window import MainWindow
    from memstrata_app.gui.worker import EngineClient

    db = tmp_path / "ledger.db"
    seed(db, local_embedder, [("The api-gateway listens on port 8080.", T0)])
    seed(db, local_embedder, [("The billing service uses redis.", T0)],
         quarantine_threshold=0.99)
    before = db.read_bytes()
    client = EngineClient(lambda: MemoryEngine.open(db, embedder=local_embedder,
                                                    read_only=True))
    win = MainWindow(AppState(client, settings), tray_available=False)
    qtbot.addWidget(win)
    try:
        with qtbot.waitSignal(win.interactive, timeout=20000):
            win.show()
        assert win.read_only_banner.isVisible()
        assert "Read-only ledger" in win.read_only_banner.text()
        assert "opened read-only" in win.read_only_banner.text()
        assert "read-only" in win.windowTitle()
        assert not win.ingest.isEnabled() and not win.ingest.remember.isEnabled()
        assert win.write_actions and not any(a.isEnabled() for a in win.write_actions)

        # browsing: the ledger lists both rows; a row's detail shows, Forget stays off
        ledger = win.ledger
        qtbot.waitUntil(lambda: ledger.model.rowCount() == 2)
        row = next(r for r in range(ledger.model.rowCount())
                   if ledger.model.assertion(r).text.startswith("The api-gateway"))
        with qtbot.waitSignal(ledger.detail.chain_loaded):
            ledger.select_row(row)
        assert not ledger.detail.forget_button.isEnabled()

        # review: the queue is listed, its buttons stay off even with a row picked, and
        # the keyboard path (approve()) writes nothing
        review = win.review
        qtbot.waitUntil(lambda: len(review.rows) == 1)
        review.table.selectRow(0)
        assert not review.approve_button.isEnabled() and not review.reject_button.isEnabled()
        with qtbot.waitSignal(client.error) as err:
            review.approve()
        assert "read-only" in err.args[0]

        # query: the embedder and the vector index load from the file, nothing written
        win.query.question.setText("which port does the api gateway use?")
        with qtbot.waitSignal(win.query.answered, timeout=30000) as answered:
            win.query.run()
        assert answered.args[0][0].text == "The api-gateway listens on port 8080."
    finally:
        win.shutdown()
    assert db.read_bytes() == before
