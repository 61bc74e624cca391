"""MemoryEngine: the public facade over the ledger, the write path and the read path."""

from __future__ import annotations

import getpass
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast, overload

import apsw
import numpy as np

from . import lexical, queries, store_pg
from .embedders import (
    STATIC_NAME,
    Embedder,
    OllamaEmbedder,
    resolve_embedder,
    shared_local_embedder,
    shared_static_embedder,
)
from .extract import (
    DEFAULT_VOCABULARY,
    normalize_entity,
    normalize_relation,
    split_sentences,
    text_hash,
)
from .files import private_ledger
from .governance import DEFAULT_AUTHORITY_ORDER, RESTRICTED, check_label
from .governance_ops import GovernanceOps, RetentionRule
from .index import IndexUpdate, VectorIndex
from .judging import apply_judgement
from .metrics import Metrics
from .privacy import PrivacyOps, flag_secret_rows
from .sanitize import BLOCK_TAG_REASON, neutralize
from .secrets import PLACEHOLDER_MARK, redact
from .store import (
    COLUMNS,
    KNOWN_ERRORS,
    ReadOnlyWriter,
    open_store,
    row_to_assertion,
    scalar,
    translate,
)
from .timeutil import from_ts, to_ts, to_utc
from .types import (
    Assertion,
    Cancelled,
    Cardinality,
    EmbedderMismatch,
    EngineError,
    Extraction,
    Hit,
    IngestAction,
    IngestResult,
    LedgerFilter,
    NotFound,
    Skipped,
    Status,
    StoreCorrupt,
    TurnRecall,
)
from .understand import read
from .understand.judge import (
    Judge,
    JudgedPair,
    Thresholds,
    builtin_judge,
    default_thresholds,
    resolve_judge,
)
from .write import (
    GLOBAL,
    RETRIEVABLE,
    Statement,
    WriteContext,
    find_duplicate,
    key_label,
    key_subject,
    make_key,
    normalize_space,
)
from .write_ops import WriteOps

if TYPE_CHECKING:
    from .understand.llm_tier import LlmTier

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]  # (done, total)
# (sentence, time, extractions, note method: "" for a statement, "note:hedge" …)
Sentence = tuple[str, float, tuple[Extraction, ...], str]
BATCH = 256
# each new statement is judged beside its nearest active sentences: at most this many, each
# scoring at least the floor (cosine, plus the term side's share); measured on the corpus'
# updates: the floor keeps 96% of them, six candidates hold the true one 85% of the time
JUDGE_CANDIDATES = 6
JUDGE_FLOOR = 0.35
# a chat turn on its way to the model is judged against at most this many candidates (the
# closest): its judging finishes before the request goes upstream (docs/JUDGE.md)
TURN_JUDGE_PAIRS = 8


