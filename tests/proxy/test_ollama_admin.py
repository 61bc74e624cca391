"""The Ollama admin client against the stand-in over loopback HTTP: probe, GPU split, pull with
progress and cancel, unload and keep-alive, "try it", and the errors people hit."""

from __future__ import annotations

import json
import socket
import threading
import time

import httpx
import pytest

from memstrata_app.bench.standin import CHAT_MODEL, EMBED_MODEL, OllamaStandIn
from memstrata_app.ollama_admin import (
    LoadedModel,
    OllamaAdmin,
    OllamaError,
    PullCancelled,
    PullProgress,
    Timing,
    explain_error,
    install_help,
    needed_models,
)


@pytest.fixture
def admin(upstream: OllamaStandIn):
    with OllamaAdmin(upstream.url) as a:
        yield a


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_probe_reports_version_models_and_the_gpu_split(admin: OllamaAdmin,
                                                        upstream: OllamaStandIn) -> None:
    st = admin.probe()
    assert st.reachable and st.version == "0.14.2" and not st.error
    assert {m.name for m in st.models} >= {CHAT_MODEL, EMBED_MODEL}
    assert [m.name for m in st.loaded] == [CHAT_MODEL, EMBED_MODEL]
    chat = st.loaded[0]
    assert chat.size > 0 and chat.size_vram == chat.size and chat.processor == "100% GPU"
    assert chat.expires_at.endswith("Z") and chat.context_length == 4096
    assert st.gpu_summary() == (f"Ollama: {CHAT_MODEL} on GPU (100%), "
                                f"{EMBED_MODEL} on GPU (100%)")

    upstream.vram[CHAT_MODEL] = 0.52  # partial offload: the model did not fit in VRAM
    chat = admin.probe().loaded[0]
    assert chat.partial and chat.processor == "48%/52% CPU/GPU"
    assert f"{CHAT_MODEL} split 48%/52% CPU/GPU" in admin.probe().gpu_summary()
    upstream.vram[CHAT_MODEL] = 0.0
    chat = admin.probe().loaded[0]
    assert not chat.on_gpu and chat.processor == "100% CPU"
    assert f"{CHAT_MODEL} on CPU," in admin.probe().gpu_summary()


def test_processor_wording_matches_ollama_ps() -> None:
    assert LoadedModel("m", 100, 100).processor == "100% GPU"
    assert LoadedModel("m", 100, 0).processor == "100% CPU"
    assert LoadedModel("m", 1000, 745).processor == "26%/74% CPU/GPU"
    assert LoadedModel("m", 0, 5).processor == "Unknown"


def test_probe_of_nothing_listening_says_so_without_raising() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with OllamaAdmin(url, timeout=2) as a:
        st = a.probe()
    assert not st.reachable and st.error and st.models == [] and st.loaded == []
    assert st.gpu_summary() == f"Ollama not reachable at {url}"
    with OllamaAdmin(url, timeout=2) as a, pytest.raises(OllamaError) as e:
        a.tags()
    assert e.value.status == 0 and e.value.advice.kind == "unreachable"
    assert "not reachable" in str(e.value) and url in str(e.value)


