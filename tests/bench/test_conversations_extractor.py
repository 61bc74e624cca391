"""`memstrata bench conversations --extractor ollama:MODEL`: the Ollama tier in each ledger."""

from __future__ import annotations

import socket
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata_app.bench import cli
from memstrata_app.bench import conversations as conv
from memstrata_app.bench.conversations import Case, Extractor, Probe
from memstrata_app.bench.standin import OllamaStandIn
from memstrata_app.bench.systems import CachedEmbedder

SENT = "the thing that renders invoices is called Paperboy these days"
CASE = Case("renderer", "rename", (
    (datetime(2026, 1, 5, 9, tzinfo=UTC), SENT),
    (datetime(2026, 2, 5, 9, tzinfo=UTC), "The invoice renderer is now called Quill.")),
    (Probe("what is the invoice renderer called?", ("Quill",), ("Paperboy",)),))


def test_without_an_ollama_it_says_so_and_exits_0(monkeypatch, capsys) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{port}")
    assert cli.main(["conversations", "--extractor", "ollama:qwen2.5:7b"]) == 0
    out = capsys.readouterr().out
    assert "the Ollama tier cannot run" in out and "no Ollama answers" in out


@pytest.mark.timeout(120)
def test_model_claims_are_waited_for_and_approved_before_the_probes(
        tmp_path: Path, local_embedder) -> None:
    emb = CachedEmbedder(local_embedder)
    with OllamaStandIn() as up:
        up.script(SENT, {"claims": [{"subject": "invoice renderer", "attribute": "name",
                                     "value": "Paperboy", "context": None, "old_value": None,
                                     "confidence": 0.9}]})
        plain = conv.run_case(CASE, emb, tmp_path / "a")
        held = conv.run_case(CASE, emb, tmp_path / "b", extractor=Extractor(
            "standin-chat", host=up.url))
        approved = conv.run_case(CASE, emb, tmp_path / "c", extractor=Extractor(
            "standin-chat", approve=True, host=up.url))
    assert plain["llm_claims"] == 0 and not plain["probes"][0]["engine"]  # stale prose shows
    assert held["llm_claims"] == 1 and not held["probes"][0]["engine"]  # still in review
    assert approved["llm_claims"] == 1 and approved["probes"][0]["engine"]
    assert conv.summarize([held, approved])["llm_claims"] == 2