class MemoryEngine(WriteOps, PrivacyOps, GovernanceOps):
    """A bi-temporal ledger of facts: ingest statements, retrieve what is valid at T."""

    def __init__(self, path: Path | str, embedder: Embedder, writer: Any, readers: Any,
                 quarantine_threshold: float):
        # a file (SQLite), or for a team ledger on PostgreSQL its DSN without the password
        self.path = path
        self.embedder = embedder
        self.quarantine_threshold = quarantine_threshold
        self.metrics = Metrics()
        self._writer = writer
        self._readers = readers
        self._index: VectorIndex | None = None
        self._index_lock = threading.Lock()
        self._closed = False
        self.llm_tier: LlmTier | None = None  # the Ollama tier, when enabled
        self.author = writer_name()  # recorded on every row this engine writes
        # governance (docs/GOVERNANCE.md): who may retire whose values, and how long
        # unconfirmed rows are kept
        self.authority_order: tuple[str, ...] = DEFAULT_AUTHORITY_ORDER
        self.retention: tuple[RetentionRule, ...] = ()
        self._listener: store_pg.Listener | None = None
        self._remote_hooks: list[Callable[[int], None]] = []
        self._own_gen = -1  # the last generation this engine wrote
        self._seen_gen = -1  # the last generation announced to the hooks
        # hybrid retrieval: the lexical ranking (engine/lexical.py) fused with the vector
        # one; False reads by cosine alone (the `retrieval` setting, benchmarks)
        self.hybrid = True
        # how the two rankings are fused: "linear" (cosine + lexical_weight x coverage, the
        # default) or "rrf" (reciprocal rank fusion, k=60; scores stay cosines), for the
        # benchmarks that compare them (`memstrata bench retrieval --fusion`)
        self.fusion = lexical.FUSION
        self.lexical_weight = lexical.LEXICAL_WEIGHT
        self._df_cache: dict[str, tuple[int, int]] = {}  # common term -> (count, rows then)
        # the update judge (understand/judge.py, judging.py): None reads by the rules alone
        self.judge: Judge | None = builtin_judge()
        self.judge_thresholds: Thresholds = default_thresholds()
        self.judge_candidates = JUDGE_CANDIDATES  # active sentences judged per statement
        self.judge_floor = JUDGE_FLOOR  # below this retrieval score, not a candidate
        self.judge_pairs = 0  # pairs judged by this engine (benchmarks report pairs/s)

    @property
    def backend(self) -> str:
        """"sqlite" (a ledger file) or "postgresql" (a team ledger)."""
        return "postgresql" if isinstance(self.path, str) else "sqlite"

    @property
    def location(self) -> str:
        """Which ledger this is, for people: "SQLite · /path/memstrata.db" or
        "PostgreSQL · user@host:5432/db" (never a password)."""
        if isinstance(self.path, str):
            return store_pg.describe(self.path)
        return f"SQLite · {self.path}"

    # --- opening and closing -------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, embedder: Any = "auto", *, quarantine_threshold: float = 0.6,
             ollama_host: str | None = None, read_only: bool = False,
             judge: Any = "auto") -> MemoryEngine:
        """Open (creating if needed) the ledger file at `path`.

        `embedder`: "auto" (the store's own embedder, else Ollama's nomic-embed-text when it
        answers, else local), "local", "ollama:<model>", or an Embedder instance.
        `read_only`: never write (also chosen on its own when the file or its folder can't be
        written; `read_only_reason` says why); every write raises StoreReadOnly.
        A damaged ledger opens for reading; its writes raise StoreCorrupt (store.py).
        `path` may be a PostgreSQL URI (`postgresql://user@host/db`): a team ledger that
        several machines share (store_pg.py).
        `judge`: the update judge — "auto" (the built-in model where installed), None or
        "off" (the rules alone), or a Judge (understand/judge.py).
        """
        if store_pg.is_dsn(path):
            dsn = str(path)
            pg_writer, pg_readers = store_pg.open_pg_store(dsn, read_only)
            eng = cls._finish_open(store_pg.redact_dsn(dsn), pg_writer, pg_readers, embedder,
                                   quarantine_threshold, ollama_host, dsn=dsn)
            return eng.use_judge(judge)
        path = Path(path).expanduser()
        if path.is_dir():
            raise EngineError(f"{path} is a folder; give the path of a ledger file")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise EngineError(f"cannot create the folder {path.parent} for the ledger: "
                              f"{e.strerror or e}") from None
        # owner-only modes only for a ledger we will write (after the probe: a refused or
        # read-only file is left exactly as it was)
        writer, readers = open_store(path, read_only, prepare=private_ledger)
        return cls._finish_open(path, writer, readers, embedder, quarantine_threshold,
                                ollama_host).use_judge(judge)

    @classmethod
    def _finish_open(cls, path: Path | str, writer: Any, readers: Any, embedder: Any,
                     quarantine_threshold: float, ollama_host: str | None,
                     dsn: str | None = None) -> MemoryEngine:
        try:
            recorded = dict(readers.query("SELECT k, v FROM meta WHERE k IN ('embedder','dim')"))
            emb: Embedder
            if embedder == "auto" and "embedder" in recorded:
                name = recorded["embedder"]
                if name.startswith("ollama:"):
                    emb = OllamaEmbedder(name.split(":", 1)[1], ollama_host)
                elif name == STATIC_NAME:
                    emb = shared_static_embedder()
                else:
                    emb = shared_local_embedder()
            else:
                emb = resolve_embedder(embedder, ollama_host)
            if "embedder" in recorded and recorded["embedder"] != emb.name:
                raise EmbedderMismatch(
                    f"the ledger {path} holds vectors from {recorded['embedder']}, not "
                    f"{emb.name}; open it with that embedder or run `memstrata reindex "
                    f"--embedder ...` to re-embed it")
            if "embedder" not in recorded:
                if writer.read_only:
                    raise EngineError(f"the ledger {path} was never set up (no vector space "
                                      "recorded) and is read-only; open it once with write "
                                      "access")
                writer.run(lambda c: _create_space(c, emb.name, emb.dim))
        except BaseException:
            readers.close()
            writer.close()
            raise
        eng = cls(path, emb, writer, readers, quarantine_threshold)
        if dsn is not None:  # other machines write too: follow their changes
            eng._listener = store_pg.Listener(dsn, str(path), eng._on_remote_change)
        return eng

    def use_judge(self, judge: Any) -> MemoryEngine:
        """Choose the update judge: "auto" (built-in), None/"off" (rules alone) or a Judge."""
        if judge in (None, "off", False):
            self.judge = None
        elif judge in ("auto", "builtin"):
            self.judge = builtin_judge()
        elif isinstance(judge, str) and judge.startswith("ollama:"):
            self.judge, why = resolve_judge(judge)
            if self.judge is None:
                raise EngineError(str(why))
        elif hasattr(judge, "judge"):
            self.judge = judge
        else:
            raise EngineError(f"unknown judge {judge!r}: use 'auto', 'off' or a Judge")
        return self

    @property
    def read_only(self) -> bool:
        """True when this ledger was opened read-only: reads work, writes raise."""
        return self._writer.read_only

    @property
    def read_only_reason(self) -> str | None:
        """Why it is read-only, in words ("the file is not writable" …); None if writable."""
        return self._writer.reason if isinstance(self._writer, ReadOnlyWriter) else None

    def check_writable(self) -> None:
        """Raise StoreReadOnly / StoreCorrupt now if a write is known to be refused (callers
        check before slow work such as embedding)."""
        self._writer.check()

    def close(self) -> None:
        if self._closed:
            return
        self.disable_llm_tier()
        self._closed = True
        if self._listener is not None:
            self._listener.close()
        self._writer.close()
        self._readers.close()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def enable_llm_tier(self, model: str, host: str | None = None, **kw: Any) -> bool:
        """Put the prose the rules can't structure to an Ollama model, in the background
        (llm_tier.py); False (and off) when no Ollama with that model answers."""
        from .understand.llm_tier import LlmTier

        self.disable_llm_tier()
        if self.read_only:  # the tier writes what it learns
            log.info("the Ollama tier stays off: the ledger is read-only")
            return False
        tier = LlmTier(self, model, host, **kw)
        self.llm_tier = tier if tier.running else None
        return self.llm_tier is not None

    def disable_llm_tier(self) -> None:
        tier, self.llm_tier = self.llm_tier, None
        if tier is not None:
            tier.close()

    def warm_up(self) -> None:
        """Load the embedder, the vector index and the secrets rule set now (call from a
        background thread)."""
        self.embedder.embed(["warm up"])
        self._sync_index()
        redact("warm up")

    # --- write path ----------------------------------------------------------------------
    def ingest(self, text: str, source: str = "api", at: datetime | None = None,
               space: str | None = None, label: str | None = None) -> IngestResult:
        """Split `text` into statements and apply each to the ledger in one transaction.

        `space`: the project the statements belong to (default: the global space).
        `label`: the rows' permission label, "normal" (default), "sensitive" or
        "restricted" (never injected nor returned by retrieve; audit views show it)."""
        if not isinstance(text, str):
            raise EngineError("ingest takes text (a string)")
        lab = _label(label)
        t0 = time.perf_counter()
        at_ts = to_ts(to_utc(at))
        assert at_ts is not None
        sents, skipped = statements(text, at_ts, commit=source == "git")
        prepared = self._prepare(sents, source, space=_space(space), label=lab)
        per_statement = self._write(prepared) if prepared else []
        self.metrics.record("ingest", (time.perf_counter() - t0) * 1000)
        result = IngestResult(tuple(a for acts in per_statement for a in acts), tuple(skipped))
        if self.llm_tier is not None:
            self.llm_tier.offer(result)
        return result

    def ingest_many(self, items: Iterable[str | tuple[str, datetime | None]],
                    source: str = "import", progress: Progress | None = None,
                    cancel: threading.Event | None = None,
                    space: str | None = None, label: str | None = None) -> list[IngestResult]:
        """Ingest many texts in batches (batched embedding, one transaction per batch).

        Cancelling keeps the batches already committed and raises Cancelled.
        """
        lab = _label(label)
        work = [(it, None) if isinstance(it, str) else it for it in items]
        total = len(work)
        into = _space(space)
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
            prepared = self._prepare([s for sents, _ in per_text for s in sents], source,
                                     space=into, label=lab, earlier=last)
            last = prepared
            if pending is not None:
                collect(pending)
            pending = (self._submit_statements(prepared), per_text, min(start + BATCH, total))
        if pending is not None:
            collect(pending)
        if self.llm_tier is not None:
            self.llm_tier.offer(*results)
        return results

    @overload
    def _prepare(self, sentences: list[Sentence], source: str, *,
                 space: str = GLOBAL, label: str = "normal",
                 earlier: list[Statement] | None = None,
                 judge_budget: int | None = None) -> list[Statement]: ...

    @overload
    def _prepare(self, sentences: list[Sentence], source: str,
                 extra: str, *, space: str = GLOBAL, label: str = "normal",
                 earlier: list[Statement] | None = None, judge_budget: int | None = None
                 ) -> tuple[list[Statement], np.ndarray]: ...

    def _prepare(self, sentences: list[Sentence], source: str,
                 extra: str | None = None, *, space: str = GLOBAL,
                 label: str = "normal", earlier: list[Statement] | None = None,
                 judge_budget: int | None = None) -> Any:
        """Hashing and embedding happen here, outside the writer's transaction.

        `extra` (a query) is embedded in the same batch; its vector is returned too.
        """
        self.check_writable()  # a read-only or damaged ledger says so before embedding
        hashes = [text_hash(s[0]) for s in sentences]
        known = self._standing_hashes(hashes) if hashes else set()
        to_embed = sorted({s[0] for s, h in zip(sentences, hashes, strict=True)
                           if h not in known})
        batch = [*to_embed, extra] if extra is not None else to_embed
        vectors: Any = self.embedder.embed(batch) if batch else []
        vecs = dict(zip(to_embed, vectors, strict=False))
        prepared = [Statement(s, h, exts, vecs.get(s), at, source, note,  # type: ignore[arg-type]
                              space, label)
                    for (s, at, exts, note), h in zip(sentences, hashes, strict=True)]
        prepared = self._judge_prepared(prepared, earlier or [], judge_budget)
        return prepared if extra is None else (prepared, vectors[-1])

    def _judge_prepared(self, prepared: list[Statement], earlier: list[Statement],
                        budget: int | None = None) -> list[Statement]:
        """Each new statement beside its candidate active sentences (the nearest by the
        vector and term sides in its space, valid at its time; and the statements before it
        in this batch and the one before, not yet committed), judged in one batch. A judge
        that fails leaves the rules alone to decide; it never fails an ingest. `budget`: at
        most this many pairs (the closest), for a chat turn on its way to the model."""
        judge = self.judge
        todo = [i for i, st in enumerate(prepared) if st.vector is not None]
        if judge is None or not todo:
            return prepared
        t0 = time.perf_counter()
        pending = [st for st in (*earlier, *prepared) if st.vector is not None]
        offset = len(pending) - len(todo)
        mat = np.stack([st.vector for st in pending]) if pending else None
        per: list[list[tuple[str, str, float, bool]]] = []
        now = time.time()
        for n, i in enumerate(todo):
            st = prepared[i]
            found: dict[str, tuple[str, float, bool]] = {}
            for h in self._search(st.vector, self.judge_candidates, _dt(st.at), (st.space,),
                                  query=st.sentence):
                if h.score >= self.judge_floor and h.text != st.sentence:
                    found.setdefault(text_hash(h.text), (h.text, float(h.score), False))
            if st.at < now - 1:  # a late statement: what was said after it may retire it
                for h in self._search(st.vector, self.judge_candidates, None, (st.space,),
                                      query=st.sentence):
                    if (h.score >= self.judge_floor and h.text != st.sentence
                            and to_ts(h.valid_from) > st.at):  # type: ignore[operator]
                        found.setdefault(text_hash(h.text), (h.text, float(h.score), True))
            if mat is not None and offset + n > 0:
                sims = mat[:offset + n] @ st.vector
                for j in np.argsort(-sims)[:self.judge_candidates]:
                    other = pending[int(j)]
                    if (sims[j] >= self.judge_floor and other.space == st.space
                            and other.at <= st.at and other.text_hash != st.text_hash):
                        found.setdefault(other.text_hash,
                                         (other.sentence, float(sims[j]), False))
            best = sorted(found.items(), key=lambda kv: -kv[1][1])[:self.judge_candidates]
            per.append([(h, txt, sc, later) for h, (txt, sc, later) in best])
        if budget is not None and sum(map(len, per)) > budget:
            scores = sorted((c[2] for cands in per for c in cands), reverse=True)
            cut = scores[budget - 1] if budget > 0 else float("inf")
            per = [[c for c in cands if c[2] >= cut] for cands in per]
        pairs = [(prepared[i].sentence, txt) if later else (txt, prepared[i].sentence)
                 for i, cands in zip(todo, per, strict=True) for _, txt, _, later in cands]
        try:
            verdicts = iter(judge.judge(pairs)) if pairs else iter(())
        except Exception:  # a broken judge must not lose the user's statement
            log.exception("the update judge failed; these statements are decided by the rules")
            return prepared
        out = list(prepared)
        for i, cands in zip(todo, per, strict=True):
            out[i] = replace(prepared[i], judged=tuple(
                JudgedPair(h, txt, sc, next(verdicts), later) for h, txt, sc, later in cands))
        self.metrics.record("judge", (time.perf_counter() - t0) * 1000)
        self.judge_pairs += len(pairs)
        return out

    def _standing_hashes(self, hashes: list[str]) -> set[str]:
        found: set[str] = set()
        uniq = list(set(hashes))
        for i in range(0, len(uniq), 500):
            part = uniq[i:i + 500]
            found.update(r[0] for r in self._readers.query(
                f"SELECT text_hash FROM assertions WHERE text_hash IN ({','.join('?' * len(part))})"
                " AND +status IN ('active','plain','quarantined')", part))  # hash index, not status
        return found

    def _write(self, prepared: list[Statement]) -> list[list[IngestAction]]:
        """Apply statements in one transaction; one list of actions per statement."""
        return self._submit_statements(prepared).result()

    def _submit_statements(self, prepared: list[Statement]) -> Future[list[list[IngestAction]]]:
        vocab = self.vocabulary()

        judge_name = self.judge.name if self.judge is not None else None

        def job(conn: apsw.Connection) -> tuple[list[list[IngestAction]], WriteContext, int]:
            ctx = self._context(conn, vocab)
            if judge_name is not None and self.backend == "sqlite":
                # the first judge that wrote here (rejudge_on_upgrade reads a ledger again
                # only for a judge other than the one recorded)
                conn.execute("INSERT OR IGNORE INTO meta(k, v) VALUES ('judge', ?)",
                             (judge_name,))
            out: list[list[IngestAction]] = []
            for st in prepared:
                if st.vector is None and find_duplicate(ctx, st.text_hash) is None:
                    st = replace(st, vector=self.embedder.embed([st.sentence])[0])
                acts = self.write_statement(ctx, st)
                acts = self._judgement(ctx, st, acts)
                if PLACEHOLDER_MARK in st.sentence:  # a secret was replaced: flag its rows
                    flag_secret_rows(conn, (a.assertion_id for a in acts), ctx.now)
                out.append(acts)
            return out, ctx, self._bump(conn)

        return self._submit_write(job)

    def _judgement(self, ctx: WriteContext, st: Statement,
                   acts: list[IngestAction]) -> list[IngestAction]:
        judge = self.judge
        if judge is None:
            return acts
        return apply_judgement(ctx, st, acts, self.judge_thresholds, judge.name, judge.judge)

    def rejudge(self, apply: bool = False, space: str | None = None,
                progress: Progress | None = None) -> list[Any]:
        """Read the open facts again with the current update judge; where it finds an update
        the ledger does not hold, a proposal (engine/rejudge.py). With `apply`, each goes to
        the review queue; nothing is retired without approval."""
        from . import rejudge as rj

        found = rj.find(self, _space(space) if space is not None else None, progress)
        return rj.propose_all(self, found) if apply and found else found

    def rejudge_on_upgrade(self) -> list[Any]:
        """Once per judge version and ledger file: what a judge new to this ledger finds,
        proposed for review (the app runs it in the background after start). A ledger that
        holds nothing yet just records the judge."""
        judge = self.judge
        if judge is None or self.read_only or self.backend != "sqlite":
            return []
        seen = self._readers.query("SELECT v FROM meta WHERE k='judge'")
        if seen and seen[0][0] == judge.name:
            return []
        has_rows = bool(self._readers.query("SELECT 1 FROM assertions LIMIT 1"))
        found = self.rejudge(apply=True) if has_rows else []

        def job(conn: apsw.Connection) -> tuple[None, WriteContext, int]:
            conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('judge', ?)", (judge.name,))
            return None, self._context(conn, {}), self._bump(conn)

        self._run_write(job)
        if found:
            log.info("update judge %s: %d proposals for review in a ledger it had not read",
                     judge.name, len(found))
        return found

    def explain(self, text: str, source: str = "api", at: datetime | None = None,
                space: str | None = None) -> IngestResult:
        """What `ingest` would do with `text`, without writing: the same write path inside a
        transaction that is rolled back (nothing published). Sentences are embedded only
        for the update judge, which reads each beside its nearest active facts."""
        if not isinstance(text, str):
            raise EngineError("explain takes text (a string)")
        at_ts = to_ts(to_utc(at))
        assert at_ts is not None
        sents, skipped = statements(text, at_ts, commit=source == "git")
        into = _space(space)
        self.check_writable()  # a refused dry run says so before embedding
        vecs: Any = (self.embedder.embed([s[0] for s in sents]) if self.judge is not None
                     and sents else [np.zeros(self.embedder.dim, dtype=np.float32)] * len(sents))
        prepared = [Statement(s, text_hash(s), exts, v, t, source, note, into)
                    for (s, t, exts, note), v in zip(sents, vecs, strict=True)]
        prepared = self._judge_prepared(prepared, [])
        vocab = self.vocabulary()

        def job(conn: apsw.Connection) -> None:
            ctx = self._context(conn, vocab)
            acts = [a for st in prepared
                    for a in self._judgement(ctx, st, self.write_statement(ctx, st))]
            raise _DryRun(acts)

        try:
            self._writer.run(job)
        except _DryRun as d:
            return IngestResult(tuple(d.actions), tuple(skipped))
        raise AssertionError("unreachable")  # pragma: no cover

    # --- read path -----------------------------------------------------------------------
    def retrieve(self, query: str, k: int = 5, as_of: datetime | None = None,
                 space: str | None = None, known_at: datetime | None = None) -> list[Hit]:
        """Cosine top-k over the facts valid at `as_of` (default now), as original sentences.

        `space`: a project's facts plus the global ones (default: every space).
        `known_at`: read the ledger as it was known at that instant (transaction time):
        statements recorded later, and later corrections, are not seen; `as_of` then
        defaults to `known_at` ("what would it have said then?"). Each hit's validity and
        status are those known at that instant."""
        _check_query(query, k)
        t0 = time.perf_counter()
        qv = self.embedder.embed([query])[0]
        if known_at is not None:
            hits = self._search_known(qv, k, as_of, known_at, _spaces(space), query)
        else:
            hits = self._search(qv, k, as_of, _spaces(space), query=query)
        self.metrics.record("retrieve", (time.perf_counter() - t0) * 1000)
        return hits

    def ingest_and_retrieve(self, text: str, query: str | None = None, k: int = 5,
                            source: str = "api", at: datetime | None = None,
                            space: str | None = None) -> TurnRecall:
        """Remember `text`, then retrieve for `query` (default: the text) as of now.

        One embedding batch serves both, which is what a chat turn needs: the endpoint's
        write-then-read costs one model call instead of two.
        """
        if not isinstance(text, str):
            raise EngineError("ingest takes text (a string)")
        query = text if query is None else query
        _check_query(query, k)
        t0 = time.perf_counter()
        at_ts = to_ts(to_utc(at))
        assert at_ts is not None
        sents, skipped = statements(text, at_ts)
        prepared, qv = self._prepare(sents, source, extra=query, space=_space(space),
                                     judge_budget=TURN_JUDGE_PAIRS)
        per_statement = self._write(prepared) if prepared else []
        t1 = time.perf_counter()
        stale: list[tuple[int, float]] = []
        hits = self._search(qv, k, None, _spaces(space), stale, query=query)
        t2 = time.perf_counter()
        ingest_ms, retrieve_ms = (t1 - t0) * 1000, (t2 - t1) * 1000
        self.metrics.record("ingest", ingest_ms)
        self.metrics.record("retrieve", retrieve_ms)
        result = IngestResult(tuple(a for acts in per_statement for a in acts), tuple(skipped))
        if self.llm_tier is not None:
            self.llm_tier.offer(result)
        by = {r[0]: r[1] for r in self._readers.query(
            f"SELECT id, superseded_by FROM assertions WHERE id IN ({','.join('?' * len(stale))})",
            [i for i, _ in stale])} if stale else {}
        filtered = tuple((i, sc, by.get(i)) for i, sc in stale[:k] if i in by)
        return TurnRecall(result, hits, ingest_ms, retrieve_ms, filtered)

    def _search(self, qv: np.ndarray, k: int, as_of: datetime | None,
                spaces: tuple[str, ...] | None = None,
                stale: list[tuple[int, float]] | None = None,
                fresh: bool = False, query: str | None = None) -> list[Hit]:
        at = to_ts(to_utc(as_of))
        assert at is not None
        index = self._sync_index()
        mark = len(stale) if stale is not None else 0
        pairs = index.search(qv, k * 3, at, spaces, stale)
        pairs, rows = self._fuse(index, qv, pairs, query, at, spaces, k)
        hits: list[Hit] = []
        seen: set[str] = set()
        for row_id, score in pairs:
            a = rows.get(row_id)
            if (a is None or a.status not in RETRIEVABLE or not a.valid_at(_dt(at))
                    or a.label == RESTRICTED
                    or not a.text):
                if not fresh and self._writer.incremental and index.generation >= 0:
                    # another client changed this row after our index last caught up (a team
                    # ledger's listener is a few ms behind): catch up now and search again
                    with self._index_lock:
                        if not self._catch_up(index):
                            self._index = None
                    if stale is not None:
                        del stale[mark:]
                    return self._search(qv, k, as_of, spaces, stale, fresh=True, query=query)
                continue  # changed since the index was read (or purged)
            if a.text in seen:
                continue  # one sentence can hold several assertions
            seen.add(a.text)
            hits.append(Hit(a.text, score, a.id, a.subject, a.relation, a.object, a.valid_from,
                            a.valid_to, a.recorded_at, a.status, a.source))
            if len(hits) == k:
                break
        return hits

    def _search_known(self, qv: np.ndarray, k: int, as_of: datetime | None,
                      known_at: datetime, spaces: tuple[str, ...] | None,
                      query: str | None = None) -> list[Hit]:
        known = to_ts(to_utc(known_at))
        at = to_ts(to_utc(as_of)) if as_of is not None else known
        assert known is not None and at is not None
        if known > time.time() + 1:
            raise EngineError("known_at is in the future: the ledger can only say what it "
                              "knew up to now")
        space_sql = (f" AND a.space IN ({','.join('?' * len(spaces))})" if spaces else "")
        rows = self._readers.query(
            "SELECT v.row_id, v.status, v.valid_from, v.valid_to FROM row_versions v"
            " JOIN (SELECT row_id, max(vid) AS vid FROM row_versions WHERE at <= ?"
            " GROUP BY row_id) m ON m.vid = v.vid JOIN assertions a ON a.id = v.row_id"
            " WHERE v.status IN ('active', 'superseded', 'plain', 'retracted')"
            " AND v.label != 'restricted' AND a.label != 'restricted'"
            " AND v.valid_from <= ? AND (v.valid_to IS NULL OR ? < v.valid_to)" + space_sql,
            (known, at, at, *(spaces or ())))
        state = {int(r[0]): (Status(str(r[1])), float(r[2]),
                             None if r[3] is None else float(r[3])) for r in rows}
        index = self._sync_index()
        scored = sorted(index.score_ids(qv, list(state)), key=lambda p: -p[1])[: k * 3]
        scored, current = self._fuse(index, qv, scored, query, None, spaces, k,
                                     within=state.keys())
        hits: list[Hit] = []
        seen: set[str] = set()
        for row_id, score in scored:
            a = current.get(row_id)
            if a is None or not a.text or a.text in seen:
                continue  # erased since (purged or redacted): not brought back
            seen.add(a.text)
            status, vf, vt = state[row_id]
            hits.append(Hit(a.text, score, a.id, a.subject, a.relation, a.object, _dt(vf),
                            None if vt is None else _dt(vt), a.recorded_at, status, a.source))
            if len(hits) == k:
                break
        return hits

    def _fuse(self, index: VectorIndex, qv: np.ndarray, pairs: list[tuple[int, float]],
              query: str | None, at: float | None, spaces: tuple[str, ...] | None, k: int,
              within: Any = None) -> tuple[list[tuple[int, float]], dict[int, Assertion]]:
        """The vector ranking `pairs` fused with the lexical one (engine/lexical.py), best
        first, with the rows they name. Each score is `cosine + LEXICAL_WEIGHT * coverage`;
        the lexical side adds the best term matches the vector side missed. `within` (a
        read as known at some instant) limits the lexical matches to those rows."""
        q_terms = lexical.query_terms(query) if query and self.hybrid else []
        if not q_terms:
            return pairs, self._rows([i for i, _ in pairs])
        q = self._readers.query
        dfs = self._doc_freqs(q_terms, len(index))
        if not dfs:  # no sentence holds any of the question's terms
            return pairs, self._rows([i for i, _ in pairs])
        n_docs = max(len(index), max(dfs.values()) + 1)
        q_idf = {t: lexical.idf(n_docs, n) for t, n in dfs.items()}
        limit = max(3 * k, 15)
        # candidates come from the selective terms only: one that half the ledger holds adds
        # no candidate worth ranking, and ranking all its sentences is most of the cost
        rare = [t for t, n in dfs.items() if n <= lexical.rare_enough(n_docs)]
        found = lexical.candidates(q, self.backend, rare, at, spaces,
                                   limit if within is None else 20 * limit) if rare else []
        if within is not None:
            found = [i for i in found if i in within][:limit]
        have = {i for i, _ in pairs}
        pairs = pairs + index.score_ids(qv, [i for i in found if i not in have])
        rows = self._rows([i for i, _ in pairs])
        if self.fusion == "rrf":
            by_cos = sorted(pairs, key=lambda p: -p[1])
            lex_rank = {i: r for r, i in enumerate(found)}
            rrf = {i: 1 / (61 + r) + (1 / (61 + lex_rank[i]) if i in lex_rank else 0.0)
                   for r, (i, _) in enumerate(by_cos)}
            return sorted(by_cos, key=lambda p: -rrf[p[0]]), rows
        w = self.lexical_weight
        fused = [(i, sc + w * lexical.coverage(q_idf, lexical.terms(rows[i].text))
                  if i in rows else sc) for i, sc in pairs]
        fused.sort(key=lambda p: -p[1])
        return fused, rows

    def _doc_freqs(self, q_terms: list[str], n_rows: int) -> dict[str, int]:
        """How many sentences hold each term (those held by none left out). A common term's
        count (above `rare_enough`) is kept and reused until the ledger's size moves by 2%:
        counting it is most of a term look-up's cost (a team ledger counts on the server),
        and its weight barely moves. A rare term is counted every time, so a sentence just
        written is found by the term it names at once."""
        cache = self._df_cache
        slack = lexical.rare_enough(n_rows)
        need = [t for t in q_terms if t not in cache or abs(cache[t][1] - n_rows) > slack]
        fresh = lexical.doc_freqs(self._readers.query, self.backend, need) if need else {}
        if len(cache) > 20_000:
            cache.clear()
        out: dict[str, int] = {}
        for t in q_terms:
            n = fresh.get(t, 0) if t in need else cache[t][0]
            if t in need and n > slack:
                cache[t] = (n, n_rows)
            if n > 0:
                out[t] = n
        return out

    def history(self, subject: str, relation: str, context: str | None = None,
                space: str | None = None) -> list[Assertion]:
        """A key's supersession chain, oldest first (renames followed); `context` picks a
        qualified key ("prod", "rev b"), `space` a project's key (default: the global one)."""
        rel = normalize_relation(relation)
        ctx = (context or "").strip().casefold()
        sp = _space(space)
        key = make_key(key_subject(self._readers.query, normalize_entity(subject), rel, ctx, sp),
                       rel, ctx, sp)
        rows = self._readers.query(
            f"SELECT {COLUMNS} FROM assertions WHERE key=? AND status IN"
            " ('active','superseded','retracted') ORDER BY valid_from, id", (key,))
        return [row_to_assertion(r) for r in rows]

    def _rows(self, ids: list[int]) -> dict[int, Assertion]:
        if not ids:
            return {}
        rows = self._readers.query(
            f"SELECT {COLUMNS} FROM assertions WHERE id IN ({','.join('?' * len(ids))})", ids)
        return {r[0]: row_to_assertion(r) for r in rows}

    def _generation(self) -> int:
        return int(self._readers.query("SELECT v FROM meta WHERE k='generation'")[0][0])

    def _sync_index(self) -> VectorIndex:
        """The vector index, (re)loaded when the ledger changed behind this process's back.

        On a team ledger the listener keeps it in step (`_on_remote_change`), so a read
        costs no round trip while the listener is connected; otherwise the index catches up
        from the change feed, and reloads only when it fell behind the feed."""
        index = self._index
        listener = self._listener
        if (listener is not None and listener.connected.is_set() and index is not None
                and index.generation >= 0):
            return index
        gen = self._generation()
        if index is not None and index.generation >= gen:
            return index
        with self._index_lock:
            index = self._index
            if index is not None and index.generation >= self._generation():
                return index
            if (index is not None and index.generation >= 0 and self._writer.incremental
                    and self._catch_up(index)):
                return index
            fresh = VectorIndex(self.embedder.dim)
            with fresh.lock:
                self._index = fresh
                self._load_index(fresh)
            return fresh

    def subscribe_remote(self, fn: Callable[[int], None]) -> Callable[[], None]:
        """Call `fn(generation)` (on the listener's thread) when another client writes this
        team ledger; returns the unsubscribe function. A file ledger never calls it."""
        self._remote_hooks.append(fn)
        return lambda: self._remote_hooks.remove(fn) if fn in self._remote_hooks else None

    def _on_remote_change(self, gen: int | None) -> None:
        """The listener's call (its own thread): another client wrote; catch up now so the
        next read finds it. Nothing to do before the first read loads the index."""
        if gen is not None and gen > self._seen_gen:
            self._seen_gen = gen
            if gen != self._own_gen:
                for fn in list(self._remote_hooks):
                    try:
                        fn(gen)
                    except Exception as e:  # a subscriber's failure is its own
                        log.info("remote-change subscriber failed: %s", e)
        index = self._index
        if index is None or self._closed or (gen is not None and index.generation >= gen):
            return
        with self._index_lock:
            index = self._index
            if index is None or index.generation < 0:
                return
            if not self._catch_up(index):
                self._index = None  # fell behind the feed: the next read reloads

    def _catch_up(self, index: VectorIndex) -> bool:
        """Apply the rows changed since the index's generation (a team ledger's change
        feed); False when the feed no longer reaches back that far."""
        conn = self._readers.conn()
        try:
            conn.execute("BEGIN")
            gen = int(scalar(conn, "SELECT v FROM meta WHERE k='generation'"))
            since = index.generation
            if gen <= since:
                conn.execute("COMMIT")
                return True
            oldest = scalar(conn, "SELECT min(gen) FROM changes")
            if oldest is None or int(oldest) > since + 1:
                conn.execute("COMMIT")
                return False
            rows = conn.execute(
                "SELECT a.id, a.valid_from, a.valid_to, a.status, v.embedding, a.space, a.label"
                " FROM assertions a LEFT JOIN vectors v ON v.rowid = a.id WHERE a.id IN"
                " (SELECT row_id FROM changes WHERE gen > ? AND gen <= ?)",
                (since, gen)).fetchall()
            conn.execute("COMMIT")
        except BaseException:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise
        updates = []
        for r in rows:
            row_id, vf, vt, status, blob, space, label = (cast(Any, x) for x in r)
            vec = None if blob is None else np.frombuffer(bytes(blob), dtype=np.float32)
            updates.append(IndexUpdate(int(row_id), float(vf), None if vt is None else float(vt),
                                       Status(str(status)) in RETRIEVABLE and vec is not None
                                       and label != RESTRICTED, vec, str(space)))
        with index.lock:
            index.apply(updates, max(index.generation, gen))
        return True

    def _load_index(self, index: VectorIndex) -> None:
        conn = self._readers.conn()
        try:
            conn.execute("BEGIN")
            gen = int(scalar(conn, "SELECT v FROM meta WHERE k='generation'"))
            rows = conn.execute(
                "SELECT a.id, a.valid_from, a.valid_to, a.status, v.embedding, a.space, a.label"
                " FROM assertions a JOIN vectors v ON v.rowid = a.id ORDER BY a.id").fetchall()
            conn.execute("COMMIT")
        except KNOWN_ERRORS as e:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise translate(e, self.path) from e  # type: ignore[arg-type]
        except BaseException:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise
        n, dim = len(rows), index.dim
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
        vfrom = np.fromiter((r[1] for r in rows), dtype=np.float64, count=n)
        vto = np.fromiter((np.inf if r[2] is None else r[2] for r in rows), np.float64, count=n)
        ok = np.array([Status(str(r[3])) in RETRIEVABLE and r[6] != RESTRICTED for r in rows],
                      dtype=bool)
        blob = b"".join(bytes(r[4]) for r in rows)  # type: ignore[arg-type]
        vecs = (np.frombuffer(blob, dtype=np.float32).reshape(n, dim)
                if n else np.zeros((0, dim), dtype=np.float32))
        index.load(ids, vecs, vfrom, vto, ok, gen, [str(r[5]) for r in rows])

    # --- the writer's plumbing -----------------------------------------------------------
    def _context(self, conn: apsw.Connection, vocab: dict[str, Cardinality]) -> WriteContext:
        now = time.time()
        return WriteContext(conn, now, self.quarantine_threshold, vocab, author=self.author,
                            authority_order=self.authority_order,
                            expires=(lambda auth, label: self.expires_for(auth, label, now))
                            if self.retention else None)

    @staticmethod
    def _bump(conn: apsw.Connection) -> int:
        conn.execute("UPDATE meta SET v = CAST(v AS INTEGER) + 1 WHERE k='generation'")
        return int(scalar(conn, "SELECT v FROM meta WHERE k='generation'"))

    def _run_write(self, job: Callable[[apsw.Connection], tuple[Any, WriteContext, int]]) -> Any:
        return self._submit_write(job).result()

    def _submit_write(self, job: Callable[[apsw.Connection], tuple[Any, WriteContext, int]]
                      ) -> Future[Any]:
        """Queue a write job; its index changes are published before COMMIT so readers
        never lag. The future holds the job's own result."""
        if self._closed:
            raise EngineError("the engine is closed")

        def publish(conn: apsw.Connection, result: tuple[Any, WriteContext, int]) -> None:
            _, ctx, gen = result
            self._writer.record_changes(conn, [u.id for u in ctx.updates], gen)
            self._own_gen = gen
            index = self._index
            if index is None:
                return
            with index.lock:
                if index.generation == gen - 1:
                    index.apply(ctx.updates, gen)
                elif self._writer.incremental and index.generation >= 0:
                    # others wrote in between: apply ours; the catch-up from the index's
                    # generation brings theirs (and ours again, harmlessly)
                    index.apply(ctx.updates, index.generation)
                else:
                    index.generation = -1  # another process wrote in between: reload

        outer: Future[Any] = Future()

        def done(inner: Future[tuple[Any, WriteContext, int]]) -> None:
            err = inner.exception()
            if err is not None:
                if self._index is not None:
                    self._index.generation = -1  # publish may have run before a failed COMMIT
                outer.set_exception(err)
            else:
                outer.set_result(inner.result()[0])

        self._writer.submit(job, publish).add_done_callback(done)
        return outer

    # --- ledger listings (GUI, CLI, endpoint) --------------------------------------------
    def get(self, assertion_id: int) -> Assertion:
        rows = self._rows([int(assertion_id)])
        if int(assertion_id) not in rows:
            raise NotFound(f"no assertion with id {assertion_id}")
        return rows[int(assertion_id)]

    def list_assertions(self, flt: LedgerFilter | None = None, offset: int = 0, limit: int = 200,
                        order: str = "id", descending: bool = True) -> list[Assertion]:
        return queries.list_assertions(self._readers, flt, offset, limit, order, descending)

    def count_assertions(self, flt: LedgerFilter | None = None) -> int:
        return queries.count_assertions(self._readers, flt)

    def stats(self) -> dict[str, Any]:
        s = queries.stats(self._readers)
        s.update(path=str(self.path), location=self.location, backend=self.backend,
                 embedder=self.embedder.name, dim=self.embedder.dim)
        return s

    def time_range(self) -> tuple[datetime, datetime] | None:
        r = self._readers.query(
            "SELECT min(valid_from), max(valid_from), max(valid_to)"
            " FROM assertions WHERE status NOT IN ('rejected')")[0]
        if r[0] is None:
            return None
        hi = max(r[1], r[2] or 0, time.time())
        return _dt(r[0]), _dt(hi)

    def spaces(self) -> dict[str, dict[str, int]]:
        """The ledger's spaces with their row counts ("global" first)."""
        return queries.spaces(self._readers)

    def move_to_space(self, assertion_id: int, space: str) -> list[Assertion]:
        """Move a fact — every row of its sentence, and the key's earlier values with it — to
        another space. Refused when the target already holds a current value for that key."""
        target = _space(space)
        a = self.get(assertion_id)

        def job(conn: apsw.Connection) -> tuple[list[int], WriteContext, int]:
            ctx = self._context(conn, {})
            rows = ctx.q("SELECT id, key, subject_norm, relation_norm, context, space, status"
                         " FROM assertions WHERE text_hash=(SELECT text_hash FROM assertions"
                         " WHERE id=?) AND +space=?", (int(assertion_id), a.space))
            moved: list[int] = []
            for row_id, key, sn, rn, c, src, _st in rows:
                if src == target:
                    continue
                new_key = make_key(sn, rn, c or "", target) if key else None
                chain = ([r[0] for r in ctx.q("SELECT id FROM assertions WHERE key=?", (key,))]
                         if key else [row_id])
                if new_key and ctx.q("SELECT 1 FROM assertions WHERE key=? AND status='active'",
                                     (new_key,)):
                    raise EngineError(
                        f"the space {target!r} already holds a current value for "
                        f"{key_label(a.subject, a.relation, c)}; forget one of them first")
                for rid in chain:
                    ctx.conn.execute("UPDATE assertions SET space=?, key=? WHERE id=?",
                                     (target, new_key, rid))
                    ctx.touch(rid)  # other clients of a team ledger learn of the move
                    moved.append(rid)
            return moved, ctx, self._bump(conn)

        self.check_writable()
        moved = self._run_write(job)
        self._index = None  # spaces changed under the index: rebuild on the next read
        return [self.get(i) for i in moved]

    def keys(self, search: str | None = None, limit: int = 100) -> list[tuple[str, str]]:
        return queries.keys(self._readers, search, limit)

    def key_entries(self, search: str | None = None, limit: int = 100
                    ) -> list[tuple[str, str, str, str]]:
        """(subject, relation, context, space) of the ledger's keys, most recent first."""
        return queries.key_entries(self._readers, search, limit)

    def quarantined(self) -> list[Assertion]:
        return self.list_assertions(LedgerFilter(statuses=(Status.QUARANTINED,)), limit=10_000,
                                    order="id", descending=False)

    def vocabulary(self) -> dict[str, Cardinality]:
        vocab = dict(DEFAULT_VOCABULARY)
        for rel, card in self._readers.query("SELECT relation, cardinality FROM vocabulary"):
            vocab[rel] = Cardinality(card)
        return vocab

    def set_cardinality(self, relation: str, cardinality: Cardinality | str) -> None:
        """Declare a relation single- or multi-valued for this ledger (affects new statements)."""
        try:
            card = Cardinality(cardinality)
        except ValueError:
            raise EngineError(f"cardinality must be 'single' or 'multi', not {cardinality!r}"
                              ) from None
        rel = normalize_relation(relation)
        if not rel:
            raise EngineError("the relation name is empty")
        self._writer.run(lambda c: c.execute(
            "INSERT INTO vocabulary(relation, cardinality) VALUES (?, ?) ON CONFLICT(relation)"
            " DO UPDATE SET cardinality=excluded.cardinality", (rel, card.value)))

    def export(self, unreadable: Callable[[int], None] | None = None,
               space: str | None = None) -> Iterator[dict[str, Any]]:
        """Every row, oldest first, as JSON-ready dicts (vectors are re-made on import);
        `space`: only that space's rows.

        `unreadable`: on a damaged ledger, go on past the damage row by row, calling it with
        each id that can't be read (without it, the damage raises StoreCorrupt).
        """
        if space is not None:
            sp = _space(space)
            yield from (d for d in self.export(unreadable) if d.get("space") == sp)
            return
        last = 0
        while True:
            try:
                rows = self._readers.query(
                    f"SELECT {COLUMNS} FROM assertions WHERE id > ? ORDER BY id LIMIT 1000",
                    (last,))
            except StoreCorrupt:
                if unreadable is None:
                    raise
                yield from self._salvage(last, unreadable)
                return
            if not rows:
                return
            for r in rows:
                yield row_to_assertion(r).to_dict()
            last = rows[-1][0]

    def _salvage(self, last: int, unreadable: Callable[[int], None]
                 ) -> Iterator[dict[str, Any]]:
        """Rows after `last` one by one (rows are never deleted: a missing id is a lost one)."""
        top = int(self._readers.query("SELECT max(id) FROM assertions")[0][0] or last)
        for i in range(last + 1, top + 1):
            try:
                rows = self._readers.query(f"SELECT {COLUMNS} FROM assertions WHERE id=?", (i,))
                row = row_to_assertion(rows[0]).to_dict() if rows else None
            except (StoreCorrupt, ValueError, TypeError):
                row = None
            if row is None:
                unreadable(i)
            else:
                yield row


