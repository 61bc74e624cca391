"""The services MemoryEngine composes, each on its own (docs/ARCHITECTURE.md): the ledger
with a stand-in policy and index sink, governance's policy, the retriever and the write
path over a small deterministic embedder."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest

from memstrata_app.engine.governance.retention import DAY, parse_retention
from memstrata_app.engine.governance.service import Governance
from memstrata_app.engine.ledger.keys import make_key
from memstrata_app.engine.ledger.ledger import Ledger
from memstrata_app.engine.ledger.transaction import IndexUpdate, WriteContext, insert_row
from memstrata_app.engine.metrics import Metrics
from memstrata_app.engine.retrieve.retriever import Retriever
from memstrata_app.engine.types import Action, EngineError, Status
from memstrata_app.engine.understand.pipeline import Pipeline

WORDS = ("auth", "port", "billing", "region", "8080", "9090")


class WordEmbedder:
    """Counts of a few words, normalized: close sentences share words, nothing to load."""

    name = "test:words"
    dim = len(WORDS) + 1

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            low = t.lower()
            out[i, :-1] = [low.count(w) for w in WORDS]
            out[i, -1] = 0.1
        return out / np.linalg.norm(out, axis=1, keepdims=True)


class Policy:
    authority_order = ("reviewer", "user", "import", "tool", "assistant")

    def authority_of(self, source: str | None) -> str:
        return "tool" if source == "file" else "user"

    def expiry(self, now: float) -> Any:
        return None


class Sink:
    def __init__(self) -> None:
        self.published: list[tuple[list[int], int]] = []
        self.failures = 0

    def publish(self, updates: list[IndexUpdate], gen: int) -> None:
        self.published.append(([u.id for u in updates], gen))

    def failed(self) -> None:
        self.failures += 1

    def remote_change(self, gen: int | None) -> None:
        pass


@pytest.fixture
def ledger(tmp_path: Path):
    led = Ledger.open(tmp_path / "ledger.db")
    led.create_space(WordEmbedder.name, WordEmbedder.dim)
    yield led
    led.close()


def _insert(ledger: Ledger, text: str, source: str = "api") -> int:
    vec = WordEmbedder().embed([text])[0]

    def job(conn: apsw.Connection) -> tuple[int, WriteContext, int]:
        ctx = ledger.context(conn, {})
        row = insert_row(ctx, kind="fact", text=text, text_hash=str(hash(text)), source=source,
                         method="plain", confidence=1.0, status=Status.PLAIN,
                         valid_from=ctx.now, valid_to=None, vector=vec)
        return int(row), ctx, ledger.bump(conn)

    return int(ledger.run_write(job))


def test_the_ledger_writes_by_its_policy_and_publishes_before_commit(ledger: Ledger) -> None:
    with pytest.raises(EngineError, match="no governance policy"):
        _insert(ledger, "the auth port is 8080")
    ledger.policy = Policy()
    sink = Sink()
    ledger.sinks.append(sink)
    row = _insert(ledger, "the auth port is 8080", source="file")
    assert sink.published == [([row], ledger.generation())]
    a = ledger.get(row)
    assert (a.text, a.authority, a.author) == ("the auth port is 8080", "tool", ledger.author)
    assert ledger.rows([row, 999]) == {row: a}

    def broken(conn: apsw.Connection) -> tuple[None, WriteContext, int]:
        raise RuntimeError("the job fails")

    with pytest.raises(RuntimeError):
        ledger.run_write(broken)
    assert sink.failures == 1
    assert ledger.chain(make_key("auth", "port")) == []  # a plain row is in no key's chain


def test_governance_is_the_ledgers_policy(ledger: Ledger) -> None:
    gov = Governance(ledger)
    assert gov.authority_of("llm:qwen") == "assistant" and gov.authority_of("git") == "tool"
    assert gov.authority_of("api") == "user"
    assert gov.expiry(time.time()) is None  # no retention rules: nothing expires
    gov.retention = parse_retention("assistant=2d")
    now = time.time()
    expires = gov.expiry(now)
    assert expires is not None
    assert expires("assistant", "normal") == pytest.approx(now + 2 * DAY)
    assert expires("user", "normal") is None


def test_the_retriever_reads_what_the_ledger_holds(ledger: Ledger) -> None:
    ledger.policy = Governance(ledger)
    retriever = Retriever(ledger, WordEmbedder(), Metrics())
    retriever.ranking.hybrid = False  # the vector side alone: the test embedder's cosine
    first = _insert(ledger, "the auth port is 8080")
    _insert(ledger, "billing runs in one region")
    assert [h.assertion_id for h in retriever.retrieve("auth port", k=1)] == [first]
    index = retriever.index()
    later = _insert(ledger, "the auth port is 9090 now")  # published into the loaded index
    assert retriever.index() is index and len(index) == 3
    assert {h.assertion_id for h in retriever.retrieve("auth port 9090", k=2)} == {first,
                                                                                     later}
    assert retriever.metrics.summary()["retrieve"]["count"] == 2


def test_the_pipeline_writes_statements_the_retriever_then_finds(ledger: Ledger) -> None:
    ledger.policy = Governance(ledger)
    metrics = Metrics()
    retriever = Retriever(ledger, WordEmbedder(), metrics)
    pipeline = Pipeline(ledger, retriever, metrics, quarantine_threshold=0.6)
    pipeline.judging.use("off")
    res = pipeline.ingest("The auth service port is 8080.")
    assert [a.action for a in res.actions] == [Action.NOVEL]
    res = pipeline.ingest("The auth service port is 9090.")
    assert [a.action for a in res.actions] == [Action.SUPERSEDED]
    [chain_old, chain_new] = pipeline.history("auth service", "port")
    assert (chain_old.object, chain_new.object) == ("8080", "9090")
    hits = retriever.retrieve("auth port", k=1)
    assert hits[0].object == "9090"


def test_the_model_folders_are_the_packages_resources(monkeypatch: pytest.MonkeyPatch) -> None:
    """The static embedder and the judge are found where packaging puts them
    (`memstrata_app/resources/`, pyproject's package-data), wherever their modules live."""
    from memstrata_app.engine.retrieve.embedders import STATIC_MODEL_ENV, static_model_dir
    from memstrata_app.engine.understand.judge import JUDGE_ENV, judge_dir

    monkeypatch.delenv(STATIC_MODEL_ENV, raising=False)
    monkeypatch.delenv(JUDGE_ENV, raising=False)
    resources = Path(__file__).resolve().parents[2] / "memstrata_app" / "resources"
    assert static_model_dir() == resources / "static-minilm-m2v"
    assert judge_dir() == resources / "judge"
