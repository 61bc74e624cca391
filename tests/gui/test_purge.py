"""The detail pane's Purge…: asks first (irreversible), then erases the sentence from the file."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox

from .conftest import seed

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
DANA = "The staging DB password rotation owner is Dana."


def ledger_bytes(db: Path) -> bytes:
    wal = db.with_name(db.name + "-wal")
    return db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


@pytest.fixture
def win(tmp_path: Path, local_embedder: Any, make_window: Any) -> Any:
    db = tmp_path / "ledger.db"
    seed(db, local_embedder, [("The api-gateway listens on port 8080.", T0), (DANA, T0)])
    return make_window(db)


def pick(qtbot: Any, win: Any, text: str) -> Any:
    ledger = win.ledger
    row = next(r for r in range(ledger.model.rowCount())
               if ledger.model.assertion(r).text == text)
    with qtbot.waitSignal(ledger.detail.chain_loaded):
        ledger.select_row(row)
    return ledger.detail


def test_purge_asks_and_cancel_keeps_the_row(qtbot: Any, win: Any, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    detail = pick(qtbot, win, DANA)
    assert detail.purge_button.isEnabled()
    asked: list[str] = []

    def cancel(parent: Any, title: str, text: str, *a: Any) -> Any:
        asked.append(text)
        return QMessageBox.StandardButton.Cancel

    monkeypatch.setattr(QMessageBox, "warning", cancel)
    detail.purge_button.click()
    assert asked and "cannot be undone" in asked[0]
    assert b"Dana" in ledger_bytes(tmp_path / "ledger.db")


def test_purge_erases_the_sentence_from_the_ledger_file(qtbot: Any, win: Any, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    detail = pick(qtbot, win, DANA)
    monkeypatch.setattr(QMessageBox, "warning",
                        lambda *a: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(win.ledger.model.loaded, timeout=10000):
        detail.purge_button.click()
    texts = [win.ledger.model.assertion(r).text for r in range(win.ledger.model.rowCount())]
    assert DANA not in texts and "" in texts
    raw = ledger_bytes(tmp_path / "ledger.db")
    assert b"Dana" not in raw and b"dana" not in raw
    tomb = next(win.ledger.model.assertion(r) for r in range(win.ledger.model.rowCount())
                if win.ledger.model.assertion(r).text == "")
    assert tomb.reason == "purged: purged in the app" and tomb.key
    win.ledger.detail.show_assertion(tomb)
    assert not win.ledger.detail.purge_button.isEnabled()
    assert "purged" in win.ledger.detail.sentence.text()