def _label(label: str | None) -> str:
    try:
        return check_label(label)
    except ValueError as e:
        raise EngineError(str(e)) from None


def _space(name: str | None) -> str:
    try:
        return normalize_space(name)
    except ValueError as e:
        raise EngineError(str(e)) from None


def _spaces(name: str | None) -> tuple[str, ...] | None:
    """What a read in `name` sees: that space and the global one (None: every space)."""
    if name is None:
        return None
    sp = _space(name)
    return (GLOBAL,) if sp == GLOBAL else (sp, GLOBAL)


class _DryRun(Exception):
    def __init__(self, actions: list[IngestAction]):
        super().__init__("dry run")
        self.actions = actions


def _check_query(query: str, k: int) -> None:
    if not isinstance(query, str) or not query.strip():
        raise EngineError("retrieve needs a non-empty query")
    if k < 1:
        raise EngineError("k must be at least 1")


def statements(text: str, at: float, *, commit: bool = False
               ) -> tuple[list[Sentence], list[Skipped]]:
    """The text's sentences to store (with their claims) and those not stored, with why."""
    return statements_many([(text, at)], commit=commit)[0]


def statements_many(texts: list[tuple[str, float]], *, commit: bool = False
                    ) -> list[tuple[list[Sentence], list[Skipped]]]:
    """`statements` for many texts, parsed in one batch."""
    # Nothing stored may pose as the memory block's tag or a chat role marker (see sanitize).
    clean = [neutralize(text) for text, _ in texts]
    # Secrets become typed placeholders before anything is hashed, embedded or stored.
    split = [split_sentences(redact(c.text)[0], keep_questions=True) for c in clean]
    flat = [s for sents in split for s in sents]
    times = [_dt(at) for (_, at), sents in zip(texts, split, strict=True) for _ in sents]
    readings = iter(read(flat, times, commit=commit))
    out = []
    for (_, at), sents, c in zip(texts, split, clean, strict=True):
        keep: list[Sentence] = []
        skipped = [Skipped(tag, "markup", BLOCK_TAG_REASON) for tag in c.removed]
        for _ in sents:
            r = next(readings)
            if not r.stored:
                skipped.append(Skipped(r.sentence, r.kind, r.reason))
            else:
                keep.append((r.sentence, at, r.extractions,
                             f"note:{r.kind}" if r.note else ""))
        out.append((keep, skipped))
    return out


def writer_name() -> str:
    """Who writes: "user@machine" (`MEMSTRATA_AUTHOR` overrides it)."""
    name = os.environ.get("MEMSTRATA_AUTHOR", "").strip()
    if name:
        return name[:200]
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname() or 'localhost'}"


def _create_space(conn: apsw.Connection, name: str, dim: int) -> None:
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS vectors USING vec0(embedding float[{dim}])")
    conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('embedder', ?), ('dim', ?)",
                 (name, str(dim)))


def _dt(ts: float) -> datetime:
    d = from_ts(ts)
    assert d is not None
    return d
