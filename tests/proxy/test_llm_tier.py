"""The Ollama tier (engine/understand/llm_tier.py) against the stand-in with scripted
structured replies.

Here rather than in tests/engine because the stand-in is an HTTP server (starlette), which
the engine's own test environment does not have.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import ollama
import pytest

from memstrata_app.bench.standin import OllamaStandIn
from memstrata_app.engine import Action, Status
from memstrata_app.engine.understand.llm_schema import CLAIMS_SCHEMA, JUDGE_SCHEMA
from memstrata_app.settings import Settings, start_extraction
from tests.proxy.conftest import closed_port

pytestmark = pytest.mark.timeout(120)

MODEL = "standin-chat"
METHOD = f"llm:{MODEL}"
SENT = "the thing that renders invoices is called Paperboy these days"


def claim(subject: str, attribute: str, value: str, confidence: float = 0.9,
          context: str | None = None, old_value: str | None = None) -> dict[str, Any]:
    return {"subject": subject, "attribute": attribute, "value": value, "context": context,
            "old_value": old_value, "confidence": confidence}


@pytest.fixture
def standin(upstream: OllamaStandIn) -> Iterator[OllamaStandIn]:
    upstream.clear_scripts()
    yield upstream
    upstream.clear_scripts()


def chats(up: OllamaStandIn) -> list[Any]:
    return [r.json for r in up.requests if r.path == "/api/chat"]


def tier_rows(engine: Any) -> list[tuple]:
    return engine._readers.query("SELECT row_id, outcome, claims, state FROM llm_tier")


def test_prose_becomes_a_model_claim_that_waits_for_review_then_supersedes_normally(
        engine, standin):
    standin.script(SENT, {"claims": [claim("invoice renderer", "name", "Paperboy")]})
    assert engine.enable_llm_tier(MODEL, host=standin.url)
    res = engine.ingest(SENT)
    assert [a.action for a in res] == [Action.PROSE]  # the request never waits for the model
    plain_id = res.actions[0].assertion_id
    assert engine.llm_tier.drain(30)

    sent = chats(standin)[-1]
    assert sent["format"] == CLAIMS_SCHEMA and sent["stream"] is False
    assert sent["options"]["temperature"] == 0
    assert sent["messages"][0]["role"] == "system" and sent["messages"][1]["content"] == SENT

    held = engine.quarantined()
    assert [(a.subject, a.relation, a.object, a.method) for a in held] == [
        ("invoice renderer", "name", "Paperboy", METHOD)]
    assert held[0].confidence <= 0.5 and held[0].text == SENT
    assert engine.get(plain_id).status is Status.PLAIN  # still retrievable while in review
    assert SENT in [h.text for h in engine.retrieve("what renders invoices?", k=3)]

    engine.approve(held[0].id)
    assert engine.llm_tier.drain(30)
    plain = engine.get(plain_id)
    assert plain.status is Status.REJECTED
    assert plain.reason == f"structured by {METHOD} as #{held[0].id}"

    later = engine.ingest("The invoice renderer is now called Quill.")
    assert later.actions[0].action is Action.SUPERSEDED
    assert later.actions[0].retired == (held[0].id,)
    chain = engine.history("invoice renderer", "name")
    assert [(a.object, a.status) for a in chain] == [("Paperboy", Status.SUPERSEDED),
                                                     ("Quill", Status.ACTIVE)]
    now = [h.text for h in engine.retrieve("what is the invoice renderer called?", k=5)]
    assert SENT not in now and "The invoice renderer is now called Quill." in now


def test_with_the_threshold_lowered_a_claim_counts_at_once(engine, standin):
    quill = engine.ingest("The invoice renderer is called Quill.").actions[0]
    engine.quarantine_threshold = 0.4  # under the tier's confidence cap (0.5)
    standin.script(SENT, {"claims": [claim("invoice renderer", "name", "Paperboy")]})
    engine.enable_llm_tier(MODEL, host=standin.url)
    plain_id = engine.ingest(SENT).actions[0].assertion_id
    assert engine.llm_tier.drain(30)
    assert engine.quarantined() == []
    chain = engine.history("invoice renderer", "name")
    assert [(a.object, a.status, a.method) for a in chain] == [
        ("Quill", Status.SUPERSEDED, "rule:rename"), ("Paperboy", Status.ACTIVE, METHOD)]
    assert chain[0].id == quill.assertion_id
    assert engine.get(plain_id).reason == f"structured by {METHOD} as #{chain[1].id}"


def test_a_claim_the_reviewer_rejects_leaves_the_plain_row(engine, standin):
    standin.script(SENT, {"claims": [claim("invoice renderer", "name", "Paperboy")]})
    engine.enable_llm_tier(MODEL, host=standin.url)
    plain_id = engine.ingest(SENT).actions[0].assertion_id
    engine.llm_tier.drain(30)
    engine.reject(engine.quarantined()[0].id)
    assert engine.llm_tier.drain(30)
    assert engine.get(plain_id).status is Status.PLAIN
    assert [r[3] for r in tier_rows(engine)] == ["done"]


@pytest.mark.parametrize("reply", [
    '{"claims": [{"subject": "invoice renderer", ',  # cut off
    '{"claims": [{"subject": "invoice renderer", "attribute": "name"}]}',  # fields missing
    '{"claims": "Paperboy"}',  # wrong type
    '{"claims": [], "note": "extra"}',  # property not in the schema
    '{"claims": [{"subject": "x", "attribute": "name", "value": "Paperboy", "context": null,'
    ' "old_value": null, "confidence": 7}]}',  # confidence outside 0..1
])
def test_a_reply_that_breaks_the_schema_writes_nothing(engine, standin, reply):
    standin.script(SENT, reply)
    engine.enable_llm_tier(MODEL, host=standin.url)
    plain_id = engine.ingest(SENT).actions[0].assertion_id
    assert engine.llm_tier.drain(30)
    assert engine.count_assertions() == 1 and engine.quarantined() == []
    assert engine.get(plain_id).status is Status.PLAIN
    assert SENT in [h.text for h in engine.retrieve("what renders invoices?", k=3)]
    assert tier_rows(engine) == [(plain_id, "invalid", "", "done")]
    assert len(chats(standin)) == 1  # refused whole: no judge on a broken reply


def test_a_value_the_sentence_does_not_contain_is_dropped(engine, standin):
    standin.script(SENT, {"claims": [claim("invoice renderer", "name", "Quill")]})
    engine.enable_llm_tier(MODEL, host=standin.url)
    engine.ingest(SENT)
    assert engine.llm_tier.drain(30)
    assert engine.quarantined() == [] and engine.count_assertions() == 1


def test_the_judge_proposes_an_update_that_waits_for_review_and_retires_nothing(
        engine, standin):
    quill = engine.ingest("The invoice renderer is called Quill.").actions[0]
    assert (quill.relation, quill.action) == ("name", Action.NOVEL)
    standin.script(f"NEW: {SENT}", {"updates": True, "new_value": "Paperboy",
                                    "confidence": 0.95})
    # no script for the extraction: the stand-in answers the schema's empty value
    engine.enable_llm_tier(MODEL, host=standin.url, judge_threshold=0.6)
    plain_id = engine.ingest(SENT).actions[0].assertion_id
    assert engine.llm_tier.drain(30)

    extract, judge = chats(standin)
    assert extract["format"] == CLAIMS_SCHEMA and judge["format"] == JUDGE_SCHEMA
    assert "OLD: The invoice renderer is called Quill." in judge["messages"][1]["content"]
    held = engine.quarantined()
    assert len(held) == 1
    assert held[0].reason == f"judge {METHOD}: updates #{quill.assertion_id}"
    assert (held[0].key, held[0].object, held[0].method) == (
        engine.get(quill.assertion_id).key, "Paperboy", METHOD)
    assert engine.get(quill.assertion_id).status is Status.ACTIVE  # a judge never retires
    assert engine.get(plain_id).status is Status.PLAIN

    assert engine.approve(held[0].id).retired == (quill.assertion_id,)
    assert engine.llm_tier.drain(30)
    assert engine.get(plain_id).status is Status.REJECTED
    assert [a.object for a in engine.history("invoice renderer", "name")] == [
        "Quill", "Paperboy"]


def test_no_judge_below_the_threshold_and_each_row_only_once(engine, standin):
    engine.ingest("The invoice renderer is called Quill.")
    engine.enable_llm_tier(MODEL, host=standin.url)  # default 0.8: this pair is ~0.67
    plain_id = engine.ingest(SENT).actions[0].assertion_id
    assert engine.llm_tier.drain(30)
    assert len(chats(standin)) == 1
    assert engine.ingest(SENT).actions[0].action is Action.DUPLICATE
    engine.llm_tier.submit(plain_id)
    assert engine.llm_tier.drain(30)
    assert len(chats(standin)) == 1
    assert tier_rows(engine) == [(plain_id, "nothing", "", "done")]


def test_statements_the_rules_understand_and_notes_are_not_sent(engine, standin):
    engine.enable_llm_tier(MODEL, host=standin.url)
    engine.ingest("The auth service port is 8080. Maybe we should move it to 9090?")
    engine.ingest_many(["The billing API timeout is 30s."])
    assert engine.llm_tier.drain(30)
    assert chats(standin) == []


def test_ingest_many_and_the_endpoint_turn_queue_prose_too(engine, standin):
    engine.enable_llm_tier(MODEL, host=standin.url)
    engine.ingest_many([SENT])
    engine.ingest_and_retrieve("honestly the invoice renderer goes by Paperboy these days")
    assert engine.llm_tier.drain(30)
    assert [c["messages"][1]["content"] for c in chats(standin)] == [
        SENT, "honestly the invoice renderer goes by Paperboy these days"]


def test_off_when_no_ollama_answers_or_the_model_is_missing(engine, standin):
    assert not engine.enable_llm_tier(MODEL, host=f"http://127.0.0.1:{closed_port()}")
    assert engine.llm_tier is None
    assert not engine.enable_llm_tier("no-such-model", host=standin.url)
    res = engine.ingest(SENT)
    assert [a.action for a in res] == [Action.PROSE]
    assert SENT in [h.text for h in engine.retrieve("what renders invoices?", k=3)]
    assert not start_extraction(engine, Settings(None))  # extraction_model empty: off


def test_ollama_going_away_leaves_rows_plain(engine, standin):
    engine.enable_llm_tier(MODEL, host=standin.url)
    tier = engine.llm_tier
    tier._client = ollama.Client(host=f"http://127.0.0.1:{closed_port()}")  # Ollama went away
    plain_id = engine.ingest(SENT).actions[0].assertion_id
    assert tier.drain(30)
    assert engine.get(plain_id).status is Status.PLAIN and tier_rows(engine) == []


def test_settings_turn_it_on_and_close_stops_it(engine, standin):
    s = Settings(None)
    s.set("extraction_model", "ollama:" + MODEL)
    s.set("ollama_url", standin.url)
    s.set("judge_threshold", 0.7)
    assert start_extraction(engine, s)
    tier = engine.llm_tier
    assert tier.model == MODEL and tier.judge_threshold == 0.7 and tier.running
    engine.disable_llm_tier()
    assert not tier.running and engine.llm_tier is None
    engine.ingest(SENT)
    assert chats(standin) == []


# --- opt-in: a real Ollama ---------------------------------------------------------------------
@pytest.mark.ollama
@pytest.mark.timeout(600)
def test_real_ollama_structures_prose(engine, real_ollama_host):
    model = os.environ.get("MEMSTRATA_TEST_MODEL")
    if not model:
        pytest.skip("set MEMSTRATA_TEST_MODEL to an Ollama chat model to run this")
    if not engine.enable_llm_tier(model, host=real_ollama_host):
        pytest.skip(f"no Ollama with {model} answers at {real_ollama_host}")
    plain_id = engine.ingest(SENT).actions[0].assertion_id
    assert engine.llm_tier.drain(300)
    (row_id, outcome, claims, _), = tier_rows(engine)
    assert row_id == plain_id and outcome != "invalid", "the model broke the JSON schema"
    for cid in filter(None, claims.split(",")):
        a = engine.get(int(cid))
        assert a.method == f"llm:{model}" and a.status is Status.QUARANTINED
        assert a.object.casefold() in SENT.casefold()
