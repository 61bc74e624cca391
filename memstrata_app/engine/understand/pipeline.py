"""The understanding pipeline: the write path from text to ledger rows.

statements.py (markup, secrets, sentences, claims) → `prepare` (hashes; embeddings outside
the writer's transaction; the judge's candidates and verdicts, candidates.py) → one writer
job per batch: each statement's decisions (decide.py), the judge's verdicts applied
(judging.py), secret flags — published to the index before COMMIT (ledger/ledger.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, overload

import apsw
import numpy as np

from ..governance.labels import checked_label
from ..governance.privacy import flag_secret_rows
from ..governance.secrets import PLACEHOLDER_MARK
from ..ledger.keys import GLOBAL, key_subject, make_key, read_spaces, space_name
from ..ledger.keys import subject_names as names_after_renames
from ..ledger.ledger import Ledger
from ..ledger.queries import standing_hashes
from ..ledger.transaction import WriteContext, find_duplicate
from ..metrics import Metrics
from ..retrieve.retriever import Retriever, check_query
from ..timeutil import to_ts, to_utc
from ..types import (
    OWN_ACTIONS,
    Assertion,
    Cancelled,
    Cardinality,
    EngineError,
    IngestAction,
    IngestResult,
    Skipped,
    TurnRecall,
)
from .candidates import Judging
from .decide import write_statement
from .extract import DEFAULT_VOCABULARY, normalize_entity, normalize_relation, text_hash
from .later import LaterJudging
from .review import Review
from .statements import Sentence, Statement, statements, statements_many

if TYPE_CHECKING:
    from .llm_tier import LlmTier

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]  # (done, total)
BATCH = 256
# a chat turn is judged against at most this many candidates (the closest); the endpoint's
# turns are judged after their request has gone upstream (later.py, docs/JUDGE.md)
TURN_JUDGE_PAIRS = 8


class Pipeline:
    """The write path of one ledger: what turns text into rows, and the review of what it
    held back."""

    def __init__(self, ledger: Ledger, retriever: Retriever, metrics: Metrics,
                 quarantine_threshold: float):
        self.ledger = ledger
        self.retriever = retriever
        self.metrics = metrics
        self.quarantine_threshold = quarantine_threshold
        self.judging = Judging(retriever, metrics)
        self.review = Review(ledger, self.vocabulary, lambda: retriever.embedder)
        self.llm_tier: LlmTier | None = None  # the Ollama tier, when enabled
        self.later = LaterJudging(self._judge_written, metrics.record)

    def context(self, conn: apsw.Connection, vocab: dict[str, Cardinality]) -> WriteContext:
        return self.ledger.context(conn, vocab, self.quarantine_threshold)

    def vocabulary(self) -> dict[str, Cardinality]:
        vocab = dict(DEFAULT_VOCABULARY)
        vocab.update(self.ledger.cardinalities())
        return vocab

    def set_cardinality(self, relation: str, cardinality: Cardinality | str) -> None:
        try:
            card = Cardinality(cardinality)
        except ValueError:
            raise EngineError(f"cardinality must be 'single' or 'multi', not {cardinality!r}"
                              ) from None
        rel = normalize_relation(relation)
        if not rel:
            raise EngineError("the relation name is empty")
        self.ledger.set_cardinality(rel, card)

    def history(self, subject: str, relation: str, context: str | None = None,
                space: str | None = None) -> list[Assertion]:
        rel = normalize_relation(relation)
        ctx = (context or "").strip().casefold()
        sp = space_name(space)
        q = self.ledger.readers.query
        subject_norm = key_subject(q, normalize_entity(subject), rel, ctx, sp)
        # after a rename the entity's facts may be kept under either name: read them all
        chains = [self.ledger.chain(make_key(name, rel, ctx, sp))
                  for name in names_after_renames(q, subject_norm, sp)]
        rows = [a for chain in chains for a in chain]
        if len([c for c in chains if c]) <= 1:
            return rows
        return sorted({int(a.id): a for a in rows}.values(),
                      key=lambda a: (a.valid_from, int(a.id)))

    def subject_names(self, subject: str, space: str | None = None) -> list[str]:
        q = self.ledger.readers.query
        return names_after_renames(q, normalize_entity(subject), space_name(space))

    # --- the update judge over what is stored ------------------------------------------------
    def rejudge(self, apply: bool = False, space: str | None = None,
                progress: Progress | None = None) -> list[Any]:
        from . import rejudge as rj

        found = rj.find(self.judging, self.ledger,
                        space_name(space) if space is not None else None, progress)
        return rj.propose_all(self.judging, self.ledger, found) if apply and found else found

    def rejudge_on_upgrade(self) -> list[Any]:
        judge = self.judging.judge
        ledger = self.ledger
        if judge is None or ledger.read_only or ledger.backend != "sqlite":
            return []
        seen = ledger.readers.query("SELECT v FROM meta WHERE k='judge'")
        if seen and seen[0][0] == judge.name:
            return []
        has_rows = bool(ledger.readers.query("SELECT 1 FROM assertions LIMIT 1"))
        found = self.rejudge(apply=True) if has_rows else []

        def job(conn: apsw.Connection) -> tuple[None, WriteContext, int]:
            conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('judge', ?)", (judge.name,))
            return None, self.context(conn, {}), ledger.bump(conn)

        ledger.run_write(job)
        if found:
            log.info("update judge %s: %d proposals for review in a ledger it had not read",
                     judge.name, len(found))
        return found

    # --- the Ollama tier -----------------------------------------------------------------------
    def enable_llm_tier(self, model: str, host: str | None = None, **kw: Any) -> bool:
        from .llm_tier import LlmTier

        self.disable_llm_tier()
        if self.ledger.read_only:  # the tier writes what it learns
            log.info("the Ollama tier stays off: the ledger is read-only")
            return False
        tier = LlmTier(self.ledger, self.retriever, self.metrics, self.context,
                       self.vocabulary, model, host, **kw)
        self.llm_tier = tier if tier.running else None
        return self.llm_tier is not None

    def disable_llm_tier(self) -> None:
        tier, self.llm_tier = self.llm_tier, None
        if tier is not None:
            tier.close()

    # --- ingest --------------------------------------------------------------------------------
    def ingest(self, text: str, source: str = "api", at: datetime | None = None,
               space: str | None = None, label: str | None = None) -> IngestResult:
        if not isinstance(text, str):
            raise EngineError("ingest takes text (a string)")
        lab = checked_label(label)
        t0 = time.perf_counter()
        at_ts = to_ts(to_utc(at))
        assert at_ts is not None
        sents, skipped = statements(text, at_ts, commit=source == "git")
        prepared = self.prepare(sents, source, space=space_name(space), label=lab)
        per_statement = self.write(prepared) if prepared else []
        self.metrics.record("ingest", (time.perf_counter() - t0) * 1000)
        result = IngestResult(tuple(a for acts in per_statement for a in acts), tuple(skipped))
        if self.llm_tier is not None:
            self.llm_tier.offer(result)
        return result

    def ingest_many(self, items: Iterable[str | tuple[str, datetime | None]],
                    source: str = "import", progress: Progress | None = None,
                    cancel: threading.Event | None = None,
                    space: str | None = None, label: str | None = None) -> list[IngestResult]:
        lab = checked_label(label)
        work = [(it, None) if isinstance(it, str) else it for it in items]
        total = len(work)
        into = space_name(space)
        results: list[IngestResult] = []
        pending: tuple[Future[Any], list[tuple[list[Sentence], list[Skipped]]], int] | None = None
        last: list[Statement] = []  # the batch before, not yet committed: judged against too

        def collect(p: tuple[Future[Any], list[tuple[list[Sentence], list[Skipped]]],
                             int]) -> None:
            fut, per_text, done = p
            per_statement = fut.result()
            pos = 0
            for sents, skipped in per_text:
                group = per_statement[pos:pos + len(sents)]
                results.append(IngestResult(tuple(a for acts in group for a in acts),
                                            tuple(skipped)))
                pos += len(sents)
            if progress is not None:
                progress(done, total)

        # Pipelined: batch N+1 is extracted and embedded while the writer commits batch N.
        for start in range(0, total, BATCH):
            if cancel is not None and cancel.is_set():
                if pending is not None:
                    collect(pending)
                raise Cancelled(f"import cancelled after {start} of {total} texts")
            chunk = []
            for text, at in work[start:start + BATCH]:
                ts = to_ts(to_utc(at))
                assert ts is not None
                chunk.append((text, ts))
            per_text = statements_many(chunk, commit=source == "git")
            prepared = self.prepare([s for sents, _ in per_text for s in sents], source,
                                    space=into, label=lab, earlier=last)
            last = prepared
            if pending is not None:
                collect(pending)
            pending = (self.submit(prepared), per_text, min(start + BATCH, total))
        if pending is not None:
            collect(pending)
        if self.llm_tier is not None:
            self.llm_tier.offer(*results)
        return results

    def ingest_and_retrieve(self, text: str, query: str | None = None, k: int = 5,
                            source: str = "api", at: datetime | None = None,
                            space: str | None = None, judge_later: bool = False
                            ) -> TurnRecall:
        if not isinstance(text, str):
            raise EngineError("ingest takes text (a string)")
        query = text if query is None else query
        check_query(query, k)
        t0 = time.perf_counter()
        at_ts = to_ts(to_utc(at))
        assert at_ts is not None
        sents, skipped = statements(text, at_ts)
        later = judge_later and self.judging.judge is not None
        prepared, qv = self.prepare(sents, source, extra=query, space=space_name(space),
                                    judge_budget=TURN_JUDGE_PAIRS, judge=not later)
        per_statement = self.write(prepared, judge=not later) if prepared else []
        written_at = time.time()
        t1 = time.perf_counter()
        stale: list[tuple[int, float]] = []
        hits = self.retriever.search(qv, k, None, read_spaces(space), stale, query=query)
        t2 = time.perf_counter()
        ingest_ms, retrieve_ms = (t1 - t0) * 1000, (t2 - t1) * 1000
        self.metrics.record("ingest", ingest_ms)
        self.metrics.record("retrieve", retrieve_ms)
        result = IngestResult(tuple(a for acts in per_statement for a in acts), tuple(skipped))
        if self.llm_tier is not None:
            self.llm_tier.offer(result)
        by = {r[0]: r[1] for r in self.ledger.readers.query(
            f"SELECT id, superseded_by FROM assertions WHERE id IN ({','.join('?' * len(stale))})",
            [i for i, _ in stale])} if stale else {}
        filtered = tuple((i, sc, by.get(i)) for i, sc in stale[:k] if i in by)
        release = None
        if later and any(st.vector is not None or any(a.retired for a in acts)
                         for st, acts in zip(prepared, per_statement, strict=True)):
            release = self.later.queue(prepared, per_statement, written_at)
        return TurnRecall(result, hits, ingest_ms, retrieve_ms, filtered, release)

    def _judge_written(self, prepared: Sequence[Statement],
                       per_statement: Sequence[list[IngestAction]], written_at: float
                       ) -> list[list[IngestAction]]:
        """A turn the rules wrote, judged now (later.py): its verdicts, as `submit` applies
        them. A statement whose own rows were closed since (a newer turn replaced it) is
        left as it is."""
        if self.judging.judge is None:  # switched off since: the rules' reading stands
            return []
        judged = self.judging.prepare(list(prepared), [], TURN_JUDGE_PAIRS, now=written_at,
                                      written=True)
        todo = [(st, acts) for st, acts in zip(judged, per_statement, strict=True)
                if st.judged or any(a.retired for a in acts)]
        if not todo:
            return []
        vocab = self.vocabulary()

        def job(conn: apsw.Connection) -> tuple[list[list[IngestAction]], WriteContext, int]:
            ctx = self.context(conn, vocab)
            out: list[list[IngestAction]] = []
            for st, acts in todo:
                own = [int(a.assertion_id) for a in acts if a.action in OWN_ACTIONS]
                if own and len(ctx.q(
                        f"SELECT id FROM assertions WHERE id IN ({','.join('?' * len(own))})"
                        " AND status IN ('active','plain') AND valid_to IS NULL",
                        tuple(own))) == len(own):
                    out.append(self.judging.apply(ctx, st, acts))
            return out, ctx, self.ledger.bump(conn)

        return self.ledger.submit_write(job).result()

    def settle_judging(self, timeout: float | None = None) -> bool:
        """Wait until every chat turn queued for the judge is judged (later.py)."""
        return self.later.settle(timeout)

    def explain(self, text: str, source: str = "api", at: datetime | None = None,
                space: str | None = None) -> IngestResult:
        if not isinstance(text, str):
            raise EngineError("explain takes text (a string)")
        at_ts = to_ts(to_utc(at))
        assert at_ts is not None
        sents, skipped = statements(text, at_ts, commit=source == "git")
        into = space_name(space)
        self.ledger.check_writable()  # a refused dry run says so before embedding
        embedder = self.retriever.embedder
        vecs: Any = (embedder.embed([s[0] for s in sents]) if self.judging.judge is not None
                     and sents else [np.zeros(embedder.dim, dtype=np.float32)] * len(sents))
        prepared = [Statement(s, text_hash(s), exts, v, t, source, note, into)
                    for (s, t, exts, note), v in zip(sents, vecs, strict=True)]
        prepared = self.judging.prepare(prepared, [])
        vocab = self.vocabulary()

        def job(conn: apsw.Connection) -> None:
            ctx = self.context(conn, vocab)
            acts = [a for st in prepared
                    for a in self.judging.apply(ctx, st, write_statement(ctx, st))]
            raise _DryRun(acts)

        try:
            self.ledger.writer.run(job)
        except _DryRun as d:
            return IngestResult(tuple(d.actions), tuple(skipped))
        raise AssertionError("unreachable")  # pragma: no cover

    # --- before and inside the writer's transaction ----------------------------------------
    @overload
    def prepare(self, sentences: list[Sentence], source: str, *,
                space: str = GLOBAL, label: str = "normal",
                earlier: list[Statement] | None = None,
                judge_budget: int | None = None, judge: bool = True) -> list[Statement]: ...

    @overload
    def prepare(self, sentences: list[Sentence], source: str,
                extra: str, *, space: str = GLOBAL, label: str = "normal",
                earlier: list[Statement] | None = None, judge_budget: int | None = None,
                judge: bool = True) -> tuple[list[Statement], np.ndarray]: ...

    def prepare(self, sentences: list[Sentence], source: str,
                extra: str | None = None, *, space: str = GLOBAL,
                label: str = "normal", earlier: list[Statement] | None = None,
                judge_budget: int | None = None, judge: bool = True) -> Any:
        """Hashing and embedding happen here, outside the writer's transaction.

        `extra` (a query) is embedded in the same batch; its vector is returned too.
        `judge` False: no verdicts (the turn is judged later, after its write).
        """
        self.ledger.check_writable()  # a read-only or damaged ledger says so before embedding
        hashes = [text_hash(s[0]) for s in sentences]
        known = standing_hashes(self.ledger.readers, hashes) if hashes else set()
        to_embed = sorted({s[0] for s, h in zip(sentences, hashes, strict=True)
                           if h not in known})
        batch = [*to_embed, extra] if extra is not None else to_embed
        vectors: Any = self.retriever.embedder.embed(batch) if batch else []
        vecs = dict(zip(to_embed, vectors, strict=False))
        prepared = [Statement(s, h, exts, vecs.get(s), at, source, note,  # type: ignore[arg-type]
                              space, label)
                    for (s, at, exts, note), h in zip(sentences, hashes, strict=True)]
        if judge:
            prepared = self.judging.prepare(prepared, earlier or [], judge_budget)
        return prepared if extra is None else (prepared, vectors[-1])

    def write(self, prepared: list[Statement], judge: bool = True) -> list[list[IngestAction]]:
        """Apply statements in one transaction; one list of actions per statement."""
        return self.submit(prepared, judge).result()

    def submit(self, prepared: list[Statement], judge: bool = True
               ) -> Future[list[list[IngestAction]]]:
        vocab = self.vocabulary()
        ledger = self.ledger
        judge_name = self.judging.judge.name if self.judging.judge is not None else None

        def job(conn: apsw.Connection) -> tuple[list[list[IngestAction]], WriteContext, int]:
            ctx = self.context(conn, vocab)
            if judge_name is not None and ledger.backend == "sqlite":
                # the first judge that wrote here (rejudge_on_upgrade reads a ledger again
                # only for a judge other than the one recorded)
                conn.execute("INSERT OR IGNORE INTO meta(k, v) VALUES ('judge', ?)",
                             (judge_name,))
            out: list[list[IngestAction]] = []
            for st in prepared:
                if st.vector is None and find_duplicate(ctx, st.text_hash) is None:
                    st = replace(st, vector=self.retriever.embedder.embed([st.sentence])[0])
                acts = write_statement(ctx, st)
                if judge:
                    acts = self.judging.apply(ctx, st, acts)
                if PLACEHOLDER_MARK in st.sentence:  # a secret was replaced: flag its rows
                    flag_secret_rows(conn, (a.assertion_id for a in acts), ctx.now)
                out.append(acts)
            return out, ctx, ledger.bump(conn)

        return ledger.submit_write(job)


class _DryRun(Exception):
    def __init__(self, actions: list[IngestAction]):
        super().__init__("dry run")
        self.actions = actions
