"""Keyboard access: Tab walks every control of every view in the declared order, every menu
item has a shortcut or a mnemonic, and the mnemonics on screen at one time never collide."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any, cast

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSlider,
    QTabBar,
    QWidget,
)

from .conftest import seed

T0 = datetime(2026, 2, 2, 9, 30, tzinfo=UTC)
CHAT = [
    ("the staging API listens on 8080 for now", T0),
    ("heads up, staging API moved to 8443 because of the proxy clash", T0 + timedelta(days=3)),
    ("we pinned celery to 5.3.6 after the worker crash", T0 + timedelta(days=4)),
]
REVIEW = [("celery is pinned to 5.4.0 now", T0 + timedelta(days=6))]
ACTIONABLE = (QAbstractButton, QLineEdit, QComboBox, QAbstractItemView, QAbstractSpinBox,
              QSlider, QPlainTextEdit, QTabBar)
VIEWS = ("ledger", "timeline", "review", "query", "ingest", "latency", "audit", "models")


@pytest.fixture
def win(tmp_path: Path, local_embedder: Any, make_window: Any) -> Any:
    db = tmp_path / "ledger.db"
    seed(db, local_embedder, CHAT)
    seed(db, local_embedder, REVIEW, quarantine_threshold=0.99)
    log_request(db, local_embedder)
    return make_window(db)


def log_request(db: Path, local_embedder: Any) -> None:
    """One request in the endpoint's log: the new port injected, the old one left out."""
    from memstrata_app.engine import MemoryEngine

    with MemoryEngine.open(db, embedder=local_embedder) as eng:
        rows = eng.list_assertions(None, 0, 50, "id", False)
        old, new = (next(a for a in rows if a.object == v) for v in ("8080", "8443"))
        eng.log_injection("openai", "staging API port?", injected=[(int(new.id), 0.81)],
                          filtered=[(int(old.id), 0.79, int(new.id))], settings={"k": 5},
                          model="gpt-4o", space="global", tool="curl/8.5")


def owner(w: QWidget | None) -> QWidget | None:
    """The control a focused widget belongs to (a spin box's or a combo box's inner line edit
    stands for the box)."""
    p = w
    while p is not None:
        if isinstance(p, QAbstractSpinBox | QComboBox):
            return p
        p = p.parentWidget()
    return w


def actionable(root: QWidget) -> list[QWidget]:
    """Visible, enabled controls under `root` that take focus from Tab."""
    found: list[QWidget] = []
    for w in root.findChildren(QWidget):
        if not isinstance(w, ACTIONABLE) or not (w.isVisible() and w.isEnabled()):
            continue
        if not w.focusPolicy() & Qt.FocusPolicy.TabFocus:
            continue
        parent = w.parentWidget()
        if owner(parent) is not parent or isinstance(parent, QLineEdit | QTabBar):
            continue  # a spin box's or combo box's parts, a clear button, tab scroll arrows
        if owner(w) is w:
            found.append(w)
    return found


def tab_walk(qtbot: Any, start: QWidget, steps: int) -> list[QWidget | None]:
    """Press Tab `steps` times from `start`; the controls that had the focus, in order."""
    start.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(lambda: owner(QApplication.focusWidget()) is owner(start))
    seen = [owner(QApplication.focusWidget())]
    for _ in range(steps):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        now = owner(QApplication.focusWidget())
        if now is not seen[-1]:  # Tab walks a date-time field's sections before leaving it
            seen.append(now)
    return seen


def open_view(qtbot: Any, win: Any, name: str) -> Any:
    win.show_view(name)
    if name == "latency":
        qtbot.waitUntil(lambda: win.latency is not None and win.latency.isVisible())
        return win.latency
    if name == "models":  # its controls follow what the probe of Ollama found
        qtbot.waitUntil(lambda: win.models.status is not None)
    return getattr(win, name)


@pytest.mark.parametrize("name", VIEWS)
def test_tab_reaches_every_control_of_each_view_in_order(qtbot: Any, win: Any,
                                                        name: str) -> None:
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)
    qtbot.waitUntil(lambda: win.asof.isEnabled() and len(win.review.rows) == 1)
    view = open_view(qtbot, win, name)
    if name == "ledger":
        win.ledger.select_row(0)  # the detail pane's buttons show
        qtbot.waitUntil(lambda: win.ledger.detail.chain.count() > 0
                        or win.ledger.detail.body.isVisible())
    if name == "review":
        win.review.table.selectRow(0)
        qtbot.waitUntil(lambda: win.review.approve_button.isEnabled())
    central = win.centralWidget()
    wanted = [w for w in actionable(central) if w.isVisibleTo(central)]
    in_view = [w for w in wanted if view.isAncestorOf(w)]
    assert len(in_view) >= 2, f"{name}: nothing to reach?"
    seen = tab_walk(qtbot, win.spaces.combo, 2 * len(wanted) + 24)
    missed = [f"{type(w).__name__}:{w.objectName() or getattr(w, 'text', lambda: '')()}"
              for w in wanted if w not in seen]
    assert not missed, f"{name}: Tab never reaches {missed}"
    # the space, the as-of bar and the tab bar come first, then the view, in its declared order
    head = seen[:7]
    assert head == [win.spaces.combo, win.asof.slider, win.asof.edit, win.asof.now_button,
                    win.asof.valid_button, win.asof.known_button, win.tabs.tabBar()]
    declared = [w for w in view.focus_chain() if w in wanted]
    walked = []
    for w in seen[7:]:
        if w in declared and w not in walked:
            walked.append(w)
    assert walked == declared, f"{name}: Tab order {walked} is not the declared {declared}"


