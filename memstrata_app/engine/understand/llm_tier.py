"""The Ollama tier of the understanding layer (DESIGN.md, the mechanism, step 5).

A sentence the deterministic tiers stored as plain prose is put, in the background, to the
Ollama model the user configured: first for structured claims (JSON schema), and when it
yields none and the sentence is close to an active fact (cosine ≥ `judge_threshold`), to a
judge ("does it update it?"). Claims go through the write path's own key resolution and
supersession with `method = llm:<model>`; below the quarantine threshold (always, by default:
their confidence is capped under it) they wait in the review queue. A judge's update always
waits there. The plain row stays retrievable until a claim made from it counts (applied
directly, or approved); then it is marked rejected, kept for audit. Never on the read path.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import apsw
import numpy as np

from ..ledger.keys import key_label
from ..ledger.ledger import Ledger
from ..ledger.transaction import WriteContext
from ..metrics import Metrics
from ..retrieve.retriever import Retriever
from ..timeutil import to_ts
from ..types import (
    Action,
    Assertion,
    AssertionId,
    Cardinality,
    Extraction,
    IngestAction,
    IngestResult,
    NotFound,
    Status,
)
from .extract import text_hash
from .llm_ledger import TABLE, note, propose_update, reviewed, settle, write_claims
from .llm_schema import (
    CLAIMS_SCHEMA,
    EXTRACT_SYSTEM,
    JUDGE_SCHEMA,
    JUDGE_SYSTEM,
    canonical_context,
    judge_prompt,
    mentioned,
    parse_claims,
    parse_verdict,
)
from .ollama_client import base_url, probe
from .statements import Statement

log = logging.getLogger(__name__)

Context = Callable[[apsw.Connection, dict[str, Cardinality]], WriteContext]

# Model claims get at most this confidence: under the default quarantine threshold (0.6), so
# they wait for review unless the user lowers the threshold below it.
CONFIDENCE_CAP = 0.5
_STOP = object()
_SWEEP = object()


class ModelUnavailable(Exception):
    """Ollama did not answer (down, model missing, timeout): the row stays plain."""


class LlmTier:
    """A daemon worker with a bounded queue of plain rows to put to `model`."""

    def __init__(self, ledger: Ledger, retriever: Retriever, metrics: Metrics,
                 context: Context, vocabulary: Callable[[], dict[str, Cardinality]],
                 model: str, host: str | None = None,
                 judge_threshold: float = 0.8, max_queue: int = 1000, *,
                 confidence_cap: float = CONFIDENCE_CAP, timeout: float = 120.0,
                 sweep_every: float = 2.0):
        # the ledger it writes to, the index it reads candidates from, the write path's
        # context (with its quarantine threshold) and vocabulary
        self.ledger, self.retriever, self.metrics = ledger, retriever, metrics
        self.context, self.vocabulary = context, vocabulary
        self.model, self.method = model, f"llm:{model}"
        self.url = base_url(host)
        self.judge_threshold = judge_threshold
        self.confidence_cap = confidence_cap
        self.sweep_every = sweep_every
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max_queue)
        self._cond = threading.Condition()
        self._pending = 0
        self._stopping = threading.Event()
        self._down = False
        self._thread: threading.Thread | None = None
        self.off_reason = probe(model, self.url)
        if self.off_reason:
            log.warning("Ollama tier off: %s", self.off_reason)
            return
        import ollama

        self._client = ollama.Client(host=self.url, timeout=timeout)
        ledger.writer.run(lambda c: c.execute(TABLE))
        self._thread = threading.Thread(target=self._run, name="memstrata-llm-tier",
                                        daemon=True)
        self._thread.start()
        log.info("Ollama tier on: %s at %s structures plain prose in the background",
                 model, self.url)

    @property
    def running(self) -> bool:
        return (self._thread is not None and self._thread.is_alive()
                and not self._stopping.is_set())

    # --- the queue ---------------------------------------------------------------------------
    def submit(self, row_id: int) -> bool:
        """Queue a plain row (never blocks); False when off or the queue is full."""
        if not self.running:
            return False
        with self._cond:
            self._pending += 1
        try:
            self._queue.put_nowait(int(row_id))
        except queue.Full:
            self._done_one()
            log.warning("Ollama tier queue full (%d rows): #%d stays plain",
                        self._queue.maxsize, row_id)
            return False
        return True

    def offer(self, *results: IngestResult) -> None:
        """Queue the plain prose (no claim, not a note) of what an ingest stored."""
        for r in results:
            for a in r.actions:
                if a.action is Action.PROSE and a.method == "plain":
                    self.submit(a.assertion_id)

    def drain(self, timeout: float = 60.0) -> bool:
        """Wait until everything queued so far is done, then settle reviewed claims; for
        tests and benchmarks. False on timeout."""
        if not self.running:
            return True
        with self._cond:
            self._pending += 1
        try:
            self._queue.put(_SWEEP, timeout=timeout)
        except queue.Full:
            self._done_one()
            return False
        with self._cond:
            return self._cond.wait_for(lambda: self._pending == 0, timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Stop the worker (a model call in flight is abandoned, its row left plain)."""
        if self._thread is None:
            return
        self._stopping.set()
        with contextlib.suppress(queue.Full):  # else it sees _stopping after this row
            self._queue.put_nowait(_STOP)
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.info("Ollama tier: still waiting for the model; it stops after this answer")
        self._thread = None
        with self._cond:
            self._pending = 0
            self._cond.notify_all()

    def _done_one(self) -> None:
        with self._cond:
            self._pending -= 1
            self._cond.notify_all()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                item = self._queue.get(timeout=self.sweep_every)
            except queue.Empty:
                self._guard(self._sweep)
                continue
            if item is _STOP:
                break
            try:
                if item is _SWEEP:
                    self._guard(self._sweep)
                else:
                    self._guard(self._process, item)
            finally:
                self._done_one()

    def _guard(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except ModelUnavailable as e:
            (log.debug if self._down else log.warning)("Ollama tier: %s", e)
            self._down = True
        except Exception:
            if not (self._stopping.is_set() or self.ledger.closed):
                log.exception("Ollama tier failed on %s", args or "its sweep")

    # --- one plain row -----------------------------------------------------------------------
    def _process(self, row_id: int) -> None:
        if self.ledger.readers.query("SELECT 1 FROM llm_tier WHERE row_id=?", (row_id,)):
            return  # each row once
        try:
            row = self.ledger.get(row_id)
        except NotFound:
            return
        if row.status is not Status.PLAIN or row.method != "plain" or row.kind != "fact":
            return
        vec = self._vector(row)
        extractions, why = self._extract(row.text)
        if why is not None:
            log.warning("Ollama tier: %s answered #%d with %s; nothing written", self.method,
                        row_id, why)
            self._note(row_id, "invalid")
        elif extractions:
            self._structure(row, vec, extractions)
        else:
            self._judge(row, vec)

    def _ask(self, system: str, user: str, schema: dict[str, Any]) -> str:
        import httpx
        import ollama

        t0 = time.perf_counter()
        try:
            resp = self._client.chat(
                model=self.model, format=schema, options={"temperature": 0}, stream=False,
                messages=[{"role": "system", "content": system},
                          {"role": "user", "content": user}])
        except (ollama.ResponseError, httpx.HTTPError, OSError) as e:
            raise ModelUnavailable(f"{self.method} at {self.url} did not answer: {e}") from e
        self.metrics.record("llm", (time.perf_counter() - t0) * 1000)
        self._down = False
        return resp.message.content or ""

    def _extract(self, sentence: str) -> tuple[list[Extraction], str | None]:
        claims, why = parse_claims(self._ask(EXTRACT_SYSTEM, sentence, CLAIMS_SCHEMA))
        if why is not None:
            return [], why
        out = []
        for c in claims:
            if not mentioned(c.value, sentence):
                log.info("Ollama tier: dropped %s · %s = %r (the value is not in %r)",
                         c.subject, c.attribute, c.value, sentence)
                continue
            old = c.old_value if c.old_value and mentioned(c.old_value, sentence) else None
            out.append(Extraction(
                subject=c.subject, relation=c.attribute, object=c.value, sentence=sentence,
                confidence=min(c.confidence, self.confidence_cap), method=self.method,
                context=canonical_context(c.context), old_object=old))
        return out, None

    def _structure(self, row: Assertion, vec: np.ndarray, exts: list[Extraction]) -> None:
        """Apply the claims in one writer job, as the write path applies the rules' claims."""
        ledger = self.ledger
        at = to_ts(row.valid_from)
        assert at is not None
        st = Statement(row.text, text_hash(row.text), tuple(exts), vec, at, row.source,
                       space=row.space)
        vocab = self.vocabulary()

        def job(conn: apsw.Connection) -> tuple[list[IngestAction], WriteContext, int]:
            ctx = self.context(conn, vocab)
            return write_claims(ctx, row.id, st, self.model), ctx, ledger.bump(conn)

        for a in ledger.run_write(job):
            log.info("Ollama tier: #%d → %s #%d (%s · %s = %s)", row.id, a.action.value,
                     a.assertion_id, a.subject, a.relation, a.object)

    # --- the judge ---------------------------------------------------------------------------
    def _judge(self, row: Assertion, vec: np.ndarray) -> None:
        old = self._nearest_fact(row, vec)
        if old is None:
            self._note(row.id, "nothing")
            return
        label = key_label(old.subject, old.relation, old.context)
        verdict, why = parse_verdict(self._ask(
            JUDGE_SYSTEM, judge_prompt(old.text, label, old.object or "", row.text),
            JUDGE_SCHEMA))
        if verdict is None:
            log.warning("Ollama tier: the judge %s answered #%d with %s; nothing written",
                        self.method, row.id, why)
            self._note(row.id, "invalid")
            return
        if not verdict.updates or not mentioned(verdict.new_value, row.text):
            self._note(row.id, "judged: no update")
            return
        ledger = self.ledger
        vocab = self.vocabulary()
        conf = min(verdict.confidence, self.confidence_cap)

        def job(conn: apsw.Connection) -> tuple[AssertionId | None, WriteContext, int]:
            ctx = self.context(conn, vocab)
            new_id = propose_update(ctx, row, old, verdict.new_value, vec, self.model, conf)
            return new_id, ctx, ledger.bump(conn)

        new_id = ledger.run_write(job)
        if new_id is not None:
            log.info("Ollama tier: #%d may update #%d; #%d waits for review", row.id, old.id,
                     new_id)

    def _nearest_fact(self, row: Assertion, vec: np.ndarray) -> Assertion | None:
        """The active assertion closest to the row, if its cosine reaches the threshold."""
        pairs = [(i, s) for i, s in self.retriever.index().search(vec, 10, time.time())
                 if i != row.id]
        rows = self.ledger.rows([i for i, _ in pairs])
        for i, score in pairs:
            a = rows.get(i)
            if a is not None and a.kind == "assertion" and a.status is Status.ACTIVE:
                return a if score >= self.judge_threshold else None
        return None

    # --- bookkeeping -------------------------------------------------------------------------
    def _vector(self, row: Assertion) -> np.ndarray:
        r = self.ledger.readers.query("SELECT embedding FROM vectors WHERE rowid=?", (row.id,))
        if r:
            return np.frombuffer(bytes(r[0][0]), dtype=np.float32).copy()
        return np.asarray(self.retriever.embedder.embed([row.text])[0], dtype=np.float32)

    def _note(self, row_id: int, outcome: str) -> None:
        """Remember a row that produced nothing (no ledger change, no new generation)."""
        self.ledger.writer.run(lambda c: note(c, row_id, self.model, outcome))

    def _sweep(self) -> None:
        """Settle rows whose claims were reviewed (llm_ledger.reviewed)."""
        ledger = self.ledger
        done = reviewed(ledger.readers.query)
        if not done:
            return

        def job(conn: apsw.Connection) -> tuple[None, WriteContext, int]:
            ctx = self.context(conn, {})
            settle(ctx, done)
            return None, ctx, ledger.bump(conn)

        ledger.run_write(job)
