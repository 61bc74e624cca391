"""What users expect of the menus: File → Open ledger… (and recent ones), a Help menu (the
documentation, where the data lives, the version) and Memory → Connect a tool…"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QGuiApplication

from .conftest import seed

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Opened(QObject):
    """The desktop's handler for file:// links, for the test: what was asked to be opened."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


@pytest.fixture
def opened() -> Iterator[Opened]:
    handler = Opened()
    QDesktopServices.setUrlHandler("file", handler, "open")
    yield handler
    QDesktopServices.unsetUrlHandler("file")


@pytest.fixture
def two(tmp_path: Path, local_embedder: Any) -> tuple[Path, Path]:
    a, b = tmp_path / "work.db", tmp_path / "home.db"
    seed(a, local_embedder, [("The api-gateway listens on port 8080.", T0)])
    seed(b, local_embedder, [("The blog runs on hugo.", T0), ("Node version is 20.", T0)])
    return a, b


def texts(win: Any) -> list[str]:
    m = win.ledger.model
    return sorted(m.assertion(r).text for r in range(m.rowCount()))


def menu(win: Any, title: str) -> Any:
    return next(a.menu() for a in win.menuBar().actions() if a.text().replace("&", "") == title)


def test_open_ledger_switches_the_app_and_remembers_it(qtbot: Any, two: tuple[Path, Path],
                                                       make_window: Any) -> None:
    from memstrata_app.gui import recent

    a, b = two
    win = make_window(a)
    file_menu = menu(win, "File")
    opener = next(x for x in file_menu.actions() if x.text() == "&Open ledger…")
    assert opener is win.open_ledger_action and not opener.shortcut().isEmpty()
    qtbot.waitUntil(lambda: texts(win) == ["The api-gateway listens on port 8080."])

    with qtbot.waitSignal(win.client.ready, timeout=30000):
        win.switch_ledger(b)
    qtbot.waitUntil(lambda: texts(win) == ["Node version is 20.", "The blog runs on hugo."],
                    timeout=10000)
    assert str(b) in win.location_label.full
    assert win.ledger_file() == str(b.resolve())
    assert recent.load()[:2] == [str(b.resolve()), str(a.resolve())]
    win.recent_menu.aboutToShow.emit()
    items = [x for x in win.recent_menu.actions() if x.isCheckable()]
    assert [x.text().split("  ", 1)[1] for x in items] == [str(b.resolve()), str(a.resolve())]
    assert items[0].isChecked() and not items[1].isChecked()

    # a file that cannot be opened leaves the app where it was, and says so
    bad = b.parent / "damaged.db"
    bad.write_bytes(b"not a ledger at all" * 200)
    with qtbot.waitSignal(win.client.reopen_failed, timeout=30000):
        win.switch_ledger(bad)
    assert "ledger" in win.notices.banners
    assert win.ledger_file() == str(b.resolve())
    assert win.engine_label.text() != "Opening the ledger…"
    assert texts(win) == ["Node version is 20.", "The blog runs on hugo."]

    with qtbot.waitSignal(win.client.ready, timeout=30000):
        items[1].trigger()  # back to the first, from Open recent
    qtbot.waitUntil(lambda: texts(win) == ["The api-gateway listens on port 8080."],
                    timeout=10000)
    assert "ledger" not in win.notices.banners