def test_every_menu_item_has_a_shortcut_or_a_mnemonic(qtbot: Any, win: Any) -> None:
    menus = [m.menu() for m in win.menuBar().actions() if m.menu() is not None]
    assert len(menus) >= 3
    titles = [m.title() for m in menus]
    assert all("&" in t for t in titles), titles
    assert len({mnemonic(t) for t in titles}) == len(titles), f"menu mnemonics collide: {titles}"
    for menu in menus:
        items = [a for a in menu.actions() if not a.isSeparator()]
        assert items
        for act in items:
            assert not act.shortcut().isEmpty() or mnemonic(act.text()), (
                f"{menu.title()} → {act.text()!r}: no shortcut, no mnemonic")
        letters = [mnemonic(a.text()) for a in items if mnemonic(a.text())]
        assert len(set(letters)) == len(letters), f"{menu.title()}: mnemonics collide: {letters}"


def mnemonic(text: str) -> str:
    m = re.search(r"&([^&\s])", text.replace("&&", ""))
    return m.group(1).lower() if m else ""


@pytest.mark.parametrize("name", VIEWS)
def test_mnemonics_on_screen_do_not_collide(qtbot: Any, win: Any, name: str) -> None:
    """Alt+letter must mean one thing: the menus, the as-of bar and the open view's buttons and
    labelled fields share the window."""
    qtbot.waitUntil(lambda: len(win.review.rows) == 1)
    open_view(qtbot, win, name)
    if name == "review":
        win.review.table.selectRow(0)
    owners: dict[str, list[str]] = {}
    for m in win.menuBar().actions():
        owners.setdefault(mnemonic(m.text()), []).append(f"menu {m.text()}")
    for w in win.centralWidget().findChildren(QWidget):
        if not w.isVisible():
            continue
        if isinstance(w, QAbstractButton) or (isinstance(w, QLabel) and w.buddy() is not None):
            letter = mnemonic(w.text())
            if letter:
                owners.setdefault(letter, []).append(f"{type(w).__name__} {w.text()!r}")
    clashes = {k: v for k, v in owners.items() if k and len(v) > 1}
    assert not clashes, f"{name}: Alt+letter clashes {clashes}"


def test_review_decisions_by_keyboard_alone(qtbot: Any, win: Any) -> None:
    """Select with the arrows, edit the value (E), approve with Enter in the field."""
    review = win.review
    qtbot.waitUntil(lambda: len(review.rows) == 1)
    win.show_view("review")
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)
    review.table.setFocus()
    qtbot.waitUntil(review.table.hasFocus)
    qtbot.keyClick(review.table, Qt.Key.Key_Down)
    qtbot.waitUntil(lambda: review.current() is not None)
    qtbot.keyClick(review.table, Qt.Key.Key_E)
    qtbot.waitUntil(review.object.hasFocus)
    assert review.object.selectedText() == review.object.text()  # typing replaces the value
    qtbot.keyClicks(review.object, "5.4.1")
    with qtbot.waitSignal(review.decided) as decided, qtbot.waitSignal(review.loaded):
        qtbot.keyClick(review.object, Qt.Key.Key_Return)
    assert decided.args[0] == "approved"
    assert review.rows == [] and review.empty.isVisible()


def test_review_shows_why_and_what_approving_would_retire(qtbot: Any, win: Any) -> None:
    review = win.review
    qtbot.waitUntil(lambda: len(review.rows) == 1)
    win.show_view("review")
    review.table.selectRow(0)
    qtbot.waitUntil(lambda: review.retires.count() > 0 and "5.3.6" in review.retires.item(0).text())
    assert "Low confidence" in review.why.text()
    assert review.sentence.text() == "celery is pinned to 5.4.0 now"
    assert (review.subject.text(), review.object.text()) == ("celery", "5.4.0")
    assert "celery · version = 5.4.0" in review.table.item(0, 2).text()
    assert not review.candidates.isVisible()  # none: no empty candidates box either
    # no tall empty boxes: the lists are as tall as their rows
    assert review.retires.height() < 80 and review.table.height() < 200


