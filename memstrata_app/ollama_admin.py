"""The user's Ollama, administered: is it there, which models it has, which are loaded and where
(GPU, CPU or split), pull with progress and cancel, unload, keep-alive, and a "try it" that
measures time to first token and tokens/s. Synchronous (httpx); the app calls it off the GUI
thread, the CLI directly. Errors come back with plain advice (`explain_error`). It lives
outside the endpoint package so that the app's Models view imports httpx alone, never the
endpoint's modules, from its background threads (an import of `memstrata_app.proxy` there
would race the GUI thread's own import of the endpoint).

Shapes follow Ollama's API (docs/api.md): /api/version, /api/tags, /api/ps (size, size_vram,
expires_at, context_length), streamed /api/pull ({"status"}, {"status","digest","total",
"completed"}, …, {"status":"success"}, or an {"error"} line), /api/generate with keep_alive,
and the final chunk's durations in nanoseconds.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

RECOMMENDED_EMBED_MODEL = "nomic-embed-text"  # what `embedder: ollama:` defaults to
RECOMMENDED_EXTRACTION_MODEL = "qwen2.5:7b"  # follows a JSON schema well; fits 8 GB of VRAM
TRY_PROMPT = "In one sentence: why do caches go stale?"
LOADED_MS = 500.0  # a load_duration above this means the model had to be loaded for the request


@dataclass(frozen=True)
class ModelInfo:
    """One installed model (/api/tags)."""

    name: str
    size: int
    digest: str = ""
    family: str = ""
    parameter_size: str = ""
    quantization: str = ""
    modified_at: str = ""

    @property
    def is_embedding(self) -> bool:
        return "embed" in self.name or self.family in ("bert", "nomic-bert")


@dataclass(frozen=True)
class LoadedModel:
    """One model in memory (/api/ps): `size` bytes in all, `size_vram` of them on the GPU."""

    name: str
    size: int
    size_vram: int
    expires_at: str = ""
    context_length: int = 0

    @property
    def gpu_fraction(self) -> float:
        return min(1.0, self.size_vram / self.size) if self.size > 0 else 0.0

    @property
    def processor(self) -> str:
        """Where it runs, in `ollama ps`'s words: "100% GPU", "100% CPU", "48%/52% CPU/GPU"."""
        if self.size_vram == 0:
            return "100% CPU"
        if self.size_vram == self.size:
            return "100% GPU"
        if self.size_vram > self.size or self.size == 0:
            return "Unknown"
        cpu = round((self.size - self.size_vram) / self.size * 100)
        return f"{cpu}%/{100 - cpu}% CPU/GPU"

    @property
    def on_gpu(self) -> bool:
        return self.size_vram > 0

    @property
    def partial(self) -> bool:
        """Split between GPU and CPU: the model did not fit in GPU memory."""
        return 0 < self.size_vram < self.size


@dataclass
class OllamaStatus:
    """What one probe found at `url`."""

    url: str
    reachable: bool
    version: str = ""
    error: str = ""
    models: list[ModelInfo] = field(default_factory=list)
    loaded: list[LoadedModel] = field(default_factory=list)

    def installed(self, name: str) -> bool:
        return any(same_model(m.name, name) for m in self.models)

    def gpu_summary(self) -> str:
        """One line for the tray: where the loaded models run, or why there is nothing to say."""
        if not self.reachable:
            return f"Ollama not reachable at {self.url}"
        if not self.loaded:
            return f"Ollama {self.version}: no model loaded" if self.version else \
                "Ollama: no model loaded"
        parts = []
        for m in self.loaded:
            where = ("on CPU" if not m.on_gpu else "on GPU (100%)" if m.processor == "100% GPU"
                     else f"split {m.processor}")
            parts.append(f"{m.name} {where}")
        return "Ollama: " + ", ".join(parts)


@dataclass(frozen=True)
class PullProgress:
    """One line of /api/pull: `status`, and for a layer its digest and bytes so far."""

    status: str
    digest: str = ""
    total: int = 0
    completed: int = 0

    @property
    def fraction(self) -> float | None:
        return self.completed / self.total if self.total else None


