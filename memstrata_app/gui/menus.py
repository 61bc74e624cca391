"""The window's menu bar: File (open a ledger, recent ones, import, settings), Memory (the
switches, Connect a tool), View (the tabs, the as-of bar) and Help (documentation, where the data
lives, about)."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from . import recent
from .dialogs import open_settings, run_reindex


def build_menus(win: Any) -> None:
    """Fill `win`'s menu bar; the write actions (off while read-only) go to `win.write_actions`."""
    _file_menu(win)
    _memory_menu(win)
    _view_menu(win)
    _help_menu(win)


def _action(win: Any, text: str, keys: object = None) -> QAction:
    act = QAction(text, win)
    if keys is not None:
        act.setShortcut(QKeySequence(keys))  # type: ignore[call-overload]
    return act


def _file_menu(win: Any) -> None:
    m = win.menuBar().addMenu("&File")
    win.write_actions = []
    opener = _action(win, "&Open ledger…", QKeySequence.StandardKey.Open)
    opener.setToolTip("Switch the app to another ledger file")
    opener.triggered.connect(win.choose_ledger)
    m.addAction(opener)
    win.open_ledger_action = opener
    win.recent_menu = QMenu("Open rec&ent", win)
    win.recent_menu.setObjectName("recent_menu")
    win.recent_menu.aboutToShow.connect(lambda: fill_recent(win))
    m.addMenu(win.recent_menu)
    fill_recent(win)
    m.addSeparator()
    for text, keys, slot in (
            ("&Import statements…", "Ctrl+I", win.import_statements),
            ("&Settings…", QKeySequence.StandardKey.Preferences, lambda: open_settings(win)),
            ("&Re-embed the ledger…", "Ctrl+Shift+E", lambda: run_reindex(win)),
            ("&Quit", QKeySequence.StandardKey.Quit, win.quit)):
        act = _action(win, text, keys)
        if act.shortcut().isEmpty():  # the platform has no standard key for it
            act.setShortcut(QKeySequence({"&Settings…": "Ctrl+,", "&Quit": "Ctrl+Q"}[text]))
        act.triggered.connect(slot)
        if text == "&Quit":
            m.addSeparator()
        m.addAction(act)
        if text.startswith(("&Import", "&Re-embed")):
            win.write_actions.append(act)


def fill_recent(win: Any) -> None:
    """The recent ledgers, the one in use marked; a click switches to it."""
    menu = win.recent_menu
    menu.clear()
    current = win.ledger_file()
    items = recent.load()
    for i, path in enumerate(items):
        act = menu.addAction(f"&{i + 1}  {path}" if i < 9 else path)
        act.setCheckable(True)
        act.setChecked(path == current)
        act.triggered.connect(lambda _c=False, p=path: win.switch_ledger(p))
    menu.setEnabled(bool(items))


def _memory_menu(win: Any) -> None:
    tray = win.tray
    from .edit_menu import EditMenu

    win.edit = EditMenu(win, win.state)  # Edit → Undo (Ctrl+Z)
    mem = win.menuBar().addMenu("&Memory")
    mem.addAction(tray.memory_action)
    mem.addAction(tray.endpoint_action)
    if tray.memory_action.shortcut().isEmpty():
        tray.memory_action.setShortcut(QKeySequence("Ctrl+Shift+M"))
    if tray.endpoint_action.shortcut().isEmpty():
        tray.endpoint_action.setShortcut(QKeySequence("Ctrl+Shift+P"))
    for act in (tray.memory_action, tray.endpoint_action):
        win.addAction(act)  # the shortcut works while the window has focus
    mem.addSeparator()
    connect = _action(win, "&Connect a tool…", "Ctrl+Shift+O")
    connect.setToolTip("The endpoint's address per API, each tool's set-up, and a test request")
    connect.triggered.connect(win.connect_tool)
    mem.addAction(connect)
    win.connect_action = connect


def _view_menu(win: Any) -> None:
    view = win.menuBar().addMenu("&View")
    for i in range(win.tabs.count()):
        title = win.tabs.tabText(i)
        act = QAction({"Latency": "Lat&ency"}.get(title, "&" + title), win)
        act.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
        act.triggered.connect(lambda _c=False, i=i: win.tabs.setCurrentIndex(i))
        view.addAction(act)
    view.addSeparator()
    now = _action(win, "As of &now", "Ctrl+0")
    now.triggered.connect(win.asof.go_now)
    view.addAction(now)
    known = _action(win, "&Known at (transaction time)", "Ctrl+Shift+K")
    known.setCheckable(True)
    known.setToolTip("The as-of instant reads the ledger as it was known then")
    known.toggled.connect(win.asof.set_known_mode)
    win.state.known_at_changed.connect(known.setChecked)
    win.known_action = known
    view.addAction(known)
    space = _action(win, "Choose the &space", "Ctrl+Shift+S")
    space.triggered.connect(win.focus_space)
    view.addAction(space)
    toggle = win.space_toolbar.toggleViewAction()
    toggle.setShortcut(QKeySequence("Ctrl+Shift+T"))
    toggle.setText("Space tool&bar")
    view.addAction(toggle)
    find = _action(win, "&Find in the ledger", QKeySequence.StandardKey.Find)
    find.triggered.connect(win.focus_search)
    view.addAction(find)


def _help_menu(win: Any) -> None:
    from .help import DataPlacesDialog, open_doc, show_about

    m = win.menuBar().addMenu("Hel&p")
    docs = _action(win, "&Documentation", QKeySequence.StandardKey.HelpContents)
    docs.setToolTip("Open the README: what MemStrata does, set-up, connecting tools")
    docs.triggered.connect(lambda: open_doc(win, "readme"))
    m.addAction(docs)
    guide = _action(win, "The &app guide", "Shift+F1")
    guide.setToolTip("Open docs/APP.md: every view of this window")
    guide.triggered.connect(lambda: open_doc(win, "app"))
    m.addAction(guide)
    m.addSeparator()

    def places() -> None:
        win.data_dialog = DataPlacesDialog(win.client.engine, win)
        win.data_dialog.open()

    where = _action(win, "&Where my data lives", "Ctrl+Shift+D")
    where.triggered.connect(places)
    m.addAction(where)
    about = _action(win, "A&bout MemStrata", "Ctrl+Shift+F1")
    about.triggered.connect(lambda: show_about(win, win.client.engine))
    m.addAction(about)
