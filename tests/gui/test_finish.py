"""The finished-product details: empty state, as-of field, status counts, Forget's reason,
small windows, as-of snapping, themes and keyboard access."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication

from memstrata_app.engine import MemoryEngine, Status

from .conftest import seed

T0 = datetime(2026, 1, 5, 9, 12, tzinfo=UTC)
CHAT = [  # ordinary chat statements, not templates
    ("fyi the repo is `harbor-core` and the default branch is `trunk`, not main", T0),
    ("prod Postgres is 14.10 on RDS, instance `harbor-prod-db`", T0 + timedelta(hours=5)),
    ("gunicorn runs 8 workers per web pod in prod", T0 + timedelta(days=1)),
    ("just a thought, nothing decided", T0 + timedelta(days=2)),
    ("prod Postgres is 15.4 now, we upgraded over the weekend", T0 + timedelta(days=9)),
    ("gunicorn runs 12 workers per web pod in prod", T0 + timedelta(days=12)),
]
REVIEW = [("prod Postgres is 16.2 now", T0 + timedelta(days=20))]


@pytest.fixture
def win(tmp_path: Path, local_embedder: Any, make_window: Any) -> Any:
    db = tmp_path / "ledger.db"
    seed(db, local_embedder, CHAT)
    seed(db, local_embedder, REVIEW, quarantine_threshold=0.99)
    with MemoryEngine.open(db, embedder=local_embedder) as eng:  # one retracted row too
        active = eng.list_assertions(None, 0, 100, "id", False)
        plain = next((a for a in active if a.status == Status.PLAIN), None)
        if plain is not None:
            eng.forget(int(plain.id))
    return make_window(db)


@pytest.fixture
def empty_win(tmp_path: Path, make_window: Any) -> Any:
    return make_window(tmp_path / "empty.db")


def test_empty_ledger_says_how_to_add_facts(qtbot: Any, empty_win: Any) -> None:
    ledger = empty_win.ledger
    qtbot.waitUntil(lambda: ledger.stack.currentWidget() is ledger.empty_hint)
    text = ledger.empty_hint.text()
    assert "No facts yet" in text and "Ingest" in text and "Import" in text
    assert ledger.empty_hint.isVisible() and not ledger.table.isVisible()


def test_empty_filter_says_how_to_widen_it(qtbot: Any, win: Any) -> None:
    ledger = win.ledger
    qtbot.waitUntil(lambda: ledger.model.rowCount() > 0)
    ledger.search.setText("no such thing anywhere")
    ledger._apply_search()
    qtbot.waitUntil(lambda: ledger.stack.currentWidget() is ledger.empty_hint)
    assert "No rows match" in ledger.empty_hint.text()
    ledger._on_hint_link("clear")
    qtbot.waitUntil(lambda: ledger.stack.currentWidget() is ledger.table)


def test_disabled_as_of_field_reads_now_not_a_made_up_date(qtbot: Any, empty_win: Any) -> None:
    edit = empty_win.asof.edit
    assert not empty_win.asof.isEnabled()
    assert edit.text() == "now"
    assert "2000" not in edit.text()


def test_status_counts_add_up_to_the_rows(qtbot: Any, win: Any) -> None:
    import re

    label = win.stats_label
    qtbot.waitUntil(lambda: "rows" in label.text())
    text = label.text()
    total = int(re.search(r"([\d,]+) rows", text).group(1).replace(",", ""))
    parts = re.search(r"rows \(([^)]*)\)", text).group(1)
    counts = {name: int(n.replace(",", "")) for n, name in
              (p.strip().split(" ", 1) for p in parts.split(","))}
    assert sum(counts.values()) == total
    assert counts.get("quarantined") == 1 and counts.get("retracted") == 1
    qtbot.waitUntil(lambda: win.ledger.model.rowCount() == total)


def _select(qtbot: Any, win: Any, status: str) -> Any:
    ledger = win.ledger
    qtbot.waitUntil(lambda: ledger.model.rowCount() > 0)
    row = next(r for r in range(ledger.model.rowCount())
               if ledger.model.assertion(r).status.value == status)
    ledger.select_row(row)
    return ledger.detail


@pytest.mark.parametrize(("status", "reason"), [("superseded", "already superseded"),
                                                ("quarantined", "Review tab"),
                                                ("retracted", "already forgotten")])
def test_disabled_forget_says_why(qtbot: Any, win: Any, status: str, reason: str) -> None:
    detail = _select(qtbot, win, status)
    assert not detail.forget_button.isEnabled()
    assert reason in detail.forget_button.toolTip()


def test_method_shown_as_people_read_it(qtbot: Any, win: Any) -> None:
    detail = _select(qtbot, win, "active")
    shown, raw = detail.fields["Method"].text(), detail.fields["Method"].toolTip()
    assert ":" in raw and ":" not in shown


def test_window_goes_down_to_800_by_600(qtbot: Any, win: Any) -> None:
    win.resize(800, 600)
    qtbot.waitUntil(lambda: win.width() <= 800 and win.height() <= 600)
    hint = win.minimumSizeHint()
    assert win.minimumWidth() <= 800 and hint.width() <= 800 and hint.height() <= 600
    search = win.ledger.search
    assert search.width() >= 150  # not collapsed to "S…"
    table = win.ledger.table
    visible = [c for c in range(table.model().columnCount()) if not table.isColumnHidden(c)]
    right = max(table.columnViewportPosition(c) + table.columnWidth(c) for c in visible)
    assert right <= table.viewport().width() + 2  # no column pushed off screen


def test_as_of_slider_steps_through_change_instants(qtbot: Any, win: Any) -> None:
    asof = win.asof
    qtbot.waitUntil(lambda: len(asof.instants) > 2)
    changes = asof.instants
    assert changes == sorted(changes) and changes[0] == T0
    assert asof.slider.maximum() == len(changes)  # the last step is now
    for tick, t in enumerate(changes):
        asof.slider.setValue(tick)
        assert asof.time_at(tick) == t
    asof.slider.setValue(asof.slider.maximum())
    assert asof.time_at(asof.slider.value()) is None
    # an exact instant typed in the field stays as typed; the slider goes to the change before
    asked = T0 + timedelta(days=10, hours=3)
    asof.set_time(asked)
    qtbot.waitUntil(lambda: win.state.as_of == asked)
    assert asof.time_at(asof.slider.value()) <= asked
    assert asof.time_at(asof.slider.value()) == max(t for t in changes if t <= asked)
    asof.go_now()
    qtbot.waitUntil(lambda: win.state.as_of is None)


def test_theme_switch_changes_palette_derived_colours(qtbot: Any, win: Any) -> None:
    from memstrata_app.gui.style import accent_color, apply_theme, hint_color, is_dark

    app = QApplication.instance()
    before = app.palette()
    try:
        assert apply_theme(app, "light") == "light"
        light = (hint_color().name(), accent_color().name(), is_dark())
        assert apply_theme(app, "dark") == "dark"
        dark = (hint_color().name(), accent_color().name(), is_dark())
        assert light[2] is False and dark[2] is True
        assert light[0] != dark[0] and light[1] != dark[1]
        hint = win.ledger.detail.placeholder
        qtbot.waitUntil(lambda: hint.palette().windowText().color().name() == dark[0])
    finally:
        app.setPalette(before)


def test_every_action_has_a_shortcut(qtbot: Any, win: Any) -> None:
    menu_actions = [a for m in win.menuBar().actions() for a in m.menu().actions()
                    if not a.isSeparator()]
    assert menu_actions
    from PySide6.QtWidgets import QAbstractButton, QMenu

    # a button's drop-down menu (the detail pane's Label ▾): Alt+its letter opens it, and the
    # menu's own items carry mnemonics
    # a submenu's items (File → Open recent's ledgers, numbered &1, &2 …)
    submenu_actions = [a for m in menu_actions if m.menu() is not None
                       for a in m.menu().actions() if "&" in a.text()]
    button_menu_actions = [a for m in win.findChildren(QMenu)
                           if isinstance(m.parent(), QAbstractButton) and "&" in m.parent().text()
                           for a in m.actions() if "&" in a.text()]
    for act in menu_actions + win.findChildren(QAction):
        if act.isSeparator() or act.menu() is not None or not act.text():
            continue
        reachable = (not act.shortcut().isEmpty() or act in menu_actions
                     or act in submenu_actions or act in button_menu_actions)
        assert reachable, f"{act.text()!r} has no shortcut and is in no menu"
    for act in menu_actions:
        if act.menu() is None:  # a submenu (File → Open recent) opens by its Alt letter
            assert not act.shortcut().isEmpty(), f"menu item {act.text()!r} has no shortcut"
    for m in win.menuBar().actions():
        assert "&" in m.text(), f"menu {m.text()!r} has no mnemonic"


def test_detail_buttons_have_mnemonics(qtbot: Any, win: Any) -> None:
    d = win.ledger.detail
    for b in (d.timeline_button, d.forget_button, d.purge_button, d.move_button,
              d.contest_button, d.label_button, d.hold_button, d.redact_button):
        assert "&" in b.text()
