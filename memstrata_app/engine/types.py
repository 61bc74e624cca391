"""The ledger's vocabulary as plain data: what goes in, what comes out."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum, StrEnum
from typing import NewType

AssertionId = NewType("AssertionId", int)

# Permission labels, least to most restricted (governance/labels.py holds their rules). A
# restricted row is never injected nor returned by recall/query; audit views show it.
LABELS = ("normal", "sensitive", "restricted")
RESTRICTED = "restricted"


class Status(StrEnum):
    """Lifecycle of one ledger row."""

    ACTIVE = "active"  # the open-ended (latest) value of its key
    SUPERSEDED = "superseded"  # a closed interval of a key's history
    QUARANTINED = "quarantined"  # low-confidence extraction awaiting review
    REJECTED = "rejected"  # a reviewer said no; kept for audit
    PLAIN = "plain"  # prose with no clean assertion, retrievable like RAG
    RETRACTED = "retracted"  # explicitly removed ("no longer depends on X", forget)


class Action(StrEnum):
    """What the write path did with one statement."""

    NOVEL = "novel"  # first value of its key (or a new member of a multi-valued key)
    REINFORCED = "reinforced"  # same key, same value as what is valid then
    SUPERSEDED = "superseded"  # new value retired the active one
    DUPLICATE = "duplicate"  # the same normalized sentence is already active
    QUARANTINED = "quarantined"  # stored for review, not retrievable
    PROSE = "prose"  # no clean assertion: stored as a plain fact
    HISTORY = "history"  # late-arriving older statement, filed into the past
    RETRACTED = "retracted"  # an explicit removal retired a value
    REFUSED = "refused"  # not stored: the sentence was erased (purge, redaction) before


# the actions whose row is the statement's own, open row (a new sentence, a new value, prose,
# a retraction)
OWN_ACTIONS = (Action.NOVEL, Action.SUPERSEDED, Action.PROSE, Action.RETRACTED)


class Cardinality(StrEnum):
    SINGLE = "single"
    MULTI = "multi"


@dataclass(frozen=True, slots=True)
class Extraction:
    """One (subject, relation, object) candidate pulled out of a sentence.

    `removal` marks an explicit retraction ("no longer depends on X").
    `effective_from` is an explicit effective date found in the text, if any.
    """

    subject: str
    relation: str
    object: str
    sentence: str
    confidence: float
    method: str
    removal: bool = False
    effective_from: datetime | None = None
    context: str = ""  # canonical qualifiers ("prod", "rev b; ios"); part of the key
    old_object: str | None = None  # the value a change statement says it replaced
    rollback: bool = False  # "rolled back to X": X is an earlier value of the key
    by_value: bool = False  # no subject said: the key is found through `old_object`
    change: bool = False  # the claim says something changed ("moved to", "is … now")
    broad: bool = False  # "everywhere", "in all environments": would reach every context


@dataclass(frozen=True, slots=True)
class Assertion:
    """One ledger row, assertion or plain fact, as stored."""

    id: AssertionId
    kind: str  # "assertion" | "fact"
    subject: str | None
    relation: str | None
    object: str | None
    subject_norm: str | None
    relation_norm: str | None
    object_norm: str | None
    key: str | None
    text: str
    source: str
    method: str
    confidence: float
    status: Status
    recorded_at: datetime
    retired_at: datetime | None
    valid_from: datetime
    valid_to: datetime | None
    superseded_by: AssertionId | None
    reason: str | None
    reinforced: int
    context: str | None = None  # the key's context qualifiers ("prod", "rev b"), if any
    space: str = "global"  # the project it belongs to ("global": meant for every project)
    author: str | None = None  # who wrote the row: "user@machine" (None: written before v5)
    authority: str | None = None  # who stated it: user, assistant, tool, import, reviewer
    label: str = "normal"  # permission: normal, sensitive, restricted (never served)
    reviewed_by: str | None = None  # who approved, rejected or contested it in review
    reviewed_at: datetime | None = None
    expires_at: datetime | None = None  # when a retention rule retires it, unless confirmed
    hold: str | None = None  # a legal hold's reason: no expiry, no purge, no redaction

    def valid_at(self, t: datetime) -> bool:
        return self.valid_from <= t and (self.valid_to is None or t < self.valid_to)

    def to_dict(self) -> dict:
        d = {f: getattr(self, f) for f in self.__dataclass_fields__}
        for k, v in d.items():
            if isinstance(v, datetime):
                d[k] = v.isoformat()
            elif isinstance(v, Enum):
                d[k] = v.value
        return d


@dataclass(frozen=True, slots=True)
class JudgedCandidate:
    """One active fact the update judge read beside a new statement, and what came of it.

    `decision`: "superseded" (retired by the judge), "review" (the statement waits in the
    review queue), "veto" (a rule retirement the judge read as compatible: sent to review),
    "kept" (below the thresholds: nothing), "rule" (the rules decided this pair), "other
    context" (both name their context and none is shared: nothing, however sure), "other
    member" (a removal of something the fact does not name: nothing), "superseded (part)"
    (one part of the fact's sentence retired, the rest kept current), "history" (a late
    statement filed before the one that updates it)."""

    assertion_id: AssertionId
    text: str
    updates: float
    restates: float
    compatible: float
    decision: str

    def to_dict(self) -> dict:
        return {"assertion_id": int(self.assertion_id), "text": self.text,
                "updates": round(self.updates, 4), "restates": round(self.restates, 4),
                "compatible": round(self.compatible, 4), "decision": self.decision}


@dataclass(frozen=True, slots=True)
class IngestAction:
    """The outcome for one statement of an ingested text."""

    action: Action
    assertion_id: AssertionId
    text: str
    subject: str | None = None
    relation: str | None = None
    object: str | None = None
    retired: tuple[AssertionId, ...] = ()  # rows this statement closed
    confidence: float = 1.0
    context: str | None = None
    method: str = ""
    reason: str = ""  # why this action, in words (value reference, review, note …)
    judged: tuple[JudgedCandidate, ...] = ()  # what the update judge read, and decided

    def to_dict(self) -> dict:
        return {
            "judged": [j.to_dict() for j in self.judged],
            "action": self.action.value,
            "assertion_id": int(self.assertion_id),
            "text": self.text,
            "subject": self.subject,
            "relation": self.relation,
            "object": self.object,
            "context": self.context,
            "retired": [int(i) for i in self.retired],
            "confidence": self.confidence,
            "method": self.method,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class Skipped:
    """A sentence that was not stored, and why (a question, a request to the assistant)."""

    text: str
    kind: str
    reason: str

    def to_dict(self) -> dict:
        return {"text": self.text, "kind": self.kind, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class IngestResult:
    """All actions taken for one ingested text, in sentence order."""

    actions: tuple[IngestAction, ...] = field(default_factory=tuple)
    skipped: tuple[Skipped, ...] = ()  # sentences not stored, with the reason

    def __iter__(self) -> Iterator[IngestAction]:
        return iter(self.actions)

    def __len__(self) -> int:
        return len(self.actions)

    @property
    def ids(self) -> list[AssertionId]:
        return [a.assertion_id for a in self.actions]

    def count(self, action: Action) -> int:
        return sum(1 for a in self.actions if a.action == action)

    @property
    def redacted(self) -> int:
        """Secrets replaced by a `[secret:<type>]` placeholder in this text's sentences."""
        texts = {a.text for a in self.actions} | {s.text for s in self.skipped}
        return sum(t.count("[secret:") for t in texts if t)

    def to_dict(self) -> dict:
        return {"actions": [a.to_dict() for a in self.actions],
                "skipped": [s.to_dict() for s in self.skipped],
                "redacted": self.redacted}


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved fact: the original sentence, its score and its validity.

    `score`: the cosine between the question and the sentence, plus (hybrid retrieval, the
    default) 0.5 x the IDF-weighted share of the question's terms the sentence holds
    (retrieve/lexical.py, docs/RETRIEVAL.md); with `hybrid` off, the cosine alone."""

    text: str
    score: float
    assertion_id: AssertionId
    subject: str | None
    relation: str | None
    object: str | None
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    status: Status
    source: str

    def to_dict(self) -> dict:
        return {
            "text": self.text,
            "score": round(float(self.score), 6),
            "assertion_id": int(self.assertion_id),
            "subject": self.subject,
            "relation": self.relation,
            "object": self.object,
            "valid_from": self.valid_from.isoformat(),
            "valid_to": self.valid_to.isoformat() if self.valid_to else None,
            "recorded_at": self.recorded_at.isoformat(),
            "status": self.status.value,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class TurnRecall:
    """A chat turn remembered and answered in one step, with each half's wall time."""

    ingested: IngestResult
    hits: list[Hit]
    ingest_ms: float
    retrieve_ms: float
    # the closest rows left out because they are no longer valid: (id, score, retired by)
    filtered: tuple[tuple[int, float, int | None], ...] = ()
    # judged later (ingest_and_retrieve(judge_later=True)): call once the request is upstream
    release: Callable[[], None] | None = None


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One reviewer action in the ledger's action log (approve, reject, forget, move,
    contest) or the undo of one; `blocked` says why it cannot be undone now (None: it can,
    or it was not asked)."""

    id: int
    at: datetime
    by: str | None  # who did it: "user@machine"
    kind: str  # approve | reject | forget | move | contest | undo
    row_id: int | None  # the row it was done to
    summary: str  # in words, never a sentence or a value: "approve #12, retiring #4"
    rows: tuple[AssertionId, ...] = ()  # the rows it changed
    created: tuple[AssertionId, ...] = ()  # the rows it wrote (a contest's value, a reopening)
    undoes: int | None = None  # for an undo: the entry it undid
    undone_by: int | None = None  # the undo that took it back
    blocked: str | None = None

    @property
    def undoable(self) -> bool:
        return self.kind != "undo" and self.undone_by is None and self.blocked is None

    def to_dict(self) -> dict:
        d = {f: getattr(self, f) for f in self.__dataclass_fields__}
        d["at"] = self.at.isoformat()
        d["rows"], d["created"] = list(self.rows), list(self.created)
        d["undoable"] = self.undoable
        return d


@dataclass(frozen=True, slots=True)
class UndoResult:
    """What an undo did: its own entry, the entry it undid, the rows put back as they were,
    and the rows the action had written, now withdrawn (kept, rejected, never served)."""

    entry: AuditEntry
    undone: AuditEntry
    restored: tuple[Assertion, ...]
    withdrawn: tuple[Assertion, ...] = ()

    def to_dict(self) -> dict:
        return {"entry": self.entry.to_dict(), "undone": self.undone.to_dict(),
                "restored": [a.to_dict() for a in self.restored],
                "withdrawn": [a.to_dict() for a in self.withdrawn]}


@dataclass(frozen=True, slots=True)
class LedgerFilter:
    """Which rows a ledger listing shows (all fields optional, AND-ed)."""

    statuses: tuple[Status, ...] = ()
    source: str | None = None
    relation: str | None = None
    search: str | None = None  # substring of text, subject or object (case-insensitive)
    as_of: datetime | None = None  # only rows valid at this instant
    key: str | None = None
    space: str | None = None  # only this space's rows


class EngineError(Exception):
    """A known, user-facing failure: the message says what happened and what to do."""


class NotFound(EngineError):
    pass


class StoreLocked(EngineError):
    pass


class StoreCorrupt(EngineError):
    pass


class StoreReadOnly(EngineError):
    """The ledger was opened read-only (asked for, or the file or its folder is not
    writable): reads work, every write raises this. `reason` says why, in words."""

    def __init__(self, message: str, reason: str = ""):
        super().__init__(message)
        self.reason = reason


class EmbedderMismatch(EngineError):
    pass


class Cancelled(EngineError):
    pass


class UndoRefused(EngineError):
    """An undo that would break the ledger's history (its rows changed since, it was undone
    already, or it is itself an undo): nothing was changed."""