def test_the_endpoint_follows_the_app_to_the_other_ledger(qtbot: Any, two: tuple[Path, Path],
                                                          make_window: Any) -> None:
    a, b = two
    win = make_window(a)
    if not win.endpoint.available:
        pytest.skip("the endpoint package is not installed")
    win.state.settings.set("endpoint_port", free_port())
    with qtbot.waitSignal(win.endpoint.state_changed, timeout=20000):
        win.endpoint.start()
    qtbot.waitUntil(lambda: win.endpoint.running, timeout=20000)
    with qtbot.waitSignal(win.client.ready, timeout=30000):
        win.switch_ledger(b)
    qtbot.waitUntil(lambda: win.endpoint.running, timeout=30000)
    assert win.endpoint.server.engine is win.client.engine
    assert str(win.client.engine.path) == str(b)
    # a ledger that cannot be opened: the app stays on b, and so does the endpoint
    bad = b.parent / "damaged.db"
    bad.write_bytes(b"not a ledger at all" * 200)
    with qtbot.waitSignal(win.client.reopen_failed, timeout=30000):
        win.switch_ledger(bad)
    qtbot.waitUntil(lambda: win.endpoint.running, timeout=30000)
    assert win.endpoint.server.engine is win.client.engine
    assert str(win.client.engine.path) == str(b)
    win.endpoint.stop()


def test_help_opens_the_docs_says_the_version_and_where_the_data_lives(
        qtbot: Any, two: tuple[Path, Path], make_window: Any, opened: Opened) -> None:
    from PySide6.QtWidgets import QMessageBox

    from memstrata_app import __version__, paths
    from memstrata_app.gui.help import DataPlacesDialog

    win = make_window(two[0])
    help_menu = menu(win, "Help")
    names = [x.text().replace("&", "") for x in help_menu.actions() if not x.isSeparator()]
    assert names == ["Documentation", "The app guide", "Where my data lives", "About MemStrata"]
    acts = {x.text().replace("&", ""): x for x in help_menu.actions()}
    acts["Documentation"].trigger()
    acts["The app guide"].trigger()
    assert [u.toLocalFile() for u in opened.urls] == [str(ROOT / "README.md"),
                                                      str(ROOT / "docs" / "APP.md")]

    acts["About MemStrata"].trigger()
    box = win.findChild(QMessageBox, "about_box")
    assert box is not None and f"MemStrata desktop {__version__}" in box.text()
    assert str(two[0]) in box.text()
    box.close()

    acts["Where my data lives"].trigger()
    dlg = win.findChild(DataPlacesDialog, "data_places")
    assert dlg is not None and dlg.isVisible()
    assert dlg.fields["Data folder"].text() == str(paths.data_dir())
    assert dlg.fields["Ledger in use"].text() == str(two[0])
    assert dlg.fields["Settings"].text() == str(paths.settings_path())
    dlg.open_buttons["Ledger in use"].click()
    dlg.open_buttons["Data folder"].click()
    assert [u.toLocalFile() for u in opened.urls[2:]] == [str(two[0].parent),
                                                          str(paths.data_dir())]
    dlg.close()


def test_connect_a_tool_shows_each_api_and_each_tools_snippet(qtbot: Any, two: tuple[Path, Path],
                                                              make_window: Any) -> None:
    from memstrata_app.connect import TOOLS

    win = make_window(two[0])
    port = free_port()
    win.state.settings.set("endpoint_port", port)
    connect = next(x for x in menu(win, "Memory").actions() if "Connect a tool" in x.text())
    connect.trigger()
    dlg = win.connect_dialog
    assert dlg is not None and dlg.isVisible()
    addresses = {api: f.text() for api, f in dlg.address_fields.items()}
    assert addresses == {"Ollama native": f"http://127.0.0.1:{port}",
                         "OpenAI": f"http://127.0.0.1:{port}/v1",
                         "Anthropic": f"http://127.0.0.1:{port}",
                         "MCP": "memstrata mcp"}
    assert "stopped" in dlg.state_line.text() and not dlg.send.isEnabled()
    wanted = {"Claude Code", "Codex CLI", "Continue (cn, VS Code, JetBrains)", "Aider",
              "llm (with llm-ollama)"}
    assert wanted <= {t.tool for t in TOOLS}
    for i, t in enumerate(TOOLS):
        dlg.tool.setCurrentIndex(i)
        snippet = dlg.snippet.toPlainText()
        assert snippet == t.text(port)
        if "mcp" not in snippet:
            assert f"127.0.0.1:{port}" in snippet, t.tool
        dlg.copy_snippet.click()
        assert QGuiApplication.clipboard().text() == snippet
    dlg.close()