def test_an_ambiguous_change_offers_candidates_to_pick_by_keyboard(
        qtbot: Any, tmp_path: Path, local_embedder: Any, make_window: Any) -> None:
    from memstrata_app.engine import MemoryEngine, Status

    db = tmp_path / "ambiguous.db"
    seed(db, local_embedder, [("The billing API port is 8080.", T0),
                              ("The search API port is 8080.", T0 + timedelta(days=1)),
                              ("moved from 8080 to 9090", T0 + timedelta(days=2))])
    win = make_window(db)
    review = win.review
    qtbot.waitUntil(lambda: len(review.rows) == 1)
    win.show_view("review")
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)
    review.table.selectRow(0)
    qtbot.waitUntil(lambda: review.candidates.count() == 2)
    assert "Ambiguous" in review.why.text()
    assert review.candidates.isVisible()
    assert "billing API" in review.candidates.item(0).text()
    review.candidates.setFocus()
    qtbot.waitUntil(review.candidates.hasFocus)
    review.candidates.setCurrentRow(0)
    qtbot.keyClick(review.candidates, Qt.Key.Key_Return)  # use the billing API's key
    qtbot.waitUntil(review.object.hasFocus)
    assert (review.subject.text(), review.relation.text()) == ("billing API", "port")
    with qtbot.waitSignal(review.decided), qtbot.waitSignal(review.loaded):
        qtbot.keyClick(review.object, Qt.Key.Key_Return)
    win.shutdown()
    with MemoryEngine.open(db, embedder=local_embedder, read_only=True) as eng:
        rows = eng.list_assertions(None, 0, 100, "id", False)
    billing = {(a.object, a.status) for a in rows if a.subject == "billing API"}
    assert billing == {("8080", Status.SUPERSEDED), ("9090", Status.ACTIVE)}
    search = {(a.object, a.status) for a in rows if a.subject == "search API"}
    assert search == {("8080", Status.ACTIVE)}


def test_the_status_bar_says_which_ledger_the_app_is_on(qtbot: Any, win: Any) -> None:
    from types import SimpleNamespace

    from memstrata_app.gui.window import ledger_location

    label = win.location_label
    path = str(win.client.engine.path)
    qtbot.waitUntil(lambda: path in label.full)  # the file, or the engine's words naming it
    assert label.full == ledger_location(win.client.engine)
    assert path in label.toolTip() and "Ledger" in label.toolTip()
    win.resize(800, 600)
    qtbot.waitUntil(lambda: win.width() <= 800)
    qtbot.waitUntil(lambda: "…" in label.text() or label.text() == label.full)
    assert label.fontMetrics().horizontalAdvance(label.text()) <= max(label.width(), 60)
    # an engine that names its own location (a PostgreSQL ledger) is shown in its words
    pg = SimpleNamespace(location="PostgreSQL · ana@db.internal:5432/memstrata", path=None)
    assert ledger_location(pg) == "PostgreSQL · ana@db.internal:5432/memstrata"
    assert ledger_location(SimpleNamespace(path=Path("/data/memstrata.db"))) == str(
        Path("/data/memstrata.db"))


def inside_scrolled_content(w: QWidget, top: QWidget) -> bool:
    """In a scroll area's or item view's content: out of view there is scrolled, not clipped."""
    from PySide6.QtWidgets import QAbstractScrollArea

    p = w.parentWidget()
    while p is not None and p is not top:
        if isinstance(p, QAbstractScrollArea) and p.viewport().isAncestorOf(w):
            return True
        p = p.parentWidget()
    return False


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_control_overflows_or_is_squeezed_at_800_by_600(qtbot: Any, win: Any,
                                                          theme: str) -> None:
    from PySide6.QtCore import QPoint, QRect

    from memstrata_app.gui.style import apply_theme

    app = cast(QApplication, QApplication.instance())
    before = app.palette()
    try:
        apply_theme(app, theme)
        win.resize(800, 600)
        qtbot.waitUntil(lambda: win.width() <= 800 and win.height() <= 600)
        qtbot.waitUntil(lambda: len(win.review.rows) == 1)
        for name in VIEWS:
            view = open_view(qtbot, win, name)
            if name == "review":
                win.review.table.selectRow(0)
            qtbot.wait(1)  # let the layouts settle
            bounds = win.rect()
            for w in [*actionable(win.centralWidget()), win.location_label, win.stats_label]:
                if not w.isVisible() or inside_scrolled_content(w, win):
                    continue
                where = QRect(w.mapTo(win, QPoint(0, 0)), w.size())
                label = f"{name}: {type(w).__name__} {w.objectName() or ''}"
                assert bounds.contains(where), f"{label} runs off the window: {where}"
                if isinstance(w, QAbstractButton | QComboBox | QLineEdit | QAbstractSpinBox):
                    assert w.width() >= w.minimumSizeHint().width() - 1, f"{label} is squeezed"
            assert view.isVisible()
        # the status bar's parts do not overlap one another (a passing message, such as the
        # Ollama probe's when it answers late, hides the left-hand labels while it shows)
        win.statusBar().clearMessage()
        qtbot.waitUntil(lambda: win.stats_label.isVisible())
        qtbot.wait(1)
        parts = [w for w in (win.stats_label, win.location_label, win.endpoint_label)
                 if w.isVisible()]
        spans = sorted((w.mapTo(win, QPoint(0, 0)).x(), w.width()) for w in parts)
        for (x1, w1), (x2, _w2) in pairwise(spans):
            assert x1 + w1 <= x2, "status bar labels overlap"
        text = win.stats_label.text()
        assert win.stats_label.fontMetrics().horizontalAdvance(text) <= win.stats_label.width()
    finally:
        app.setPalette(before)
