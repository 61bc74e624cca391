"""Every failure of the endpoint, the embedder, the ledger and Ollama reaches the window in words,
with what to do: a banner and a status-bar line, never only the log."""

from __future__ import annotations

import re
import socket
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import seed

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def banner_text(win: Any, kind: str) -> str:
    banner = win.notices.banners.get(kind)
    assert banner is not None, f"no {kind} banner; shown: {list(win.notices.banners)}"
    assert banner.isVisible()
    return str(banner.label.text())


@pytest.fixture
def open_window(qtbot: Any, settings: Any) -> Any:
    """`open_window(opener)`: a window on the engine `opener` returns (or fails to)."""
    from memstrata_app.gui.state import AppState
    from memstrata_app.gui.window import MainWindow
    from memstrata_app.gui.worker import EngineClient

    made: list[Any] = []

    def make(opener: Callable[[], Any]) -> Any:
        win = MainWindow(AppState(EngineClient(opener), settings), tray_available=False)
        made.append(win)
        qtbot.addWidget(win)
        win.show()
        return win

    yield make
    for win in made:
        win.shutdown()


def test_a_port_in_use_says_which_port_and_how_to_change_it(qtbot: Any, tmp_path: Path,
                                                            local_embedder: Any,
                                                            make_window: Any) -> None:
    db = tmp_path / "ledger.db"
    seed(db, local_embedder, [("The api-gateway listens on port 8080.", T0)])
    win = make_window(db)
    if not win.endpoint.available:
        pytest.skip("the endpoint package is not installed")
    port = free_port()
    win.state.settings.set("endpoint_port", port)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen(1)
        with qtbot.waitSignal(win.endpoint.start_failed, timeout=20000):
            win.tray.endpoint_action.trigger()
        text = banner_text(win, "endpoint")
        assert f"port {port} is already in use" in text
        assert "Settings → Endpoint port" in text
        assert f"port {port} is in use" in win.statusBar().currentMessage()
        assert f"Endpoint stopped: port {port} in use" in win.endpoint_label.text()
        banner = win.notices.banners["endpoint"]
        assert {"Open Settings…", "Try again"} <= set(banner.buttons)
    # the port is free again: Try again starts it, and the banner goes
    with qtbot.waitSignal(win.endpoint.state_changed, timeout=20000):
        win.notices.banners["endpoint"].buttons["Try again"].click()
    qtbot.waitUntil(lambda: win.endpoint.running, timeout=20000)
    assert "endpoint" not in win.notices.banners
    assert win.endpoint.url in win.endpoint_label.text()
    win.endpoint.stop()


def test_an_embedder_that_cannot_load_says_what_to_do(qtbot: Any, tmp_path: Path,
                                                      open_window: Any) -> None:
    from memstrata_app.bench.standin import EMBED_MODEL, OllamaStandIn
    from memstrata_app.engine import MemoryEngine

    db = tmp_path / "ollama.db"
    model = EMBED_MODEL.split(":")[0]
    with OllamaStandIn() as up, MemoryEngine.open(db, embedder=f"ollama:{model}",
                                                  ollama_host=up.url) as eng:
        eng.ingest("The api-gateway listens on port 8080.")
    gone = f"http://127.0.0.1:{free_port()}"  # Ollama has stopped since

    win = open_window(lambda: MemoryEngine.open(db, embedder="auto", ollama_host=gone))
    with qtbot.waitSignal(win.client.warm_failed, timeout=30000):
        pass
    text = banner_text(win, "embedder")
    assert "The embedder could not load" in text and model in text
    assert "ollama serve" in text and f"ollama pull {model}" in text
    assert "local</b> embedder in Settings" in text
    assert "embedder could not load" in win.statusBar().currentMessage()
    assert win.engine_label.text() == "Embedder not loaded"


def test_a_damaged_ledger_is_explained_with_what_to_do(qtbot: Any, tmp_path: Path,
                                                       local_embedder: Any,
                                                       open_window: Any) -> None:
    from PySide6.QtWidgets import QMessageBox

    from memstrata_app.engine import MemoryEngine

    db = tmp_path / "damaged.db"
    db.write_bytes(b"this is not a database, it only carries its name" * 100)
    win = open_window(lambda: MemoryEngine.open(db, embedder=local_embedder))
    with qtbot.waitSignal(win.client.open_failed, timeout=20000):
        pass
    text = banner_text(win, "ledger")
    assert "damaged" in text or "not a readable" in text
    assert "File → Open ledger…" in text
    assert "Open another ledger…" in win.notices.banners["ledger"].buttons
    box = win.findChild(QMessageBox, "open_failed_box")
    assert box is not None and "File → Open ledger…" in box.text()
    box.close()


