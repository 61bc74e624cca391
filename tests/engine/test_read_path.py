"""The read path: only facts valid at the asked time, as original sentences, no LLM."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from memstrata_app.engine import Status

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


SERVICES = ["auth", "billing", "search", "payments", "gateway", "reports"]


def fill(engine):
    """Six services whose ports each changed three times, plus unrelated prose."""
    for step, base in enumerate((8000, 8100, 8200)):
        for i, svc in enumerate(SERVICES):
            engine.ingest(f"The {svc} service port is {base + i}.", at=day(step * 10 + i))
    engine.ingest("We keep design notes in the wiki under Architecture.", at=day(0))


def test_stale_values_never_reach_the_top_k_but_plain_cosine_serves_them(engine,
                                                                          local_embedder):
    fill(engine)
    q = "What port does the billing service use?"
    hits = engine.retrieve(q, k=5)
    texts = [h.text for h in hits]
    assert texts[0] == "The billing service port is 8201."
    assert not any(t in texts for t in ("The billing service port is 8001.",
                                        "The billing service port is 8101."))
    # the same store read as plain RAG: every sentence, cosine top-5
    rows = engine.list_assertions(limit=1000)
    sentences = [r.text for r in rows]
    m = local_embedder.embed(sentences)
    top = np.argsort(-(m @ local_embedder.embed([q])[0]))[:5]
    rag = [sentences[i] for i in top]
    assert "The billing service port is 8001." in rag or "The billing service port is 8101." in rag


def test_as_of_walks_the_chain(engine):
    fill(engine)
    q = "auth service port"
    assert engine.retrieve(q, k=1, as_of=day(0))[0].text == "The auth service port is 8000."
    assert engine.retrieve(q, k=1, as_of=day(5))[0].text == "The auth service port is 8000."
    assert engine.retrieve(q, k=1, as_of=day(10))[0].text == "The auth service port is 8100."
    assert engine.retrieve(q, k=1, as_of=day(25))[0].text == "The auth service port is 8200."
    assert engine.retrieve(q, k=1, as_of=day(-1)) == []  # before anything was said


def test_hits_carry_ids_scores_and_validity(engine):
    fill(engine)
    hits = engine.retrieve("payments service port", k=3)
    assert len(hits) == 3
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    top = hits[0]
    row = engine.get(top.assertion_id)
    assert (top.subject, top.relation, top.object) == (row.subject, row.relation, row.object)
    assert top.valid_to is None and top.status is Status.ACTIVE
    assert top.valid_from == row.valid_from and top.recorded_at == row.recorded_at


def test_naive_as_of_is_taken_as_utc(engine):
    fill(engine)
    naive = day(5).replace(tzinfo=None)
    assert engine.retrieve("auth service port", k=1, as_of=naive)[0].text.endswith("8000.")


def test_another_process_writing_is_seen(engine, tmp_path, local_embedder):
    """Two engines on one file: the second's write reaches the first's in-memory index."""
    from memstrata_app.engine import MemoryEngine

    engine.ingest("The auth service port is 8080.", at=day(0))
    assert engine.retrieve("auth service port", k=1)[0].text.endswith("8080.")
    with MemoryEngine.open(engine.path, embedder=local_embedder) as other:
        other.ingest("The auth service port is 9090.", at=day(1))
    assert engine.retrieve("auth service port", k=1)[0].text.endswith("9090.")


def test_metrics_record_retrieve_and_ingest(engine):
    engine.ingest("The auth service port is 8080.")
    engine.retrieve("auth port")
    s = engine.metrics.summary()
    assert s["ingest"]["count"] == 1 and s["retrieve"]["count"] == 1
    assert s["retrieve"]["p50"] > 0


def test_ingest_and_retrieve_answers_a_turn_with_its_own_new_value(engine):
    engine.ingest("The auth service port is 8080.", at=day(0))
    recall = engine.ingest_and_retrieve(
        "The auth service port is now 9090. Which port should the client use?", k=3)
    assert [a.action.value for a in recall.ingested] == ["superseded"]
    texts = [h.text for h in recall.hits]
    assert "The auth service port is now 9090." in texts
    assert "The auth service port is 8080." not in texts
    assert recall.ingest_ms > 0 and recall.retrieve_ms > 0
    # the same turn again: a duplicate, nothing new stored, same answer
    again = engine.ingest_and_retrieve(
        "The auth service port is now 9090. Which port should the client use?", k=3)
    assert [a.action.value for a in again.ingested] == ["duplicate"]
    assert [h.assertion_id for h in again.hits] == [h.assertion_id for h in recall.hits]