@dataclass(frozen=True)
class Timing:
    """The generation side of one answer, from Ollama's final chunk (ns converted to ms)."""

    model: str
    total_ms: float
    load_ms: float
    prompt_eval_ms: float
    eval_ms: float
    prompt_eval_count: int
    eval_count: int

    @property
    def tokens_per_s(self) -> float:
        return self.eval_count / (self.eval_ms / 1000) if self.eval_ms > 0 else 0.0

    @property
    def loaded(self) -> bool:
        """Whether the model had to be loaded for this answer."""
        return self.load_ms >= LOADED_MS

    @classmethod
    def from_final(cls, chunk: dict[str, Any]) -> Timing | None:
        """From a `done: true` chunk that carries Ollama's durations; None otherwise."""
        if not isinstance(chunk, dict) or not chunk.get("done") or "eval_duration" not in chunk:
            return None

        def ms(key: str) -> float:
            v = chunk.get(key)
            return float(v) / 1e6 if isinstance(v, (int, float)) else 0.0

        def count(key: str) -> int:
            v = chunk.get(key)
            return int(v) if isinstance(v, (int, float)) else 0

        return cls(str(chunk.get("model") or ""), ms("total_duration"), ms("load_duration"),
                   ms("prompt_eval_duration"), ms("eval_duration"),
                   count("prompt_eval_count"), count("eval_count"))


@dataclass(frozen=True)
class TryResult:
    """A short prompt, measured: time to first token as the caller saw it, plus Ollama's split."""

    model: str
    ttft_ms: float
    wall_ms: float
    timing: Timing
    text: str

    @property
    def tokens_per_s(self) -> float:
        return self.timing.tokens_per_s


@dataclass(frozen=True)
class Advice:
    """What an Ollama error means for the user: `kind`, a plain `message`, and the model a pull
    would fix (for "not_found")."""

    kind: str  # not_found | memory | busy | loading | unreachable | other
    message: str
    model: str = ""


class OllamaError(Exception):
    """A failed Ollama call: the HTTP status (0: not reachable), Ollama's text, the advice."""

    def __init__(self, status: int, text: str, model: str = "", url: str = ""):
        self.status, self.text = status, text
        self.advice = explain_error(status, text, model, url)
        super().__init__(self.advice.message)


class PullCancelled(Exception):
    """The pull was cancelled; what was downloaded stays (Ollama resumes it next time)."""


def same_model(a: str, b: str) -> bool:
    def full(n: str) -> str:
        return n if ":" in n else n + ":latest"
    return full(a) == full(b)


def explain_error(status: int, text: str, model: str = "", url: str = "") -> Advice:
    """Ollama's error wording, in plain terms with what to do.

    Wordings as Ollama returns them: `model "x" not found, try pulling it first` (404),
    `pull model manifest: file does not exist` (a name the registry lacks),
    `model requires more system memory (5.0 GiB) than is available (3.9 GiB)` (500),
    CUDA/ROCm `out of memory` from a terminated runner, `server busy, please try again.
    maximum pending requests exceeded` (503), `timed out waiting for llama runner to start`.
    """
    low = (text or "").lower()
    where = f" at {url}" if url else ""
    if status == 0:
        return Advice("unreachable", f"Ollama is not reachable{where}: {text}. "
                      + install_help().splitlines()[0], model)
    if "not found, try pulling it first" in low or (status == 404 and "model" in low):
        name = model
        if '"' in text:
            name = text.split('"')[1] or model
        return Advice("not_found", f"The model {name!r} is not installed in Ollama{where}. "
                      "Pull it (Models view, or `memstrata ollama pull "
                      f"{name or 'MODEL'}`).", name)
    if "file does not exist" in low and "manifest" in low:
        return Advice("other", f"The Ollama library has no model named {model!r}: check "
                      "the name and tag on ollama.com/library.", model)
    if "requires more system memory" in low:
        return Advice("memory", "Not enough memory to load the model: " + text.strip()
                      + ". Unload other models, pick a smaller model or quantization, or "
                      "close programs that use the memory.", model)
    if "out of memory" in low or "cudamalloc" in low or "oom" in low.split():
        return Advice("memory", "The GPU ran out of memory loading or running the model ("
                      + text.strip() + "). Unload other models, use a smaller model or a "
                      "shorter context; Ollama may then run part of it on the CPU (slower).",
                      model)
    if "maximum pending requests" in low or "server busy" in low or status == 503:
        return Advice("busy", "Ollama is busy (its queue is full); try again in a moment.",
                      model)
    if "waiting for llama runner" in low or "loading model" in low:
        return Advice("loading", "Ollama is still loading the model (a large model can take "
                      "a minute the first time); try again when it is loaded.", model)
    return Advice("other", f"Ollama answered{where}: {text.strip() or f'HTTP {status}'}", model)


