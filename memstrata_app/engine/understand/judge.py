"""The update judge: reads an active fact beside a new statement and says whether the new one
*updates* it (gives its slot another value, retires, renames or hands it over), *restates* it,
or is *compatible* with it (both stay true).

A cross-encoder fine-tuned from all-MiniLM-L6-v2 (scripts/train_judge.py), run with ONNX
Runtime on the CPU: deterministic, offline, no LLM. Its files live in
`memstrata_app/resources/judge/` (`judge.onnx`, `tokenizer.json`, `judge.json` with the
version, the calibration temperature and the measured thresholds). Another backend (the
Ollama tier) implements the same `Judge` protocol.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..retrieve.onnx_embedder import default_runs, default_threads, padded, run_each
from ..types import EngineError

log = logging.getLogger(__name__)

LABELS = ("updates", "restates", "compatible")
UPDATES, RESTATES, COMPATIBLE = range(3)
JUDGE_ENV = "MEMSTRATA_JUDGE_MODEL"
MAX_TOKENS = 128  # a pair longer than this keeps each side's start (truncation: longest first)


@dataclass(frozen=True)
class Verdict:
    """The judge's calibrated probabilities for one (active fact, new statement) pair."""

    updates: float
    restates: float
    compatible: float

    @property
    def label(self) -> str:
        probs = (self.updates, self.restates, self.compatible)
        return LABELS[int(np.argmax(probs))]

    def __str__(self) -> str:
        return (f"updates {self.updates:.2f} · restates {self.restates:.2f}"
                f" · compatible {self.compatible:.2f}")


@dataclass(frozen=True)
class JudgedPair:
    """A candidate active sentence and the judge's verdict on the new statement beside it,
    computed before the write (outside the writer's transaction)."""

    text_hash: str
    text: str
    score: float  # how the candidate was found: its retrieval score for the new statement
    verdict: Verdict
    later: bool = False  # the candidate was said after the statement (a late statement):
    #                     the verdict reads the statement as the older line
    # a candidate that divides into parts (clauses.py), read part by part: P(updates) of
    # each, and when only some of them are updates, the rest in its own words and its vector
    parts: tuple[float, ...] = ()
    remainder: str | None = None
    remainder_vector: Any = None
    # where a rule retires the sentence already (it decided that a fact changed), the part
    # reading only says which part: exactly one part reading as an update at the review
    # threshold, the sentence without it and every other part plainly not; its rest, as above
    rule_rest: str | None = None
    rule_rest_vector: Any = None
    # a candidate pasting two or more config lines (`minSdkVersion 23` `targetSdkVersion 35`):
    # for each line, (the line, the sentence without it, its vector), for a rule that retires
    # the one line's value to keep the others current in words that no longer state it
    span_rests: tuple[tuple[str, str, Any], ...] = ()
    # no part reads as an update sure enough to retire, but exactly one between the review
    # and the retire thresholds, the sentence without it and every other part plainly not:
    # that part's index (a reviewer decides; approving retires that part alone)
    review_part: int | None = None
    # the verdict reads as an update (≥ review) but not from the pair: why ("unrelated …",
    # "one-sided …"); such a verdict retires nothing and raises no review item
    ungrounded: str | None = None


@dataclass(frozen=True)
class Thresholds:
    """Where a verdict turns into an action (settings; defaults measured on the calibration
    writers for precision, see judge.json)."""

    supersede: float = 0.9     # P(updates) at or above: retire the active fact
    review: float = 0.6        # between review and supersede: hold for review
    veto: float = 0.9          # P(compatible) at or above: a rule retirement goes to review
    # a reading is evidence of an update only when it comes from the pair (candidates.py,
    # Judging.ungrounded): the two sentences at least this close (cosine of their vectors)…
    relate: float = 0.0
    # …and the older one, beside sentences about nothing at all, reading as updated at most
    # this surely (a sentence that itself tells of a change reads as "updated" beside anything)
    one_sided: float = 1.0


class Judge(Protocol):
    """`judge(active_fact, new_statement)` for many pairs at once."""

    name: str  # recorded as the method: judge:<name>

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]: ...


def judge_dir() -> Path:
    env = os.environ.get(JUDGE_ENV)
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parents[2] / "resources" / "judge"


def judge_available(folder: Path | None = None) -> bool:
    d = folder or judge_dir()
    return (d / "judge.onnx").is_file() and (d / "judge.json").is_file()


