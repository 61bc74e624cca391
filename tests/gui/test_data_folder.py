"""The app's data folder after a real start: the endpoint on, a setting saved, a fact stored by
the CLI through the app's endpoint (after the handshake); nothing in it open to other users."""

from __future__ import annotations

import os
import socket
from typing import Any

import pytest

from memstrata_app import paths
from memstrata_app.cli import main
from tests.security.test_data_folder_modes import loose_modes

from .conftest import seed

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_app_leaves_only_owner_only_files_and_serves_the_cli(
        qtbot: Any, local_embedder: Any, make_window: Any,
        capsys: pytest.CaptureFixture[str]) -> None:
    old = os.umask(0o022)
    try:
        seed(paths.db_path(), local_embedder, [("The api-gateway listens on port 8080.", None)])
        win = make_window(paths.db_path(), tray_available=True)
        endpoint = win.endpoint
        if not endpoint.available:
            pytest.skip("the endpoint package is not installed")
        from memstrata_app.bench.standin import OllamaStandIn

        with OllamaStandIn() as upstream:
            win.state.settings.set("ollama_url", upstream.url)
            win.state.settings.set("endpoint_port", free_port())
            with qtbot.waitSignal(endpoint.state_changed, timeout=20000):
                win.tray.endpoint_action.trigger()
            assert endpoint.running
            win.tray.memory_action.trigger()  # saves the settings (and the port with them)
            win.tray.memory_action.trigger()
            capsys.readouterr()
            code = main(["ingest", "The api-gateway listens on port 7443."])
            out = capsys.readouterr()
            assert code == 0 and "warning" not in out.err, out.err
            assert "7443" in out.out
            qtbot.waitUntil(lambda: any(win.ledger.model.assertion(r).object == "7443"
                                        for r in range(win.ledger.model.rowCount())),
                            timeout=10000)
            home = paths.data_dir()
            names = {p.name for p in home.iterdir()}
            assert {"memstrata.db", "settings.json", "token"} <= names, names
            assert loose_modes(home) == {}
            assert len(endpoint.server.app.state.sessions) == 1  # it shook hands with the app
            win.tray.endpoint_action.trigger()
    finally:
        os.umask(old)
