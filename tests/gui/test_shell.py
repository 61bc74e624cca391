"""Tray, closing, settings dialog and the entry point."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from memstrata_app.settings import Settings

from .conftest import seed


@pytest.fixture
def win(tmp_path: Path, local_embedder: Any, make_window: Any) -> Any:
    db = tmp_path / "ledger.db"
    seed(db, local_embedder, [("The api-gateway listens on port 8080.", None)])
    return make_window(db, tray_available=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_tray_toggle_switches_injection(qtbot: Any, win: Any) -> None:
    tray, endpoint = win.tray, win.endpoint
    assert tray.memory_action.isChecked() and endpoint.memory_enabled
    icon_on = tray.icon.icon().pixmap(32).toImage()
    tray.memory_action.trigger()
    assert not endpoint.memory_enabled
    assert Settings.load().get("memory_enabled") is False
    assert tray.icon.icon().pixmap(32).toImage() != icon_on
    assert "memory off" in tray.icon.toolTip()
    tray.memory_action.trigger()
    assert endpoint.memory_enabled and Settings.load().get("memory_enabled") is True


def chat(url: str, text: str) -> dict[str, Any]:
    body = {"model": "standin-chat", "stream": False,
            "messages": [{"role": "user", "content": text}]}
    req = urllib.request.Request(f"{url}/api/chat", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as resp:
        return dict(json.loads(resp.read()))


def test_tray_starts_the_endpoint_which_injects_and_feeds_the_charts(qtbot: Any, win: Any
                                                                      ) -> None:
    endpoint = win.endpoint
    if not endpoint.available:
        pytest.skip("the endpoint package is not installed")
    from memstrata_app.bench.standin import OllamaStandIn

    win.show_view("latency")
    with OllamaStandIn() as upstream:
        win.state.settings.set("ollama_url", upstream.url)
        win.state.settings.set("endpoint_port", free_port())
        with qtbot.waitSignal(endpoint.state_changed, timeout=20000):
            win.tray.endpoint_action.trigger()
        assert endpoint.running and win.tray.endpoint_action.isChecked()
        assert endpoint.url in win.tray.icon.toolTip()
        assert endpoint.url in win.endpoint_label.text()
        with qtbot.waitSignal(win.latency.redrawn, timeout=20000):
            reply = chat(endpoint.url, "Which port does the api-gateway listen on?")
        assert reply["message"]["content"].endswith("[memory]")  # the block reached the model
        assert win.latency.point_count("endpoint.total") == 1
        chat(endpoint.url, "The api-gateway listens on port 7443.")  # written by the endpoint
        qtbot.waitUntil(lambda: any(win.ledger.model.assertion(r).object == "7443"
                                    for r in range(win.ledger.model.rowCount())), timeout=10000)
        win.tray.memory_action.trigger()  # off: pure pass-through
        assert endpoint.server.memory_enabled is False
        reply = chat(endpoint.url, "Which port does the api-gateway listen on?")
        assert not reply["message"]["content"].endswith("[memory]")
        win.tray.endpoint_action.trigger()
        assert not endpoint.running and not win.tray.endpoint_action.isChecked()


def test_closing_hides_to_tray_and_says_so_once(qtbot: Any, win: Any) -> None:
    shown: list[str] = []
    win.tray.notify = lambda title, message: shown.append(title)
    win.close()
    assert not win.isVisible() and not win.is_shut_down
    win.tray.open_action.trigger()
    assert win.isVisible()
    win.close()
    assert shown == ["MemStrata keeps running"]
    win.tray.quit_action.trigger()
    assert win.is_shut_down and not win.client._thread.isRunning()


def test_without_a_tray_closing_quits(qtbot: Any, tmp_path: Path, make_window: Any) -> None:
    w = make_window(tmp_path / "empty.db", tray_available=False)
    w.close()
    assert w.is_shut_down and not w.client._thread.isRunning()


def test_settings_refuse_a_bad_value_with_the_reason(qtbot: Any, settings: Any) -> None:
    from memstrata_app.gui.settings_dialog import SettingsDialog

    dlg = SettingsDialog(settings)
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.set_value("endpoint_port", "80")
    assert "between 1024 and 65535" in dlg.errors["endpoint_port"].text()
    dlg.save()
    assert dlg.isVisible() and dlg.result() == 0
    assert "Endpoint port must be a port number" in dlg.message.text()
    assert Settings.load().get("endpoint_port") == 11435
    dlg.set_value("endpoint_port", "12000")
    dlg.set_value("quarantine_threshold", "0.7")
    dlg.save()
    assert not dlg.isVisible() and dlg.changed == {"endpoint_port": 12000,
                                                   "quarantine_threshold": 0.7}
    assert Settings.load().get("endpoint_port") == 12000


def test_main_opens_the_window_and_exits_cleanly(tmp_path: Path, settings: Any) -> None:
    settings.save()  # start_endpoint off: the app must not take the real port
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run(
        [sys.executable, "-m", "memstrata_app.gui", "--db", str(tmp_path / "l.db"),
         "--exit-when-ready"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "interactive (ledger on screen)" in proc.stderr


def test_a_ledger_that_cannot_open_is_explained(qtbot: Any, settings: Any) -> None:
    from PySide6.QtWidgets import QMessageBox

    from memstrata_app.engine import StoreLocked
    from memstrata_app.gui.state import AppState
    from memstrata_app.gui.window import MainWindow
    from memstrata_app.gui.worker import EngineClient

    def opener() -> Any:
        raise StoreLocked("the ledger is locked by another process")

    win = MainWindow(AppState(EngineClient(opener), settings), tray_available=False)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.client.open_failed):
        win.show()
    box = win.findChild(QMessageBox, "open_failed_box")
    assert box is not None and "locked by another process" in box.text()
    assert win.engine_label.text() == "Ledger not open"
    box.close()
    win.shutdown()


def test_the_window_module_stays_light() -> None:
    code = ("import sys, memstrata_app.gui.window; "
            "print(sorted(m for m in ('pyqtgraph', 'memstrata_app.proxy', 'torch', "
            "'sentence_transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert out.strip() == "[]"


def test_saved_settings_take_effect_at_once(qtbot: Any, win: Any, tmp_path: Path) -> None:
    """Quarantine threshold reaches the running engine; start at login writes the login item."""
    from memstrata_app import autostart
    from memstrata_app.gui.dialogs import apply_settings

    qtbot.waitUntil(lambda: win.client.engine is not None, timeout=30000)
    apply_settings(win, {"quarantine_threshold": 0.95, "start_at_login": True})
    qtbot.waitUntil(lambda: win.client.engine.quarantine_threshold == 0.95, timeout=10000)
    assert autostart.is_enabled()
    assert str(tmp_path) in str(autostart._linux_entry())  # the test's own config dir
    apply_settings(win, {"start_at_login": False})
    assert not autostart.is_enabled()
