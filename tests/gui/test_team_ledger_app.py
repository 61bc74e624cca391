"""The app on a team ledger (a real PostgreSQL): it says which ledger it is on, shows the
rows another client wrote, and follows that client's later writes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from memstrata_app.engine import MemoryEngine


def test_the_app_opens_a_team_ledger_and_follows_another_clients_writes(
        make_window: Any, qtbot: Any, pg_dsn: str, local_embedder: Any) -> None:
    with MemoryEngine.open(pg_dsn, embedder=local_embedder) as other:
        other.ingest("The billing API port is 8080.", at=datetime(2026, 1, 5, tzinfo=UTC))
        win = make_window(pg_dsn)
        label = win.location_label
        qtbot.waitUntil(lambda: label.full.startswith("PostgreSQL · postgres@127.0.0.1"))
        assert "PostgreSQL" in label.toolTip()
        model = win.ledger.model
        qtbot.waitUntil(lambda: model.rowCount() == 1, timeout=10000)
        other.ingest("The billing API port is 9090.", at=datetime(2026, 2, 1, tzinfo=UTC))
        # another machine's write reaches the ledger view without anything done here
        qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=10000)
        eng = win.client.engine
        assert [h.text for h in eng.retrieve("billing API port", k=2)] == [
            "The billing API port is 9090."]
        assert {a.author for a in eng.list_assertions()} == {other.author}
