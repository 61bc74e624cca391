"""The governed ledger in the app: the known-at switch, the Audit tab, and the detail pane's
contest, label, hold and redact — over a real engine on a temp ledger."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from memstrata_app.engine import MemoryEngine, Status

from .conftest import seed

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
OLD = "The auth service listens on port 7000."
NEW = "The auth service listens on port 7001."


@pytest.fixture
def ledger(tmp_path: Path, local_embedder: Any) -> tuple[Path, datetime]:
    """7000 said on March 2; the correction to 7001 (true from March 3) recorded only after
    `known`, the instant between the two writes."""
    db = tmp_path / "ledger.db"
    seed(db, local_embedder, [(OLD, T0), ("We deploy on Fridays.", T0)])
    time.sleep(0.05)
    known = datetime.now(UTC)
    time.sleep(0.05)
    seed(db, local_embedder, [(NEW, T0 + timedelta(days=1))])
    return db, known


@pytest.fixture
def win(ledger: tuple[Path, datetime], make_window: Any) -> Any:
    return make_window(ledger[0])


def ids(db: Path, local_embedder: Any) -> dict[str, int]:
    with MemoryEngine.open(db, embedder=local_embedder, read_only=True) as eng:
        return {a.object or a.text: int(a.id) for a in eng.list_assertions(None, 0, 50)}


def ask(qtbot: Any, win: Any, question: str) -> list[str]:
    query = win.query
    query.question.setText(question)
    with qtbot.waitSignal(query.answered, timeout=20000) as got:
        query.ask.click()
    return [h.object for h in got.args[0] if h.subject]


def move_to(qtbot: Any, win: Any, t: datetime) -> None:
    qtbot.waitUntil(win.asof.isEnabled)
    with qtbot.waitSignal(win.state.as_of_changed):
        win.asof.set_time(t)


def test_known_at_switch_answers_as_the_ledger_knew_it(
        qtbot: Any, win: Any, ledger: tuple[Path, datetime]) -> None:
    _db, known = ledger
    move_to(qtbot, win, known)
    assert not win.asof.known_mode and "valid at" in win.asof.label.text()
    # valid at that instant, as known now: the later correction counts
    assert ask(qtbot, win, "which port does the auth service listen on?") == ["7001"]
    with qtbot.waitSignal(win.ledger.model.loaded):
        win.asof.known_button.click()
    assert win.state.known_mode and win.state.known_at == known
    assert "known at" in win.asof.label.text()
    assert "as the ledger knew it" in win.query.when.text()
    # known at that instant: the correction was not recorded yet
    assert ask(qtbot, win, "which port does the auth service listen on?") == ["7000"]
    # the ledger hides the row recorded later, and shows 7000 as it was then: active
    model = win.ledger.model
    shown = {model.assertion(r).object: model.assertion(r).status
             for r in range(model.rowCount())}
    assert "7001" not in shown and shown["7000"] == Status.ACTIVE
    assert "known at" in win.ledger.as_of_label.text()
    # the View menu's item follows the switch; back to valid time by keyboard
    assert win.known_action.isChecked()
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)
    with qtbot.waitSignal(win.ledger.model.loaded):
        qtbot.keyClick(win, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier
                       | Qt.KeyboardModifier.ShiftModifier)
    assert not win.state.known_mode and win.asof.valid_button.isChecked()
    assert ask(qtbot, win, "which port does the auth service listen on?") == ["7001"]


def test_audit_lists_a_logged_request_with_what_it_injected_and_left_out(
        qtbot: Any, ledger: tuple[Path, datetime], local_embedder: Any,
        make_window: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    db, _known = ledger
    n = ids(db, local_embedder)
    with MemoryEngine.open(db, embedder=local_embedder) as eng:
        eng.log_injection("openai", "auth service port?", injected=[(n["7001"], 0.812)],
                          filtered=[(n["7000"], 0.774, n["7001"])],
                          settings={"injection_k": 5, "injection_min_score": 0.3},
                          model="gpt-4o", space="global", tool="aider/0.60")
    win = make_window(db)
    audit = win.audit
    with qtbot.waitSignal(audit.loaded, timeout=10000):
        win.activateWindow()
        qtbot.keyClick(win, Qt.Key.Key_7, Qt.KeyboardModifier.ControlModifier)
    assert win.tabs.currentWidget() is audit
    assert win.tabs.tabText(win.tabs.currentIndex()) == "Audit"
    assert "Why did the assistant see this" in audit.title.text()
    row = [audit.table.item(0, c).text() for c in range(audit.table.columnCount())]
    assert row[1:] == ["openai", "gpt-4o", "global", "aider/0.60", "1", "1"]
    assert audit.injected.item(0, 1).text() == NEW
    assert audit.injected.item(0, 0).text() == "0.812"
    assert "auth service · port = 7001" in audit.injected.item(0, 2).text()
    assert audit.filtered.item(0, 1).text() == OLD
    assert audit.filtered.item(0, 3).text() == f"retired by #{n['7001']}"
    assert "injection_k" in audit.settings.text() and "0.3" in audit.settings.text()
    # Enter on the fact left out shows it in the ledger
    audit.filtered.setFocus()
    qtbot.waitUntil(audit.filtered.hasFocus)
    audit.filtered.setCurrentCell(0, 1)
    qtbot.keyClick(audit.filtered, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: win.tabs.currentWidget() is win.ledger)
    qtbot.waitUntil(lambda: win.ledger.detail._current is not None
                    and int(win.ledger.detail._current.id) == n["7000"])
    # redacting the injected fact: the log shows it as erased, and keeps no copy of it
    monkeypatch.setattr(QMessageBox, "warning", lambda *a: QMessageBox.StandardButton.Yes)
    row_new = win.ledger.model.row_of(n["7001"])
    with qtbot.waitSignal(win.ledger.detail.chain_loaded):
        win.ledger.select_row(row_new)
    with qtbot.waitSignal(win.ledger.model.loaded, timeout=10000):
        win.ledger.detail.redact_button.click()
    with qtbot.waitSignal(audit.loaded, timeout=10000):
        win.show_view("audit")
    assert audit.injected.item(0, 1).text() == "[erased]"


def pick(qtbot: Any, win: Any, obj: str) -> Any:
    model = win.ledger.model
    row = next(r for r in range(model.rowCount()) if model.assertion(r).object == obj)
    with qtbot.waitSignal(win.ledger.detail.chain_loaded):
        win.ledger.select_row(row)
    return win.ledger.detail


def test_detail_shows_the_record_and_contests_labels_holds_and_redacts(
        qtbot: Any, win: Any, ledger: tuple[Path, datetime], local_embedder: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    db, _known = ledger
    detail = pick(qtbot, win, "7001")
    assert detail.fields["Authority"].isVisible() and detail.fields["Label"].text() == "normal"
    assert not detail.fields["Hold"].isVisible()  # empty fields are hidden
    assert not detail.fields["Reviewed"].isVisible()
    # label ▸ restricted: never retrieved again
    with qtbot.waitSignal(win.ledger.model.loaded, timeout=10000):
        detail.label_actions["restricted"].trigger()
    qtbot.waitUntil(lambda: detail._current is not None and detail._current.label == "restricted")
    assert "restricted" in detail.fields["Label"].text()
    assert "7001" not in ask(qtbot, win, "which port does the auth service listen on?")
    with qtbot.waitSignal(win.ledger.model.loaded, timeout=10000):
        detail.label_actions["normal"].trigger()
    # hold: the reason shows, redact and purge are off; release
    detail = pick(qtbot, win, "7001")
    with qtbot.waitSignal(detail.dialog_opened) as opened:
        detail.hold_button.click()
    dlg = opened.args[0]
    assert not dlg.ok.isEnabled()  # a reason is required
    dlg.reason.setText("litigation 2026-17")
    with qtbot.waitSignal(win.ledger.model.loaded, timeout=10000):
        dlg.ok.click()
    qtbot.waitUntil(lambda: detail.fields["Hold"].isVisible())
    assert detail.fields["Hold"].text() == "litigation 2026-17"
    assert not detail.redact_button.isEnabled() and not detail.purge_button.isEnabled()
    assert "Release" in detail.hold_button.text()
    with qtbot.waitSignal(win.ledger.model.loaded, timeout=10000):
        detail.hold_button.click()
    qtbot.waitUntil(lambda: not detail.fields["Hold"].isVisible())
    # contest with the right value: 7001 retires, a reviewer's 7002 holds the key
    detail = pick(qtbot, win, "7001")
    with qtbot.waitSignal(detail.dialog_opened) as opened:
        qtbot.keyClick(detail.contest_button, Qt.Key.Key_Space)
    dlg = opened.args[0]
    dlg.reason.setText("the compose file says 7002")
    dlg.value.setText("7002")
    with qtbot.waitSignal(win.ledger.model.loaded, timeout=20000):
        dlg.ok.click()
    detail = pick(qtbot, win, "7002")
    assert detail.fields["Authority"].text() == "reviewer"
    assert detail.fields["Reviewed"].isVisible()
    assert ask(qtbot, win, "which port does the auth service listen on?") == ["7002"]
    # redact the old 7000: asks first; cancel keeps it, yes erases the sentence
    detail = pick(qtbot, win, "7000")
    asked: list[str] = []

    def cancel(_parent: Any, _title: str, text: str, *a: Any) -> Any:
        asked.append(text)
        return QMessageBox.StandardButton.Cancel

    monkeypatch.setattr(QMessageBox, "warning", cancel)
    detail.redact_button.click()
    assert asked and "cannot be undone" in asked[0]
    monkeypatch.setattr(QMessageBox, "warning", lambda *a: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(win.ledger.model.loaded, timeout=10000):
        detail.redact_button.click()
    win.shutdown()
    with MemoryEngine.open(db, embedder=local_embedder, read_only=True) as eng:
        rows = {int(a.id): a for a in eng.list_assertions(None, 0, 50)}
        contests = eng.contests()
    by_obj = {a.object: a for a in rows.values() if a.object}
    assert by_obj["7001"].status == Status.SUPERSEDED and by_obj["7001"].label == "normal"
    assert by_obj["7002"].status == Status.ACTIVE and by_obj["7002"].authority == "reviewer"
    assert [c["reason"] for c in contests] == ["the compose file says 7002"]
    redacted = [a for a in rows.values() if a.subject == "auth service" and not a.text]
    assert len(redacted) == 1 and OLD not in {a.text for a in rows.values()}
    assert not any(a.hold for a in rows.values())


def test_audit_refreshes_when_the_endpoint_serves_a_request(
        qtbot: Any, win: Any, ledger: tuple[Path, datetime], local_embedder: Any) -> None:
    """The endpoint writes from its own thread: a turn, then its log entry; the open Audit tab
    shows the entry without being asked."""
    import threading

    audit = win.audit
    with qtbot.waitSignal(audit.loaded, timeout=10000):
        win.show_view("audit")
    assert audit.entries == [] and audit.empty.isVisible()
    eng = win.client.engine

    def serve() -> None:  # what the endpoint does for one chat request
        turn = eng.ingest_and_retrieve("which port does the auth service listen on?", k=5,
                                       source="proxy:openai:user")
        eng.log_injection("openai", "which port does the auth service listen on?",
                          injected=[(int(h.assertion_id), h.score) for h in turn.hits],
                          filtered=list(turn.filtered), settings={"injection_k": 5},
                          model="gpt-4o", tool="curl/8.5")

    t = threading.Thread(target=serve)
    t.start()
    t.join(30)
    qtbot.waitUntil(lambda: len(audit.entries) == 1, timeout=10000)
    assert audit.table.item(0, 4).text() == "curl/8.5"
    assert NEW in [audit.injected.item(r, 1).text() for r in range(audit.injected.rowCount())]
    left_out = [audit.filtered.item(r, 1).text() for r in range(audit.filtered.rowCount())]
    assert OLD in left_out  # the stale 7000, left out because 7001 retired it


def test_review_explains_a_lower_authority_contradiction(
        qtbot: Any, tmp_path: Path, local_embedder: Any, make_window: Any) -> None:
    """The assistant contradicting what the user said waits in review, saying so; approving
    retires the user's value."""
    db = tmp_path / "authority.db"
    with MemoryEngine.open(db, embedder=local_embedder) as eng:
        eng.ingest(OLD, source="cli")
        eng.ingest(NEW, source="proxy:openai:assistant")
    win = make_window(db)
    review = win.review
    qtbot.waitUntil(lambda: len(review.rows) == 1)
    win.show_view("review")
    review.table.selectRow(0)
    qtbot.waitUntil(lambda: review.retires.count() == 1)
    why = review.why.text()
    assert "Lower authority" in why and "<b>assistant</b>" in why and "<b>user</b>" in why
    assert "7000" in review.retires.item(0).text()
    with qtbot.waitSignal(review.decided), qtbot.waitSignal(review.loaded):
        review.approve_button.click()
    win.shutdown()
    with MemoryEngine.open(db, embedder=local_embedder, read_only=True) as eng:
        rows = {a.object: a.status for a in eng.list_assertions(None, 0, 10)}
    assert rows == {"7000": Status.SUPERSEDED, "7001": Status.ACTIVE}