def install_help(platform: str | None = None) -> str:
    """How to install and start Ollama on this OS, a few plain lines."""
    plat = platform or sys.platform
    if plat.startswith("linux"):
        how = ("Install it: curl -fsSL https://ollama.com/install.sh | sh "
               "(it starts as a service); or run `ollama serve`.")
    elif plat == "darwin":
        how = ("Install the app from https://ollama.com/download (or `brew install ollama` "
               "and `ollama serve`), then open it.")
    elif plat.startswith("win"):
        how = ("Install OllamaSetup.exe from https://ollama.com/download; it runs in the "
               "tray (or run `ollama serve`).")
    else:
        how = "Install it from https://ollama.com/download and run `ollama serve`."
    return (how + "\nIf it runs elsewhere, set the Ollama URL in Settings or OLLAMA_HOST."
            "\nMemStrata still works without it, on its embedded defaults (local embedder, "
            "deterministic extraction).")


@dataclass(frozen=True)
class NeededModel:
    """A model a feature needs: what for, which setting names it, and whether it is installed."""

    name: str
    purpose: str
    setting: str
    installed: bool


def needed_models(status: OllamaStatus, embedder: str, extraction_model: str) -> list[NeededModel]:
    """The models the configured features use (or, when a feature is off, the recommended one
    to turn it on with), each marked installed or not."""
    on = embedder.startswith("ollama:")
    embed = embedder[len("ollama:"):] if on else RECOMMENDED_EMBED_MODEL
    extract = extraction_model or RECOMMENDED_EXTRACTION_MODEL
    return [NeededModel(embed, "embeddings" if on else
                        "embeddings through Ollama (optional: the local embedder is in use)",
                        "embedder", status.installed(embed)),
            NeededModel(extract, "extraction and judging" if extraction_model else
                        "extraction and judging (off until you pick a model)",
                        "extraction_model", status.installed(extract))]


def _error_text(r: httpx.Response) -> str:
    try:
        body = r.json()
    except ValueError:
        return r.text.strip() or f"HTTP {r.status_code}"
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return body["error"]
    return r.text.strip()


