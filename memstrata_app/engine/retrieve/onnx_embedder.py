"""The local embedder on ONNX Runtime: all-MiniLM-L6-v2 exported with its pooling
(scripts/build_onnx_embedder.py), run with `tokenizers` and `onnxruntime` — no torch.

Two graphs of the one model, two vector spaces:
- `model-int8.onnx`, weights quantized to int8 per channel (`local:all-MiniLM-L6-v2@int8`):
  the default for a new ledger — half the resident memory of fp32, a faster query and twice
  the batch throughput, and the same results on every benchmark set (docs/PERFORMANCE.md);
- `model.onnx`, fp32 (`local:all-MiniLM-L6-v2`): the vectors of the sentence-transformers
  pipeline (cosine ≥ 0.9999, checked on build and by tests/engine/test_onnx_embedder.py), so
  a ledger embedded through torch reads on without reindexing; a ledger that recorded this
  space keeps it. int8's vectors are near fp32's (cosine 0.98–1.0) but not the same, so a
  ledger never mixes the two: changing means re-embedding (`memstrata reindex`).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..types import EngineError

log = logging.getLogger(__name__)

ONNX_MODEL_FOLDER = "minilm-onnx"
ONNX_MODEL_ENV = "MEMSTRATA_ONNX_MODEL"
ONNX_META = "embedder.json"
ONNX_THREADS_ENV = "MEMSTRATA_ONNX_THREADS"
ONNX_RUNS_ENV = "MEMSTRATA_ONNX_RUNS"
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length (sentence_bert_config.json)
LOCAL_NAME = "local:all-MiniLM-L6-v2"  # the fp32 space: the model, whatever runs it
LOCAL_DIM = 384
FP32_FILE = "model.onnx"
INT8_FILE = "model-int8.onnx"  # its weights quantized (the build writes both)
LOCAL_INT8_NAME = LOCAL_NAME + "@int8"  # the default local space
LOCAL_FILES = {LOCAL_INT8_NAME: INT8_FILE, LOCAL_NAME: FP32_FILE}  # space -> graph


def onnx_model_dir() -> Path:
    """Where the ONNX embedder's files are: $MEMSTRATA_ONNX_MODEL, else the folder
    scripts/build_onnx_embedder.py builds (scripts/setup.sh runs it) inside the package."""
    env = os.environ.get(ONNX_MODEL_ENV)
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parents[2] / "resources" / ONNX_MODEL_FOLDER


def _env_count(name: str, default: int) -> int:
    env = os.environ.get(name, "")
    return int(env) if env.isdigit() and int(env) > 0 else default


def default_threads(one_input: bool = True) -> int:
    """ONNX Runtime's intra-op threads per run: $MEMSTRATA_ONNX_THREADS, else 1 for runs of
    one input (int8's sentences, the judge's pairs: a second thread would wait through most
    of such a run; several run at once instead, `run_each`), one per core (at most 2) for
    fp32's batches of 32."""
    return _env_count(ONNX_THREADS_ENV, 1 if one_input else min(2, os.cpu_count() or 1))


def default_runs(one_input: bool = True) -> int:
    """Runs of one session at once: $MEMSTRATA_ONNX_RUNS, else one per core (at most 2) for
    runs of one input, 1 for fp32's batches (their two threads fill the cores)."""
    return _env_count(ONNX_RUNS_ENV, min(2, os.cpu_count() or 1) if one_input else 1)


_pool: Any = None  # a ThreadPoolExecutor of _pool_size threads, made on first need
_pool_size = 0
_pool_lock = threading.Lock()


def run_each(session: Any, output: str, feeds: Sequence[dict[str, np.ndarray]],
             runs: int) -> list[np.ndarray]:
    """`output` of each feed, in order, with up to `runs` of them on `session` at once.

    An ONNX Runtime session takes concurrent runs, each on its caller's thread, over the one
    copy of its weights. The app's runs are short (one sentence, or one pair, each: int8 is a
    function of the input only when read alone), and a second intra-op thread in such a run
    waits for most of it: on 2 cores, one thread per run and two runs at once embed ~1.8× as
    many sentences per second as one run on two threads, and judge ~1.6× as many pairs, the
    same bits either way; a single input takes ~4% longer on one thread than on two
    (docs/PERFORMANCE.md, "Runs at once"; tests/engine/test_onnx_embedder.py)."""
    if runs <= 1 or len(feeds) <= 1:
        return [session.run([output], f)[0] for f in feeds]
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < runs:
            from concurrent.futures import ThreadPoolExecutor

            if _pool is not None:
                _pool.shutdown(wait=False)  # (its queued work still runs)
            _pool, _pool_size = ThreadPoolExecutor(runs, thread_name_prefix="onnx-run"), runs
        pool = _pool
    runs = min(runs, len(feeds))
    parts = [pool.submit(lambda share: [session.run([output], f)[0] for f in share],
                         feeds[w::runs]) for w in range(runs)]
    out: list[Any] = [None] * len(feeds)
    for w, part in enumerate(parts):  # (shortest first in the callers: shares stay even)
        out[w::runs] = part.result()
    return out


