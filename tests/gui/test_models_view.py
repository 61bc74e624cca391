"""The Models tab, driven as a user would, against the Ollama stand-in over loopback HTTP."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memstrata_app.bench.standin import CHAT_MODEL, EMBED_MODEL, OllamaStandIn
from memstrata_app.settings import Settings


@pytest.fixture
def upstream() -> Iterator[OllamaStandIn]:
    with OllamaStandIn() as up:
        yield up


@pytest.fixture
def view(qtbot: Any, settings: Any, upstream: OllamaStandIn) -> Iterator[Any]:
    from memstrata_app.gui.models import ModelsView

    settings.set("ollama_url", upstream.url)
    v = ModelsView(settings)
    qtbot.addWidget(v)
    v.resize(1100, 760)
    v.show()
    with qtbot.waitSignal(v.probed, timeout=10000):
        v.refresh()
    yield v
    v.shutdown()


def cells(table: Any, col: int) -> list[str]:
    return [table.item(r, col).text() for r in range(table.rowCount())]


def probe(qtbot: Any, view: Any) -> None:
    with qtbot.waitSignal(view.probed, timeout=10000):
        view.refresh()


def test_status_installed_and_loaded_with_the_gpu_split(qtbot: Any, view: Any,
                                                        upstream: OllamaStandIn) -> None:
    assert "Ollama 0.14.2" in view.status_label.text() and upstream.url in view.status_label.text()
    assert not view.missing.isVisible()
    assert {CHAT_MODEL, "standin-embed:latest"} <= set(cells(view.installed, 0))
    assert cells(view.loaded, 0) == [CHAT_MODEL, EMBED_MODEL]
    assert cells(view.loaded, 2) == ["100% GPU", "100% GPU"]
    assert not view.advice_box.isVisible()
    # the features' models: the extraction tier's recommended one is missing, offered to pull
    assert "qwen2.5:7b" in view.needed.text() and "not installed" in view.needed.text()
    assert view.pull_name.text() == "nomic-embed-text"  # the first missing one
    upstream.vram[CHAT_MODEL] = 0.52  # partial offload
    probe(qtbot, view)
    assert cells(view.loaded, 2) == ["48%/52% CPU/GPU", "100% GPU"]
    assert view.advice_box.isVisible() and "Running on the CPU" in view.advice.text()
    assert "partly on the CPU" in view.status_label.text()


def test_use_for_extraction_and_try_it(qtbot: Any, view: Any, memstrata_home: Path) -> None:
    assert view.select_model(CHAT_MODEL)
    assert view.use_button.isEnabled() and view.try_button.isEnabled()
    view.use_button.click()
    assert Settings.load().get("extraction_model") == CHAT_MODEL
    assert "extraction + judging" in cells(view.installed, 4)
    view.select_model("standin-embed:latest")
    assert not view.try_button.isEnabled()  # an embedding model has nothing to say
    view.select_model(CHAT_MODEL)
    with qtbot.waitSignal(view.tried, timeout=10000) as got:
        view.try_button.click()
    result = got.args[0]
    assert result.tokens_per_s > 0 and result.ttft_ms > 0
    text = view.try_result.text()
    assert "first token in" in text and "tokens/s" in text and f"{result.tokens_per_s:.1f}" in text


def test_pull_with_progress_then_cancel_another(qtbot: Any, view: Any,
                                                upstream: OllamaStandIn) -> None:
    upstream.pull_delay = 0.02
    view.pull_name.setText("standin-new")
    with qtbot.waitSignal(view.pull_finished, timeout=10000) as done:
        view.pull_button.click()
        assert view.cancel_button.isEnabled() and not view.pull_button.isEnabled()
    assert done.args == ["standin-new", "success"]
    assert view.progress.value() == 1000 and "pulled" in view.progress.format()
    qtbot.waitUntil(lambda: "standin-new:latest" in cells(view.installed, 0), timeout=10000)

    upstream.pull_delay = 0.3
    view.pull_name.setText("qwen2.5:7b")
    with qtbot.waitSignal(view.pull_finished, timeout=10000) as done:
        view.pull_button.click()
        qtbot.waitUntil(lambda: 0 < view.progress.value() < 1000, timeout=10000)
        assert "%" in view.progress.format()
        view.cancel_button.click()
    assert done.args == ["qwen2.5:7b", "cancelled"]
    assert "resumes" in view.pull_status.text() and view.pull_button.isEnabled()
    probe(qtbot, view)
    assert "qwen2.5:7b" not in cells(view.installed, 0)


def test_unload_and_keep_alive(qtbot: Any, view: Any, upstream: OllamaStandIn) -> None:
    view.loaded.selectRow(0)
    assert view.unload_button.isEnabled()
    with qtbot.waitSignal(view.probed, timeout=10000):
        view.unload_button.click()
    assert cells(view.loaded, 0) == [EMBED_MODEL]
    assert upstream.last("/api/generate").json["keep_alive"] == 0
    view.select_model(CHAT_MODEL)
    view.keep_alive.setCurrentIndex(view.keep_alive.count() - 1)  # until Ollama stops
    with qtbot.waitSignal(view.probed, timeout=10000):
        view.keep_button.click()
    until = dict(zip(cells(view.loaded, 0), cells(view.loaded, 4), strict=True))
    assert set(until) == {CHAT_MODEL, EMBED_MODEL} and until[CHAT_MODEL] == "forever"
    assert until[EMBED_MODEL].endswith("UTC")
    assert upstream.last("/api/generate").json["keep_alive"] == -1


def test_model_not_found_offers_the_pull(qtbot: Any, view: Any) -> None:
    with qtbot.waitSignal(view.action_failed, timeout=10000):
        view.try_model("nomic-embed-text")
    assert "is not installed" in view.advice.text()
    assert view.advice_pull.isVisible() and view.advice_pull.text() == "Pull nomic-embed-text"
    with qtbot.waitSignal(view.pull_finished, timeout=10000) as done:
        view.advice_pull.click()
    assert done.args == ["nomic-embed-text", "success"]
    qtbot.waitUntil(lambda: not view.advice_box.isVisible(), timeout=10000)
    qtbot.waitUntil(lambda: "nomic-embed-text:latest" in cells(view.installed, 0))


@pytest.mark.parametrize(("status", "text", "says"), [
    (500, "model requires more system memory (5.0 GiB) than is available (3.9 GiB)",
     "Not enough memory"),
    (500, "llama runner process has terminated: cudaMalloc failed: out of memory",
     "GPU ran out of memory"),
    (503, "server busy, please try again.  maximum pending requests exceeded", "busy"),
    (500, "timed out waiting for llama runner to start", "still loading"),
])
def test_errors_are_said_plainly(qtbot: Any, view: Any, upstream: OllamaStandIn,
                                 status: int, text: str, says: str) -> None:
    upstream.fail[CHAT_MODEL] = (status, text)
    with qtbot.waitSignal(view.action_failed, timeout=10000):
        view.try_model(CHAT_MODEL)
    assert says in view.advice.text() and view.advice_box.isVisible()
    assert not view.advice_pull.isVisible()


def test_ollama_missing_says_what_to_do(qtbot: Any, settings: Any) -> None:
    from memstrata_app.gui.models import ModelsView

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.set("ollama_url", f"http://127.0.0.1:{port}")
    v = ModelsView(settings)
    qtbot.addWidget(v)
    v.show()
    try:
        with qtbot.waitSignal(v.probed, timeout=10000):
            v.refresh()
        assert "Ollama is not running at" in v.status_label.text()
        assert v.missing.isVisible() and "ollama serve" in v.missing.text()
        assert "still works" in v.missing.text() and "OLLAMA_HOST" in v.missing.text()
        assert not v.pull_button.isEnabled() and not v.try_button.isEnabled()
        v.copy_button.click()
        from PySide6.QtWidgets import QApplication

        assert QApplication.clipboard().text() == v.install_command()
        with qtbot.waitSignal(v.settings_requested, timeout=1000):
            v.url_button.click()
        assert v.status is not None and v.status.gpu_summary().startswith("Ollama not reachable")
    finally:
        v.shutdown()


def test_window_has_the_tab_and_the_tray_says_where_the_model_runs(
        qtbot: Any, tmp_path: Path, settings: Any, make_window: Any,
        upstream: OllamaStandIn) -> None:
    settings.set("ollama_url", upstream.url)
    win = make_window(tmp_path / "ledger.db")
    qtbot.waitUntil(lambda: "Ollama:" in win.tray.icon.toolTip(), timeout=15000)
    assert f"Ollama: {CHAT_MODEL} on GPU (100%)" in win.tray.icon.toolTip()
    assert "memory on" in win.tray.icon.toolTip()  # the line is added, nothing replaced
    win.show_view("models")
    assert win.tabs.currentWidget() is win.models
    upstream.vram[CHAT_MODEL] = 0.0
    with qtbot.waitSignal(win.models.probed, timeout=10000):
        win.models.refresh_button.click()
    assert f"{CHAT_MODEL} on CPU" in win.tray.icon.toolTip()


def chat(url: str, text: str, **extra: Any) -> dict[str, Any]:
    body = {"model": "standin-chat", "stream": True, **extra,
            "messages": [{"role": "user", "content": text}]}
    with httpx.stream("POST", f"{url}/api/chat", json=body, timeout=20) as r:
        lines = [line for line in r.iter_lines() if line]
    return dict(json.loads(lines[-1]))


def test_latency_view_splits_each_proxied_request(qtbot: Any, tmp_path: Path, settings: Any,
                                                  make_window: Any,
                                                  upstream: OllamaStandIn) -> None:
    from memstrata_app.gui.latency import SPLIT

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.set("ollama_url", upstream.url)
    settings.set("endpoint_port", port)
    win = make_window(tmp_path / "ledger.db")
    if not win.endpoint.available:
        pytest.skip("the endpoint package is not installed")
    with qtbot.waitSignal(win.endpoint.state_changed, timeout=20000):
        win.tray.endpoint_action.trigger()
    win.show_view("latency")
    qtbot.waitUntil(lambda: win.latency is not None)
    lat = win.latency
    url = win.endpoint.url
    upstream.chunk_delay = 0.02
    chat(url, "The deploy target is eu-west-1.")
    httpx_unload = httpx.post(f"{upstream.url}/api/generate",
                                            json={"model": CHAT_MODEL, "keep_alive": 0})
    assert httpx_unload.json()["done_reason"] == "unload"
    final = chat(url, "Which region do we deploy to?")
    assert final["load_duration"] >= 0.5e9  # the model had to load
    qtbot.waitUntil(lambda: len(lat.requests()) == 2 and lat.point_count("ollama.eval") == 2,
                    timeout=10000)
    lat.series.setCurrentText(SPLIT)
    assert lat.split.isVisible() and not lat.summary.isVisible()
    first, second = lat.requests()
    assert not first.get("loaded") and second["loaded"] and second["load"] >= 500
    assert second["first"] > second["load"] and first["memory"] > 0
    assert len(lat.bars) == 6  # five parts and the outline
    assert cells(lat.split, 0) == [CHAT_MODEL]
    assert cells(lat.split, 1) == ["2"] and cells(lat.split, 8) == ["1"]
    assert float(cells(lat.split, 7)[0]) > 10  # tokens/s
    assert f"load {upstream.load_ms:.0f} ms" in lat.stats.text()
    lat.series.setCurrentText("endpoint.total")
    assert lat.summary.isVisible() and not lat.bars
    brushes = lat.points.opts["symbolBrush"]
    assert len(brushes) == 2 and brushes[0] != brushes[1]  # the loaded request stands out
    win.tray.endpoint_action.trigger()


def test_first_probe_says_in_the_status_bar_what_is_missing(qtbot: Any, tmp_path: Path,
                                                           settings: Any, make_window: Any,
                                                           upstream: OllamaStandIn) -> None:
    settings.set("ollama_url", upstream.url)
    settings.set("extraction_model", "qwen2.5:7b")  # set, but not pulled yet
    win = make_window(tmp_path / "ledger.db")
    qtbot.waitUntil(lambda: "qwen2.5:7b is not installed" in win.statusBar().currentMessage(),
                    timeout=15000)
    assert "Models tab (Ctrl+8)" in win.statusBar().currentMessage()