class OllamaAdmin:
    """A small synchronous client for Ollama's model-management API."""

    def __init__(self, base_url: str, timeout: float = 5.0,
                 transport: httpx.BaseTransport | None = None):
        self.url = base_url.rstrip("/")
        self.timeout = timeout
        self._client = httpx.Client(base_url=self.url, timeout=timeout, transport=transport,
                                    trust_env=False)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OllamaAdmin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- reading ------------------------------------------------------------------------------
    def _get(self, path: str) -> Any:
        try:
            r = self._client.get(path)
        except httpx.HTTPError as e:
            raise OllamaError(0, f"{type(e).__name__}: {e or 'no detail'}", url=self.url) \
                from None
        if r.status_code >= 400:
            raise OllamaError(r.status_code, _error_text(r), url=self.url)
        try:
            return r.json()
        except ValueError:
            raise OllamaError(r.status_code, f"not JSON from {path}: {r.text[:80]!r}",
                              url=self.url) from None

    def version(self) -> str:
        v = self._get("/api/version")
        return str(v.get("version", "")) if isinstance(v, dict) else ""

    def tags(self) -> list[ModelInfo]:
        out = []
        for m in (self._get("/api/tags") or {}).get("models") or []:
            d = m.get("details") or {}
            out.append(ModelInfo(str(m.get("name") or m.get("model") or ""),
                                 int(m.get("size") or 0), str(m.get("digest") or ""),
                                 str(d.get("family") or ""), str(d.get("parameter_size") or ""),
                                 str(d.get("quantization_level") or ""),
                                 str(m.get("modified_at") or "")))
        return out

    def ps(self) -> list[LoadedModel]:
        return [LoadedModel(str(m.get("name") or m.get("model") or ""), int(m.get("size") or 0),
                            int(m.get("size_vram") or 0), str(m.get("expires_at") or ""),
                            int(m.get("context_length") or 0))
                for m in (self._get("/api/ps") or {}).get("models") or []]

    def probe(self) -> OllamaStatus:
        """Version, installed and loaded models; never raises (unreachable is a status)."""
        try:
            version = self.version()
        except OllamaError as e:
            return OllamaStatus(self.url, False, error=e.text)
        status = OllamaStatus(self.url, True, version)
        try:
            status.models = self.tags()
            status.loaded = self.ps()
        except OllamaError as e:
            status.error = e.advice.message
        return status

    # --- changing -----------------------------------------------------------------------------
    def pull(self, name: str, on_progress: Callable[[PullProgress], None] | None = None,
             cancel: threading.Event | None = None) -> None:
        """Pull `name`, reporting each progress line; PullCancelled when `cancel` is set (the
        stream is closed, which stops Ollama's download), OllamaError on an error line."""
        try:
            with self._client.stream("POST", "/api/pull", json={"model": name, "stream": True},
                                     timeout=httpx.Timeout(self.timeout, read=None)) as r:
                if r.status_code >= 400:
                    r.read()
                    raise OllamaError(r.status_code, _error_text(r), name, self.url)
                for obj in _ndjson(r.iter_lines()):
                    if cancel is not None and cancel.is_set():
                        raise PullCancelled(f"pulling {name} was cancelled")
                    if "error" in obj:
                        raise OllamaError(r.status_code, str(obj["error"]), name, self.url)
                    p = PullProgress(str(obj.get("status") or ""), str(obj.get("digest") or ""),
                                     int(obj.get("total") or 0), int(obj.get("completed") or 0))
                    if on_progress is not None:
                        on_progress(p)
                    if p.status == "success":
                        return
        except httpx.HTTPError as e:
            if cancel is not None and cancel.is_set():
                raise PullCancelled(f"pulling {name} was cancelled") from None
            raise OllamaError(0, f"{type(e).__name__}: {e or 'no detail'}", name, self.url) \
                from None
        raise OllamaError(200, f"the pull of {name} ended without success", name, self.url)

    def _generate(self, body: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        try:
            r = self._client.post("/api/generate", json=body, timeout=timeout or 120.0)
        except httpx.HTTPError as e:
            raise OllamaError(0, f"{type(e).__name__}: {e or 'no detail'}", body["model"],
                              self.url) from None
        if r.status_code >= 400:
            raise OllamaError(r.status_code, _error_text(r), body["model"], self.url)
        out = r.json()
        return out if isinstance(out, dict) else {}

    def unload(self, name: str) -> None:
        """Free the model's memory now (generate with keep_alive 0)."""
        self._generate({"model": name, "keep_alive": 0, "stream": False})

    def load(self, name: str, keep_alive: str | int = "5m") -> None:
        """Load the model and keep it for `keep_alive` ("10m", "1h", -1 forever, 0 unload)."""
        self._generate({"model": name, "keep_alive": keep_alive, "stream": False}, 600.0)

    def try_model(self, name: str, prompt: str = TRY_PROMPT, num_predict: int = 48,
                  cancel: threading.Event | None = None) -> TryResult:
        """Stream a short answer; measure the first token's arrival and read Ollama's split."""
        body = {"model": name, "prompt": prompt, "stream": True,
                "options": {"num_predict": num_predict, "temperature": 0}}
        t0 = time.perf_counter()
        ttft = None
        text: list[str] = []
        final: dict[str, Any] = {}
        try:
            with self._client.stream("POST", "/api/generate", json=body,
                                     timeout=httpx.Timeout(self.timeout, read=600.0)) as r:
                if r.status_code >= 400:
                    r.read()
                    raise OllamaError(r.status_code, _error_text(r), name, self.url)
                for obj in _ndjson(r.iter_lines()):
                    if cancel is not None and cancel.is_set():
                        raise PullCancelled("cancelled")
                    if "error" in obj:
                        raise OllamaError(200, str(obj["error"]), name, self.url)
                    piece = obj.get("response") or ""
                    if piece and ttft is None:
                        ttft = (time.perf_counter() - t0) * 1000
                    text.append(piece)
                    if obj.get("done"):
                        final = obj
        except httpx.HTTPError as e:
            raise OllamaError(0, f"{type(e).__name__}: {e or 'no detail'}", name, self.url) \
                from None
        wall = (time.perf_counter() - t0) * 1000
        timing = Timing.from_final(final) or Timing(name, wall, 0, 0, 0, 0, 0)
        return TryResult(name, ttft if ttft is not None else wall, wall, timing, "".join(text))


def human_bytes(n: int) -> str:
    """Sizes as Ollama states them (decimal units): "274.3 MB", "4.7 GB"."""
    size = float(n)
    for unit in ("B", "KB", "MB"):
        if size < 1000:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} GB"


def _ndjson(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield obj