def onnx_session(path: Path, threads: int) -> Any:
    """One CPU inference session as the app runs them: `threads` intra-op threads, one
    inter-op thread, sequential execution, every graph optimization, quiet logs."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def padded(encodings: Sequence[Any]) -> dict[str, np.ndarray]:
    """A batch of `tokenizers` encodings as right-padded int64 arrays (ids, mask, type ids)."""
    width = max((len(e.ids) for e in encodings), default=0)
    ids = np.zeros((len(encodings), max(width, 1)), dtype=np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for r, e in enumerate(encodings):
        n = len(e.ids)
        ids[r, :n] = e.ids
        mask[r, :n] = 1
        types[r, :n] = e.type_ids
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


class OnnxEmbedder:
    """all-MiniLM-L6-v2 on ONNX Runtime (CPU), loaded on first use; the default embedder.

    `model_file`: the graph inside the folder (`model.onnx`, fp32, by default; `name` must be
    its space: `LOCAL_FILES`). Sentences are embedded shortest first in batches of `batch_size`,
    so a batch pads little; rows come back in the order given. `batch_size` defaults to 32 for
    fp32 and to 1 for int8: its layers quantize their inputs with one scale per run, over
    every row and the padding, so in a batch a sentence's vector moved with its neighbours
    (cosine 0.96–0.99 to itself alone); alone it is a function of the sentence, and int8 one
    at a time is as fast as fp32 in batches (docs/PERFORMANCE.md)."""

    def __init__(self, folder: str | Path | None = None, batch_size: int | None = None,
                 threads: int | None = None, model_file: str = FP32_FILE,
                 name: str = LOCAL_NAME, runs: int | None = None):
        self.name = name
        self.folder = Path(folder) if folder is not None else onnx_model_dir()
        self.batch_size = batch_size or (1 if model_file == INT8_FILE else 32)
        one_input = self.batch_size == 1
        self.threads = threads or default_threads(one_input)  # intra-op threads per run
        self.runs = runs or default_runs(one_input)  # runs at once (run_each)
        self.model_file = model_file
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return LOCAL_DIM

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def _missing(self, what: str) -> EngineError:
        if self.model_file == FP32_FILE and (self.folder / INT8_FILE).is_file():
            # an installed app carries the int8 graph only; a ledger of the fp32 space moves
            return EngineError(
                f"this ledger's vectors are of {LOCAL_NAME} (fp32), whose graph this install"
                f" does not carry ({what} in {self.folder}); re-embed the ledger once with"
                " `memstrata reindex --to local` (in the app: Ledger → Re-embed the"
                " ledger…), which moves it to the int8 graph this install has")
        return EngineError(
            f"the local embedder's model is missing ({what} in {self.folder}): run "
            "scripts/setup.sh (it builds it with scripts/build_onnx_embedder.py), or set "
            f"${ONNX_MODEL_ENV} to a folder that holds it")

    def load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            graph, vocab = self.folder / self.model_file, self.folder / "tokenizer.json"
            for f in (graph, vocab):
                if not f.is_file():
                    raise self._missing(f.name)
            from tokenizers import Tokenizer

            try:
                tok = Tokenizer.from_file(str(vocab))
                session = onnx_session(graph, self.threads)
            except Exception as e:  # a damaged file: say which, and how to rebuild it
                raise self._missing(f"a readable {self.model_file} ({e})") from e
            tok.enable_truncation(MAX_TOKENS)
            tok.no_padding()
            self._tokenizer = tok
            self._inputs = {i.name for i in session.get_inputs()}
            self._session = session
            log.info("local embedder (ONNX Runtime, %d runs at once, %d thread(s) each)"
                     " loaded from %s", self.runs, self.threads, self.folder)

    def meta(self) -> dict[str, Any]:
        """What the build recorded (embedder.json), or {} when it is missing."""
        try:
            return dict(json.loads((self.folder / ONNX_META).read_text()))
        except (OSError, ValueError):
            return {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        texts = list(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        encs = self._tokenizer.encode_batch([texts[i] for i in order])
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        starts = range(0, len(encs), self.batch_size)
        feeds = [{k: v for k, v in padded(encs[s:s + self.batch_size]).items()
                  if k in self._inputs} for s in starts]
        for s, vecs in zip(starts, run_each(self._session, "embedding", feeds, self.runs),
                           strict=True):
            out[order[s:s + self.batch_size]] = vecs
        return out