def test_pull_reports_progress_and_installs_the_model(admin: OllamaAdmin,
                                                      upstream: OllamaStandIn) -> None:
    assert not admin.probe().installed("standin-new")
    seen: list[PullProgress] = []
    admin.pull("standin-new", seen.append)
    assert seen[0].status == "pulling manifest" and seen[-1].status == "success"
    layers = [p for p in seen if p.digest]
    assert len({p.digest for p in layers}) >= 2  # weights and the small layers
    weights = [p for p in layers if p.digest == layers[0].digest]
    assert [p.completed for p in weights] == sorted(p.completed for p in weights)
    assert weights[-1].fraction == 1.0 and weights[0].fraction == 0.0 and weights[0].total > 1e9
    assert any(p.status == "verifying sha256 digest" for p in seen)
    assert upstream.last("/api/pull").json == {"model": "standin-new", "stream": True}
    assert admin.probe().installed("standin-new")  # /api/tags lists it now
    r = httpx.post(upstream.url + "/api/chat", json={
        "model": "standin-new", "stream": False,
        "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 200 and r.json()["message"]["content"] == "You said: hi"


def test_pull_of_a_name_the_library_lacks_raises_ollamas_error(admin: OllamaAdmin) -> None:
    with pytest.raises(OllamaError) as e:
        admin.pull("no-such-model:1b")
    assert e.value.text == "pull model manifest: file does not exist"
    assert e.value.advice.kind == "other" and "ollama.com/library" in str(e.value)


def test_cancel_stops_a_pull_mid_stream(admin: OllamaAdmin, upstream: OllamaStandIn) -> None:
    upstream.pull_delay = 0.2
    cancel = threading.Event()
    seen: list[PullProgress] = []

    def on_progress(p: PullProgress) -> None:
        seen.append(p)
        if p.completed:  # some bytes are in: the user presses Cancel
            cancel.set()

    t0 = time.monotonic()
    with pytest.raises(PullCancelled):
        admin.pull("qwen2.5:7b", on_progress, cancel)
    assert time.monotonic() - t0 < 2.0  # the stream has 14 lines 0.2 s apart
    assert seen[-1].status != "success"
    time.sleep(3.0)  # the rest of the stand-in's stream would have ended by now
    assert not admin.probe().installed("qwen2.5:7b")  # the manifest was never written


def test_unload_load_and_keep_alive(admin: OllamaAdmin, upstream: OllamaStandIn) -> None:
    admin.unload(CHAT_MODEL)
    assert upstream.last("/api/generate").json == {"model": CHAT_MODEL, "keep_alive": 0,
                                                  "stream": False}
    assert [m.name for m in admin.ps()] == [EMBED_MODEL]
    admin.unload(EMBED_MODEL)
    assert admin.ps() == []
    admin.load(CHAT_MODEL, keep_alive="1h")
    (m,) = admin.ps()
    left = httpx.get(upstream.url + "/api/ps").json()["models"][0]["expires_at"]
    assert m.name == CHAT_MODEL and left > time.strftime("%Y-%m-%dT%H:%M", time.gmtime(
        time.time() + 3500))
    admin.load(CHAT_MODEL, keep_alive=-1)
    assert admin.ps()[0].expires_at.startswith("2318")  # Ollama's "forever"
    with pytest.raises(OllamaError) as e:
        admin.unload("ghost:7b")
    assert e.value.status == 404 and e.value.advice.kind == "not_found"
    assert e.value.advice.model == "ghost:7b"


def test_try_it_measures_first_token_and_tokens_per_second(admin: OllamaAdmin,
                                                           upstream: OllamaStandIn) -> None:
    upstream.chunk_delay = 0.02
    warm = admin.try_model(CHAT_MODEL, "say something short please")
    assert warm.text.startswith("You said: say something")
    assert 0 < warm.ttft_ms < warm.wall_ms
    assert warm.timing.eval_count == 6 and not warm.timing.loaded
    assert warm.tokens_per_s == pytest.approx(42.0, rel=0.05)
    admin.unload(CHAT_MODEL)
    upstream.vram[CHAT_MODEL] = 0.0
    cold = admin.try_model(CHAT_MODEL, "say something short please")
    assert cold.timing.loaded and cold.timing.load_ms == pytest.approx(upstream.load_ms)
    assert cold.ttft_ms > upstream.load_ms  # the load is waited for, as it is in Ollama
    assert cold.tokens_per_s < warm.tokens_per_s / 3  # on the CPU
    assert CHAT_MODEL in [m.name for m in admin.ps()]  # the try loaded it


@pytest.mark.parametrize(("status", "text", "kind"), [
    (500, "model requires more system memory (5.0 GiB) than is available (3.9 GiB)", "memory"),
    (500, "llama runner process has terminated: cudaMalloc failed: out of memory", "memory"),
    (503, "server busy, please try again.  maximum pending requests exceeded", "busy"),
    (500, "timed out waiting for llama runner to start - progress 0.28", "loading"),
])
def test_errors_people_hit_come_back_with_advice(admin: OllamaAdmin, upstream: OllamaStandIn,
                                                 status: int, text: str, kind: str) -> None:
    upstream.fail[CHAT_MODEL] = (status, text)
    with pytest.raises(OllamaError) as e:
        admin.try_model(CHAT_MODEL)
    assert e.value.status == status and e.value.text == text
    assert e.value.advice.kind == kind


def test_explain_error_wordings() -> None:
    nf = explain_error(404, 'model "qwen2.5:7b" not found, try pulling it first')
    assert nf.kind == "not_found" and nf.model == "qwen2.5:7b" and "pull" in nf.message.lower()
    mem = explain_error(500, "model requires more system memory (5.0 GiB) than is available "
                             "(3.9 GiB)")
    assert "5.0 GiB" in mem.message and "smaller model" in mem.message
    assert explain_error(418, "teapot").kind == "other"


def test_install_help_per_os() -> None:
    assert "install.sh" in install_help("linux")
    assert "brew install ollama" in install_help("darwin")
    assert "OllamaSetup.exe" in install_help("win32")
    for plat in ("linux", "darwin", "win32"):
        assert "OLLAMA_HOST" in install_help(plat) and "still works" in install_help(plat)


def test_needed_models_follow_the_settings(admin: OllamaAdmin) -> None:
    st = admin.probe()
    embed, extract = needed_models(st, "ollama:standin-embed", "")
    assert embed.name == "standin-embed" and embed.installed
    assert extract.name == "qwen2.5:7b" and not extract.installed
    assert extract.setting == "extraction_model"
    embed, extract = needed_models(st, "local", "standin-chat")
    assert embed.name == "nomic-embed-text" and not embed.installed and extract.installed


def test_timing_from_a_final_chunk() -> None:
    t = Timing.from_final({"model": "m", "done": True, "total_duration": 3_000_000_000,
                           "load_duration": 2_000_000_000, "prompt_eval_count": 10,
                           "prompt_eval_duration": 50_000_000, "eval_count": 20,
                           "eval_duration": 500_000_000})
    assert t is not None and t.loaded and t.tokens_per_s == 40.0 and t.load_ms == 2000.0
    assert Timing.from_final({"done": False}) is None


# --- `memstrata ollama` --------------------------------------------------------------------
def ollama_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from memstrata_app.cli import main

    code = main(["ollama", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_status_models_pull_try_unload(upstream: OllamaStandIn, memstrata_home: object,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    url = ["--url", upstream.url]
    code, out, _ = ollama_cli(capsys, "status", *url)
    assert code == 0 and "Ollama 0.14.2" in out and f"loaded {CHAT_MODEL}" in out
    assert "100% GPU" in out
    upstream.vram[CHAT_MODEL] = 0.25
    code, out, _ = ollama_cli(capsys, "status", *url, "--json")
    loaded = json.loads(out)["loaded"][0]
    assert code == 0 and loaded["processor"] == "75%/25% CPU/GPU"
    code, out, _ = ollama_cli(capsys, "models", *url)
    assert code == 0 and "standin-embed:latest" in out
    assert "memstrata ollama pull qwen2.5:7b" in out  # the extraction tier's model is missing
    code, _, err = ollama_cli(capsys, "pull", "qwen2.5:7b", *url)
    assert code == 0 and "success" in err and "100%" in err
    code, out, _ = ollama_cli(capsys, "models", *url)
    assert "qwen2.5:7b (installed)" in out
    code, out, _ = ollama_cli(capsys, "try", "qwen2.5:7b", *url, "--json")
    tried = json.loads(out)
    assert code == 0 and tried["loaded"] and tried["tokens_per_s"] > 0 and tried["eval_count"]
    code, out, _ = ollama_cli(capsys, "unload", "qwen2.5:7b", *url)
    with OllamaAdmin(upstream.url) as a:
        assert code == 0 and "qwen2.5:7b" not in [m.name for m in a.ps()]
    code, _, err = ollama_cli(capsys, "try", "ghost", *url)
    assert code == 1 and "not installed" in err and "memstrata ollama pull ghost" in err


def test_cli_says_what_to_do_when_ollama_is_missing(memstrata_home: object,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = ollama_cli(capsys, "status", "--url", f"http://127.0.0.1:{free_port()}")
    assert code == 1 and "not running" in out and "ollama" in out.lower()
    assert "still works" in out


def test_the_admin_client_never_imports_the_endpoint_package() -> None:
    """The app's Models view imports it on background threads while the GUI thread may be
    importing the endpoint: importing `memstrata_app.proxy` there raced it (a partially
    initialised module in the bundled app)."""
    import subprocess
    import sys

    code = ("import sys, memstrata_app.ollama_admin; "
            "sys.exit('memstrata_app.proxy' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0
