"""MemoryEngine: the one face of the engine (DESIGN.md, "Engine contract").

It composes four services, each with its own state, and delegates to them:
- `ledger` (ledger/): the store, its writer's jobs, the row-level reads;
- `retriever` (retrieve/): the embedder, the vector index, fusion, as-of and known-at reads;
- `understanding` (understand/): the write path from text to rows, the update judge, the
  Ollama tier, and `review` (what the write path held back);
- `governance` (governance/): authority, labels, retention, holds, erasure, the audit trail.
docs/ARCHITECTURE.md walks the write and the read path through the files.

The understanding layer (the phrasing rules, the parser, the secrets detector: most of the
engine's import time) is imported and built on first use, so a process that only reads —
`memstrata query`, `history`, `stats` — never pays for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .delegation import Deferred, Via
from .governance.service import Governance
from .ledger import queries
from .ledger.erasure import SECRET
from .ledger.keys import read_spaces, space_name
from .ledger.ledger import Ledger
from .metrics import Metrics
from .retrieve.embedders import Embedder
from .retrieve.retriever import Retriever, check_query, ledger_embedder
from .types import (
    Assertion,
    AuditEntry,
    Cardinality,
    Hit,
    IngestAction,
    IngestResult,
    LedgerFilter,
    Status,
    TurnRecall,
    UndoResult,
)

if TYPE_CHECKING:
    from .understand.pipeline import Pipeline
    from .understand.review import Review

Progress = Callable[[int, int], None]  # (done, total)


class MemoryEngine:
    """A bi-temporal ledger of facts: ingest statements, retrieve what is valid at T."""

    # where each setting and piece of state lives
    path: Via[Path | str] = Via("ledger")  # a file, or a team ledger's DSN sans password
    author: Via[str] = Via("ledger")  # recorded on every row this engine writes
    embedder: Via[Embedder] = Via("retriever")
    hybrid: Via[bool] = Via("_ranking")  # the term side fused with the vector one
    fusion: Via[str] = Via("_ranking")  # "linear" or "rrf"
    lexical_weight: Via[float] = Via("_ranking")
    quarantine_threshold: Via[float] = Deferred("understanding")
    llm_tier: Via[Any] = Via("understanding")  # the Ollama tier, when enabled
    judge: Via[Any] = Via("_judging")  # the update judge; None: the rules alone
    judge_thresholds: Via[Any] = Deferred("_judging")
    judge_candidates: Via[int] = Deferred("_judging")  # active sentences judged per statement
    judge_floor: Via[float] = Deferred("_judging")  # below this retrieval score, no candidate
    judge_pairs: Via[int] = Via("_judging")  # pairs judged (benchmarks report pairs/s)
    authority_order: Via[tuple[str, ...]] = Via("governance")
    retention: Via[tuple[Any, ...]] = Via("governance")

    def __init__(self, ledger: Ledger, embedder: Embedder, quarantine_threshold: float):
        self.metrics = Metrics()
        self.ledger = ledger
        self.governance = Governance(ledger)
        ledger.policy = self.governance
        self.retriever = Retriever(ledger, embedder, self.metrics)
        self._ranking = self.retriever.ranking
        self._pipeline: Pipeline | None = None  # built on first use (see the module's note)
        self._pending: dict[tuple[str, str], Any] = {("understanding", "quarantine_threshold"):
                                                     quarantine_threshold}
        self._judge_choice: Any = "auto"
        self._build_lock = threading.Lock()

    @property
    def understanding(self) -> Pipeline:
        """The write path (understand/pipeline.py), built on first use with the settings and
        the judge chosen before."""
        if self._pipeline is None:
            with self._build_lock:
                if self._pipeline is None:
                    from .understand.pipeline import Pipeline

                    pending = dict(self._pending)
                    p = Pipeline(self.ledger, self.retriever, self.metrics,
                                 pending.pop(("understanding", "quarantine_threshold")))
                    p.judging.use(self._judge_choice)
                    for (service, name), value in pending.items():
                        setattr(p if service == "understanding" else p.judging, name, value)
                    self._pending.clear()
                    self._pipeline = p
        return self._pipeline

    @property
    def review(self) -> Review:
        return self.understanding.review

    @property
    def _judging(self) -> Any:
        return self.understanding.judging

    # --- what tests and the app's known-at views read of the store directly ----------------
    @property
    def _readers(self) -> Any:
        return self.ledger.readers

    @property
    def _listener(self) -> Any:
        return self.ledger.listener

    @property
    def backend(self) -> str:
        """"sqlite" (a ledger file) or "postgresql" (a team ledger)."""
        return self.ledger.backend

    @property
    def location(self) -> str:
        """Which ledger this is, for people: "SQLite · /path/memstrata.db" or
        "PostgreSQL · user@host:5432/db" (never a password)."""
        return self.ledger.location

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
        A damaged ledger opens for reading; its writes raise StoreCorrupt (ledger/sqlite.py).
        `path` may be a PostgreSQL URI (`postgresql://user@host/db`): a team ledger that
        several machines share (ledger/pg.py).
        `judge`: the update judge — "auto" (the built-in model where installed), None or
        "off" (the rules alone), or a Judge (understand/judge.py).
        """
        ledger = Ledger.open(path, read_only)
        try:
            emb = ledger_embedder(ledger, embedder, ollama_host)
        except BaseException:
            ledger.close()
            raise
        eng = cls(ledger, emb, quarantine_threshold)
        ledger.follow()  # a team ledger: other machines write too, follow their changes
        return eng.use_judge(judge)

    def use_judge(self, judge: Any) -> MemoryEngine:
        """Choose the update judge: "auto" (built-in), None/"off" (rules alone) or a Judge."""
        if self._pipeline is None and (judge in (None, False, "off", "auto", "builtin")):
            self._judge_choice = judge  # these cannot fail: applied when the layer is built
        else:
            self.understanding.judging.use(judge)
        return self

    @property
    def read_only(self) -> bool:
        """True when this ledger was opened read-only: reads work, writes raise."""
        return self.ledger.read_only

    @property
    def read_only_reason(self) -> str | None:
        """Why it is read-only, in words ("the file is not writable" …); None if writable."""
        return self.ledger.read_only_reason

    def check_writable(self) -> None:
        """Raise StoreReadOnly / StoreCorrupt now if a write is known to be refused (callers
        check before slow work such as embedding)."""
        self.ledger.check_writable()

    def close(self) -> None:
        if self.ledger.closed:
            return
        if self._pipeline is not None:
            self._pipeline.later.close()  # a turn written is a turn judged
            self.disable_llm_tier()
        self.ledger.close()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def enable_llm_tier(self, model: str, host: str | None = None, **kw: Any) -> bool:
        """Put the prose the rules can't structure to an Ollama model, in the background
        (understand/llm_tier.py); False (and off) when no Ollama with that model answers."""
        return self.understanding.enable_llm_tier(model, host, **kw)

    def disable_llm_tier(self) -> None:
        self.understanding.disable_llm_tier()

    def warm_up(self, secrets: bool = True) -> None:
        """Load the embedder, the vector index and (`secrets`) the secrets rule set now (call
        from a background thread)."""
        self.embedder.embed(["warm up"])
        self.retriever.index()
        if secrets:
            self.warm_secrets()

    def warm_secrets(self) -> None:
        """Load the secrets rule set (detect-secrets and the patterns: ~0.25 s) now."""
        from .governance.secrets import redact

        redact("warm up")

    # --- write path ----------------------------------------------------------------------
    def ingest(self, text: str, source: str = "api", at: datetime | None = None,
               space: str | None = None, label: str | None = None) -> IngestResult:
        """Split `text` into statements and apply each to the ledger in one transaction.

        `space`: the project the statements belong to (default: the global space).
        `label`: the rows' permission label, "normal" (default), "sensitive" or
        "restricted" (never injected nor returned by retrieve; audit views show it)."""
        return self.understanding.ingest(text, source, at, space, label)

    def ingest_many(self, items: Iterable[str | tuple[str, datetime | None]],
                    source: str = "import", progress: Progress | None = None,
                    cancel: threading.Event | None = None,
                    space: str | None = None, label: str | None = None) -> list[IngestResult]:
        """Ingest many texts in batches (batched embedding, one transaction per batch).

        Cancelling keeps the batches already committed and raises Cancelled.
        """
        return self.understanding.ingest_many(items, source, progress, cancel, space, label)

    def rejudge(self, apply: bool = False, space: str | None = None,
                progress: Progress | None = None) -> list[Any]:
        """Read the open facts again with the current update judge; where it finds an update
        the ledger does not hold, a proposal (understand/rejudge.py). With `apply`, each goes to
        the review queue; nothing is retired without approval."""
        return self.understanding.rejudge(apply, space, progress)

    def rejudge_on_upgrade(self) -> list[Any]:
        """Once per judge version and ledger file: what a judge new to this ledger finds,
        proposed for review (the app runs it in the background after start). A ledger that
        holds nothing yet just records the judge."""
        return self.understanding.rejudge_on_upgrade()

    def explain(self, text: str, source: str = "api", at: datetime | None = None,
                space: str | None = None) -> IngestResult:
        """What `ingest` would do with `text`, without writing: the same write path inside a
        transaction that is rolled back (nothing published). Sentences are embedded only
        for the update judge, which reads each beside its nearest active facts."""
        return self.understanding.explain(text, source, at, space)

    # --- read path -----------------------------------------------------------------------
    def retrieve(self, query: str, k: int = 5, as_of: datetime | None = None,
                 space: str | None = None, known_at: datetime | None = None) -> list[Hit]:
        """Cosine top-k over the facts valid at `as_of` (default now), as original sentences.

        `space`: a project's facts plus the global ones (default: every space).
        `known_at`: read the ledger as it was known at that instant (transaction time):
        statements recorded later, and later corrections, are not seen; `as_of` then
        defaults to `known_at` ("what would it have said then?"). Each hit's validity and
        status are those known at that instant."""
        check_query(query, k)
        return self.retriever.retrieve(query, k, as_of, read_spaces(space), known_at)

    def ingest_and_retrieve(self, text: str, query: str | None = None, k: int = 5,
                            source: str = "api", at: datetime | None = None,
                            space: str | None = None, judge_later: bool = False
                            ) -> TurnRecall:
        """Remember `text`, then retrieve for `query` (default: the text) as of now.

        One embedding batch serves both, which is what a chat turn needs: the endpoint's
        write-then-read costs one model call instead of two. `judge_later`: the rules write
        the turn now and the update judge reads it afterwards, on a worker thread, once the
        answer's `release()` is called (the endpoint calls it when the request is upstream;
        understand/later.py).
        """
        return self.understanding.ingest_and_retrieve(text, query, k, source, at, space,
                                                      judge_later)

    def settle_judging(self, timeout: float | None = None) -> bool:
        """Wait until every chat turn left for the judge (`judge_later`) is judged; False
        when `timeout` seconds pass first."""
        if self._pipeline is None:
            return True
        return self._pipeline.settle_judging(timeout)

    def history(self, subject: str, relation: str, context: str | None = None,
                space: str | None = None) -> list[Assertion]:
        """A key's supersession chain, oldest first; `context` picks a qualified key ("prod",
        "rev b"), `space` a project's key (default: the global one). Renames are followed
        both ways: asked by an entity's new name or its old one, the chain holds the facts
        kept under either."""
        return self.understanding.history(subject, relation, context, space)

    def subject_names(self, subject: str, space: str | None = None) -> list[str]:
        """The normalized subjects `subject`'s facts may be kept under after renames (it
        first, then the names it was given and the entity it names; ledger/keys.py)."""
        return self.understanding.subject_names(subject, space)

    def subscribe_remote(self, fn: Callable[[int], None]) -> Callable[[], None]:
        """Call `fn(generation)` (on the listener's thread) when another client writes this
        team ledger; returns the unsubscribe function. A file ledger never calls it."""
        return self.ledger.subscribe_remote(fn)

    # --- ledger listings (GUI, CLI, endpoint) --------------------------------------------
    def get(self, assertion_id: int) -> Assertion:
        return self.ledger.get(assertion_id)

    def list_assertions(self, flt: LedgerFilter | None = None, offset: int = 0, limit: int = 200,
                        order: str = "id", descending: bool = True) -> list[Assertion]:
        return self.ledger.list_assertions(flt, offset, limit, order, descending)

    def count_assertions(self, flt: LedgerFilter | None = None) -> int:
        return self.ledger.count_assertions(flt)

    def stats(self) -> dict[str, Any]:
        return {**self.ledger.stats(), "embedder": self.embedder.name,
                "dim": self.embedder.dim}

    def time_range(self) -> tuple[datetime, datetime] | None:
        return queries.time_range(self.ledger.readers)

    def spaces(self) -> dict[str, dict[str, int]]:
        """The ledger's spaces with their row counts ("global" first)."""
        return queries.spaces(self.ledger.readers)

    def move_to_space(self, assertion_id: int, space: str) -> list[Assertion]:
        """Move a fact — every row of its sentence, and the key's earlier values with it — to
        another space. Refused when the target already holds a current value for that key."""
        moved = self.ledger.move_to_space(assertion_id, space_name(space))
        self.retriever.sync.reset()  # spaces changed under the index: rebuild on the next read
        return [self.get(i) for i in moved]

    def keys(self, search: str | None = None, limit: int = 100) -> list[tuple[str, str]]:
        return queries.keys(self.ledger.readers, search, limit)

    def key_entries(self, search: str | None = None, limit: int = 100
                    ) -> list[tuple[str, str, str, str]]:
        """(subject, relation, context, space) of the ledger's keys, most recent first."""
        return queries.key_entries(self.ledger.readers, search, limit)

    def quarantined(self) -> list[Assertion]:
        return self.list_assertions(LedgerFilter(statuses=(Status.QUARANTINED,)), limit=10_000,
                                    order="id", descending=False)

    def vocabulary(self) -> dict[str, Cardinality]:
        return self.understanding.vocabulary()

    def set_cardinality(self, relation: str, cardinality: Cardinality | str) -> None:
        """Declare a relation single- or multi-valued for this ledger (affects new statements)."""
        self.understanding.set_cardinality(relation, cardinality)

    def export(self, unreadable: Callable[[int], None] | None = None,
               space: str | None = None) -> Iterator[dict[str, Any]]:
        """Every row, oldest first, as JSON-ready dicts (vectors are re-made on import);
        `space`: only that space's rows.

        `unreadable`: on a damaged ledger, go on past the damage row by row, calling it with
        each id that can't be read (without it, the damage raises StoreCorrupt).
        """
        yield from self.ledger.export(unreadable, space_name(space) if space is not None else None)

    # --- review ----------------------------------------------------------------------------
    def approve(self, assertion_id: int, subject: str | None = None,
                relation: str | None = None, object: str | None = None) -> IngestAction:
        """Apply a quarantined extraction (optionally edited) with full supersession."""
        return self.review.approve(assertion_id, subject, relation, object)

    def reject(self, assertion_id: int) -> Assertion:
        """Refuse a quarantined extraction; it stays in the ledger for audit."""
        return self.review.reject(assertion_id)

    def pending_retirements(self) -> dict[int, int]:
        """{fact: newer fact} for each fact a judge's review item proposes to retire."""
        return self.review.pending()

    def would_retire(self, assertion_id: int) -> list[Assertion]:
        """What approving this quarantined extraction would close, as things stand."""
        return self.review.would_retire(assertion_id)

    def forget(self, assertion_id: int, reason: str = "forgotten") -> Assertion:
        """Retract a fact: it stops being valid now and is kept for audit. The value a
        current fact had replaced (an approval's, a supersession's) holds again from now."""
        return self.review.forget(assertion_id, reason)

    def undo(self, audit_id: int | None = None) -> UndoResult:
        """Undo an approve, reject, forget, move or contest (`audit_id`: its entry in
        `actions()`; None: this writer's latest): every row it changed is put back exactly
        as it was, in a new transaction (reads "as known at" before it still show the
        action), and the undo is logged. Refused (UndoRefused, nothing changed) when the
        entry was undone already or its rows changed since."""
        return self.governance.undo(audit_id)

    def undoable(self, limit: int = 20, everyone: bool = False) -> list[AuditEntry]:
        """The recent actions that are not undone yet, newest first (`everyone`: every
        writer's, not only this one's); each says in `blocked` why it cannot be undone now."""
        return self.governance.undoable(limit, everyone)

    def actions(self, limit: int = 100) -> list[AuditEntry]:
        """The action log, newest first: each approve, reject, forget, move and contest, and
        each undo (naming the entry it undid)."""
        return self.governance.actions(limit)

    # --- import and reindex --------------------------------------------------------------
    def import_records(self, records: Iterable[dict[str, Any]],
                       progress: Progress | None = None,
                       cancel: threading.Event | None = None,
                       space: str | None = None,
                       summary: dict[str, int] | None = None) -> int:
        """Restore exported rows. Into spaces that hold nothing yet (an empty ledger, or a
        space pushed to a team ledger): exactly (statuses, times, chains, authors).
        Into a space that holds rows: each standing record whose sentence the space does not hold
        yet is replayed through the write path (so importing the same export twice adds
        nothing); retracted records are not brought back. Rows keep their space unless
        `space` names the one to import into. Returns the records written or replayed;
        `summary`, when given, is filled with what happened to the records: "restored"
        (empty ledger), "already there", "kept retracted" (not replayed), "not standing"
        (rejected or quarantined, not replayed) and each replayed action's kind."""
        from .understand import restore

        return restore.import_records(self.understanding, records, progress, cancel, space, summary)

    def reindex(self, embedder: Any, progress: Progress | None = None,
                cancel: threading.Event | None = None) -> int:
        """Re-embed every row with another embedder; all or nothing (cancel changes nothing)."""
        return self.retriever.reindex(embedder, progress, cancel)

    # --- governance: erasure, holds, labels, retention, audit ---------------------------
    def purge(self, assertion_id: int, reason: str = "purged") -> list[Assertion]:
        """Remove a row's sentence, triple and vector from the ledger file, irreversibly.

        Every row made from the same sentence goes with it (a sentence with several claims
        has several rows). Each becomes a retracted tombstone that keeps its id, key,
        relation, context, interval and the reason `purged: <reason>`. Returns the
        tombstones.
        """
        return self.governance.purge(assertion_id, reason)

    def checkpoint(self, attempts: int = 20) -> bool:
        """Copy the write-ahead log into the ledger file and truncate it to zero bytes, so
        no old page stays in it. False when readers kept it busy through every attempt.
        On a team ledger (PostgreSQL): VACUUM the tables, so the purged rows' old versions
        are removed from them (PostgreSQL's own WAL and backups are the server's to keep)."""
        return self.governance.checkpoint(attempts)

    def flags(self, assertion_id: int) -> list[str]:
        """What a row is flagged for: "secret" (a secret was replaced in its sentence),
        "purged"."""
        return self.governance.flags(assertion_id)

    def flagged(self, kind: str = SECRET) -> list[int]:
        """Ids of the rows flagged `kind`, oldest first."""
        return self.governance.flagged(kind)

    def hold(self, assertion_id: int | None = None, key: str | None = None,
             reason: str = "legal hold") -> None:
        """Put a row, or every row of a key (`key` as `Assertion.key` holds it), on legal
        hold: neither expiry nor purge nor redaction touches it until released."""
        self.governance.hold(assertion_id, key, reason)

    def release_hold(self, assertion_id: int | None = None, key: str | None = None) -> None:
        self.governance.release_hold(assertion_id, key)

    def holds(self) -> list[dict[str, Any]]:
        """Every hold: {"row": id} or {"key": key}, with its reason."""
        return self.governance.holds()

    def set_label(self, assertion_id: int, label: str) -> Assertion:
        """Change a row's permission label (every row of its sentence with it)."""
        return self.governance.set_label(assertion_id, label)

    def contest(self, assertion_id: int, reason: str, right_value: str | None = None
                ) -> list[Assertion]:
        """A reviewer marks a current fact wrong. It stops being valid now and stays in its
        key's chain with the reason; with `right_value`, a reviewer-stated row holds the
        key's value from now on. Returns the contested row (and the new one)."""
        return self.review.contest(assertion_id, reason, right_value)

    def contests(self, assertion_id: int | None = None) -> list[dict[str, Any]]:
        return self.governance.contests(assertion_id)

    def expires_for(self, authority: str, label: str, now: float | None = None
                    ) -> float | None:
        """When a row stated by `authority` with `label` expires under the rules (None:
        never)."""
        return self.governance.expires_for(authority, label, now)

    def expire(self, now: datetime | None = None) -> list[tuple[int, str]]:
        """Apply the retention rules: each unconfirmed row past its expiry (and on no hold)
        is retired — or purged, where its rule says so. Returns (id, what was done)."""
        return self.governance.expire(now)

    def redact(self, assertion_id: int, reason: str = "redacted") -> list[Assertion]:
        """Erase a row's sentence, value and vector and keep the rest: its key, interval,
        status and place in the chain. Every row of the same sentence goes with it; the
        sentence is never stored again (ingest, import and approval refuse it)."""
        return self.governance.redact(assertion_id, reason)

    def log_injection(self, api: str, query: str, injected: Sequence[tuple[int, float]],
                      filtered: Sequence[tuple[int, float, int | None]],
                      settings: dict[str, Any], model: str | None = None,
                      space: str | None = None, tool: str | None = None,
                      keep_days: float | None = None, wait: bool = True) -> int | None:
        """Record one served request: the facts injected (id, score), the stale candidates
        left out (id, score, the row that retired it) and the settings in force. The query
        is kept as a hash only (the log holds no text to leak or to erase). Entries older
        than `keep_days` are dropped. Returns the entry's id; with `wait=False` the entry is
        queued for the writer and None is returned at once (the endpoint does not make a
        request wait for its own log entry)."""
        return self.governance.log_injection(api, query, injected, filtered, settings, model, space,
                                             tool, keep_days, wait)

    def injections(self, since: datetime | None = None, until: datetime | None = None,
                   limit: int = 100) -> list[dict[str, Any]]:
        """Logged requests, newest first, each with its injected and filtered facts as the
        ledger holds them now (an erased row shows as erased)."""
        return self.governance.injections(since, until, limit)

    def injection(self, entry_id: int) -> dict[str, Any]:
        return self.governance.injection(entry_id)