def test_the_snippets_are_the_ones_the_docs_show() -> None:
    """One place: memstrata_app/connect.py; docs/CONNECT.md shows the same text."""
    from memstrata_app.connect import TOOLS

    doc = (ROOT / "docs" / "CONNECT.md").read_text("utf-8")
    blocks = re.findall(r"```[a-z]*\n(.*?)```", doc, re.S)
    for t in TOOLS:
        assert t.snippet() in blocks, f"{t.tool}: docs/CONNECT.md lacks\n{t.snippet()}"
        if t.then:
            assert t.shell() in blocks, f"{t.tool}: docs/CONNECT.md lacks\n{t.shell()}"


@pytest.mark.parametrize("ollama", ["absent", "stand-in"])
def test_a_test_request_shows_the_block_the_endpoint_injected(
        qtbot: Any, tmp_path: Path, local_embedder: Any, make_window: Any, ollama: str) -> None:
    from memstrata_app.bench.standin import CHAT_MODEL, OllamaStandIn

    db = tmp_path / "ledger.db"
    seed(db, local_embedder, [("The api-gateway listens on port 8443.", T0),
                              ("The billing service uses redis.", T0)])
    win = make_window(db)
    if not win.endpoint.available:
        pytest.skip("the endpoint package is not installed")
    up = OllamaStandIn().start() if ollama == "stand-in" else None
    try:
        url = up.url if up is not None else f"http://127.0.0.1:{free_port()}"
        win.state.settings.set("ollama_url", url)
        win.state.settings.set("endpoint_port", free_port())
        with qtbot.waitSignal(win.endpoint.state_changed, timeout=20000):
            win.endpoint.start()
        qtbot.waitUntil(lambda: win.endpoint.running, timeout=20000)
        before = win.ledger.model.total
        dlg = win.connect_tool()
        assert "listens on" in dlg.state_line.text() and dlg.send.isEnabled()
        dlg.question.setText("Which port does the api-gateway listen on?")
        dlg.model.setCurrentText(CHAT_MODEL)
        with qtbot.waitSignal(dlg.tested, timeout=60000) as tested:
            dlg.send.click()
        outcome = tested.args[0]
        block = dlg.block.toPlainText()
        assert block.startswith("<memstrata-memory>") and block.endswith("</memstrata-memory>")
        assert json.dumps("The api-gateway listens on port 8443.") in block
        assert outcome.logged is not None and outcome.logged["tool"].startswith(
            "memstrata-app-connect-test/")
        words = dlg.outcome_line.text()
        if ollama == "absent":
            assert outcome.status in (502, 503, 504)
            assert "Ollama did not answer" in words and "ollama serve" in words
        else:
            assert outcome.status == 200 and "It works" in words
            assert outcome.reply.endswith("[memory]")  # the stand-in saw the block
        # a question: nothing was stored
        qtbot.wait(500)
        assert win.ledger.model.total == before
        dlg.close()
    finally:
        win.endpoint.stop()
        if up is not None:
            up.stop()


def test_the_first_run_hint_leads_to_import_and_to_connect_a_tool(
        qtbot: Any, tmp_path: Path, make_window: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    win = make_window(tmp_path / "empty.db")
    hint = win.ledger.empty_hint
    qtbot.waitUntil(lambda: "No facts yet" in hint.text(), timeout=10000)
    assert "href='connect'" in hint.text() and "Connect a tool" in hint.text()
    hint.linkActivated.emit("connect")
    assert win.connect_dialog is not None and win.connect_dialog.isVisible()
    win.connect_dialog.close()
    asked: list[int] = []
    monkeypatch.setattr(win, "import_statements", lambda: asked.append(1))  # not the file dialog
    hint.linkActivated.emit("import")
    assert asked == [1]