def default_thresholds(folder: Path | None = None) -> Thresholds:
    """The thresholds recorded with the model (those measured at training time)."""
    try:
        meta = json.loads(((folder or judge_dir()) / "judge.json").read_text())
    except (OSError, ValueError):
        return Thresholds()
    t = meta.get("thresholds") or {}
    base = Thresholds()
    return Thresholds(float(t.get("supersede", base.supersede)),
                      float(t.get("review", base.review)), float(t.get("veto", base.veto)),
                      float(t.get("relate", base.relate)),
                      float(t.get("one_sided", base.one_sided)))


class OnnxJudge:
    """The built-in judge: the fine-tuned cross-encoder on ONNX Runtime, loaded on first use.

    `threads`: ONNX Runtime's intra-op threads per run (default 1), `runs`: pairs read at
    once on the one session (default one per core, at most 2; retrieve/onnx_embedder.py's
    `run_each`: ~1.6× the pairs per second of one run on two threads on the write path, the
    same bits; docs/PERFORMANCE.md). Calls
    are serialised by a lock: one session serves every caller.

    `batch_size` 1: each pair is read alone. The graph's int8 layers quantize their inputs
    with one scale per run, taken over every row (and the padding) of the batch, so read in
    a batch a pair's P(updates) moved with its neighbours — by up to 0.5, across the retire
    threshold for 3 pairs in 200 of the corpus — and whether a fact retired depended on what
    else was judged with it. Alone it is a function of the pair; batching bought no
    throughput on 2 cores (pairs/s measured within noise at 1, 8 and 32)."""

    def __init__(self, folder: Path | None = None, threads: int | None = None,
                 batch_size: int = 1, runs: int | None = None):
        self.folder = folder or judge_dir()
        self.threads = threads or default_threads()
        self.runs = runs or default_runs()
        self.batch_size = batch_size
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self.meta: dict[str, Any] = {}
        self.temperature = 1.0
        self.name = "unloaded"
        self._read_meta()

    def _read_meta(self) -> None:
        try:
            self.meta = json.loads((self.folder / "judge.json").read_text())
        except (OSError, ValueError) as e:
            raise EngineError(f"the update judge is missing from {self.folder}: {e}. Reinstall"
                              " MemStrata, or train it with scripts/train_judge.py") from e
        self.temperature = float(self.meta.get("temperature", 1.0))
        self.name = str(self.meta.get("version", "unknown"))
        labels = tuple(self.meta.get("labels", LABELS))
        if labels != LABELS:
            raise EngineError(f"the judge in {self.folder} answers {labels}, not {LABELS}")

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            from tokenizers import Tokenizer

            from ..retrieve.onnx_embedder import onnx_session

            self._session = onnx_session(self.folder / "judge.onnx", self.threads)
            tok = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
            tok.enable_truncation(MAX_TOKENS, strategy="longest_first")
            tok.no_padding()
            self._tokenizer = tok
            self._inputs = {i.name for i in self._session.get_inputs()}
            log.info("update judge %s loaded from %s", self.name, self.folder)

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Raw (uncalibrated) logits, one row per pair, in LABELS order."""
        if not pairs:
            return np.zeros((0, len(LABELS)), dtype=np.float32)
        self.load()
        # shortest first, so each batch pads little; results are put back in order
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        with self._lock:
            encs = self._tokenizer.encode_batch([(pairs[i][0], pairs[i][1]) for i in order])
            feeds = [{k: v for k, v in padded(encs[s:s + self.batch_size]).items()
                      if k in self._inputs} for s in range(0, len(encs), self.batch_size)]
            out = run_each(self._session, "logits", feeds, self.runs)
        logits = np.concatenate(out, axis=0)
        back = np.empty_like(logits)
        back[order] = logits
        return back

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        return softmax(self.logits(pairs) / self.temperature)

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        return [Verdict(float(p[0]), float(p[1]), float(p[2]))
                for p in self.probabilities(pairs)]


def softmax(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


_shared: OnnxJudge | None = None
_shared_lock = threading.Lock()


def builtin_judge() -> OnnxJudge | None:
    """The process's one built-in judge (None where its files are missing)."""
    global _shared
    with _shared_lock:
        if _shared is None and judge_available():
            _shared = OnnxJudge()
        return _shared