def test_a_locked_ledger_is_explained_when_a_write_waits_too_long(qtbot: Any, tmp_path: Path,
                                                                  local_embedder: Any,
                                                                  make_window: Any) -> None:
    import apsw

    db = tmp_path / "ledger.db"
    seed(db, local_embedder, [("The api-gateway listens on port 8080.", T0)])
    win = make_window(db)
    other = apsw.Connection(str(db))  # another program, in the middle of its own write
    other.execute("BEGIN EXCLUSIVE")
    try:
        win.ingest.text.setPlainText("The api-gateway listens on port 8443.")
        with qtbot.waitSignal(win.client.store_failed, timeout=30000):
            win.ingest.submit_text()
        text = banner_text(win, "ledger")
        assert "locked by another program" in text and "try again" in text
        assert "locked" in win.statusBar().currentMessage()
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_ollama_not_running_says_how_to_start_it_or_where_to_point(
        qtbot: Any, tmp_path: Path, settings: Any, make_window: Any) -> None:
    from memstrata_app.bench.standin import OllamaStandIn

    port = free_port()
    settings.set("ollama_url", f"http://127.0.0.1:{port}")
    settings.set("extraction_model", "qwen2.5:7b")  # something that needs Ollama
    win = make_window(tmp_path / "ledger.db")
    qtbot.waitUntil(lambda: "ollama" in win.notices.banners, timeout=20000)
    text = banner_text(win, "ollama")
    assert f"Ollama is not running at http://127.0.0.1:{port}" in text
    assert "ollama serve" in text and "Settings → Ollama URL" in text
    buttons = win.notices.banners["ollama"].buttons
    assert {"Try again", "Open Settings…", "Copy “ollama serve”"} <= set(buttons)
    # dismissed, it stays away while nothing changes
    win.notices.banners["ollama"].dismiss_button.click()
    assert "ollama" not in win.notices.banners and not win.notices.isVisible()
    qtbot.waitUntil(lambda: not win.models.bg.busy, timeout=20000)
    with qtbot.waitSignal(win.models.status_changed, timeout=20000):
        win.models.refresh()
    assert "ollama" not in win.notices.banners
    # Try again re-asks at once; once Ollama answers, the banner goes
    win.troubles.retry_ollama()
    qtbot.waitUntil(lambda: "ollama" in win.notices.banners, timeout=20000)
    with OllamaStandIn(port=port):
        qtbot.waitUntil(lambda: not win.models.bg.busy, timeout=20000)
        with qtbot.waitSignal(win.models.status_changed, timeout=20000):
            win.notices.banners["ollama"].buttons["Try again"].click()
        assert "ollama" not in win.notices.banners


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(message=st.text(min_size=0, max_size=200), port=st.integers(1024, 65535),
       kind=st.sampled_from(["StoreLocked", "StoreCorrupt", "StoreReadOnly", "EngineError"]))
def test_every_failure_says_what_to_do_and_shows_its_text_as_text(
        qtbot: Any, message: str, port: int, kind: str) -> None:
    """Whatever a failure's message holds (markup included), the banner shows it as text and
    ends in something to do."""
    import html

    from memstrata_app import engine
    from memstrata_app.gui import notices

    exc = getattr(engine, kind)(message)
    carrying = [notices.ledger_failed(exc), notices.embedder_failed(message, "local"),
                notices.embedder_failed(message, "ollama:x")]
    endpoint = notices.endpoint_failed(message, port)
    low = message.lower()
    if not any(w in low for w in ("already in use", "is this endpoint itself", "not installed")):
        carrying.append(endpoint)
        assert str(port) in endpoint.headline
    made = [*carrying, endpoint, notices.ollama_unreachable(f"http://127.0.0.1:{port}", True)]
    for n in made:
        assert n.headline and n.status
        assert any(w in n.advice for w in ("Settings", "File → Open ledger…", "try again",
                                           "ollama serve", "Reinstall", "install"))
    for n in carrying:  # the message is shown as text: its markup escaped
        assert html.escape(message) in n.advice


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_a_banner_follows_the_theme(qtbot: Any, theme: str) -> None:
    """Shown in one theme, switched to the other: its colours come from the new palette."""
    from typing import cast

    from PySide6.QtGui import QColor
    from PySide6.QtWidgets import QApplication

    from memstrata_app.gui import notices
    from memstrata_app.gui.style import apply_theme

    app = cast(QApplication, QApplication.instance())
    before = app.palette()
    try:
        apply_theme(app, "light" if theme == "dark" else "dark")
        area = notices.NoticeArea()
        qtbot.addWidget(area)
        banner = area.show_notice(notices.ollama_unreachable("http://127.0.0.1:1", False))
        apply_theme(app, theme)
        style = banner.styleSheet()
        bg = QColor(re.search(r"background: (#[0-9a-f]{6})", style).group(1))  # type: ignore[union-attr]
        text = QColor(re.search(r"QLabel \{ color: (#[0-9a-f]{6})", style).group(1))  # type: ignore[union-attr]
        assert (bg.lightnessF() < 0.5) == (theme == "dark"), style
        assert abs(bg.lightnessF() - text.lightnessF()) > 0.45, style  # readable
    finally:
        app.setPalette(before)
