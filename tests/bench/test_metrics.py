"""Metric functions on tiny hand-made cases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memstrata_app.bench.generators import Question, Statement
from memstrata_app.bench.matching import mentions, states, tokens
from memstrata_app.bench.metrics import auroc, percentiles, score, summarize
from memstrata_app.bench.systems import CachedEmbedder, RecencyRag, VectorRag


def q(kind: str = "current", expected=("9090",), wrong=("8080",), subject="auth service"):
    return Question("x", "config_migration", "port", kind, "Which port does the auth service use?",
                    subject, tuple(expected), tuple(wrong))


def test_value_tokens_match_whole_tokens_only() -> None:
    assert mentions("The auth service runs on port 8080.", "8080")
    assert not mentions("The auth service runs on port 8080.", "80")
    assert not mentions("The auth service runs on port 80.", "8080")
    assert mentions("Bumped requests to 2.31.0.", "2.31.0")
    assert not mentions("Bumped requests to 2.31.0.", "2.31")
    assert mentions("requests==2.31.0", "2.31.0")
    assert mentions("MAX_RETRIES=5", "5") and not mentions("MAX_RETRIES=15", "5")
    assert mentions("The API uses OAuth2.", "oauth2")
    assert not mentions("`fetch(url, timeout, retries)`", "fetch(url, timeout)")
    assert mentions("`fetch(url, timeout)` is it", "fetch(url, timeout)")
    assert tokens("Alerts go to the #core-alerts channel.")[-2] == "core-alerts"
    assert not mentions("`parse_user_v2` is defined in x", "parse_user")


def test_a_value_counts_only_next_to_its_subject_and_not_in_a_removal() -> None:
    assert states("The auth service runs on port 8080.", "auth service", "8080")
    assert not states("The billing service runs on port 8080.", "auth service", "8080")
    assert not states("The auth service no longer depends on Redis.", "auth service", "Redis")


def test_score_separates_current_stale_and_both() -> None:
    cur = "The auth service runs on port 9090."
    old = "The auth service runs on port 8080."
    other = "The billing service runs on port 8080."
    assert score(q(), [cur, other]).found == ("9090",) and not score(q(), [cur, other]).stale
    s = score(q(), [old, cur])
    assert s.present and s.stale == ("8080",) and not s.clean
    assert not score(q(), [old]).present
    m = summarize([score(q(), [cur]), score(q(), [cur, old]), score(q(), [old]),
                   score(q(), [other])])
    assert m["current_present"] == 0.5 and m["stale_present"] == 0.5
    assert m["both_present"] == 0.25 and m["current_clean"] == 0.25


def test_multi_valued_recall_counts_members() -> None:
    mq = q("multi", expected=("Redis", "Kafka"), wrong=("S3",), subject="api service")
    s = score(mq, ["The api service depends on Redis.", "The api service no longer depends on S3."])
    assert s.found == ("Redis",) and not s.stale
    m = summarize([s])
    assert m["multi_member_recall"] == 0.5 and m["multi_removed_present"] == 0.0


def test_auroc_on_known_inputs() -> None:
    assert auroc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auroc([0.1, 0.2], [0.9, 0.8]) == 0.0
    assert auroc([0.5, 0.5], [0.5]) == 0.5
    assert auroc([0.8, 0.4], [0.5, 0.1]) == 0.75
    rng = np.random.default_rng(0)
    p, n = rng.normal(1, 1, 300), rng.normal(0, 1, 300)
    brute = np.mean([(a > b) + 0.5 * (a == b) for a in p for b in n])
    assert auroc(p, n) == pytest.approx(brute)
    with pytest.raises(ValueError):
        auroc([], [0.1])


def test_percentiles() -> None:
    p = percentiles(list(range(1, 101)))
    assert p["p50_ms"] == 50.5 and p["p95_ms"] == pytest.approx(95.05) and p["n"] == 100


class OneHot:
    """A fake embedder: each distinct word pattern gets a fixed direction."""

    name, dim = "fake", 4

    def embed(self, texts):
        table = {"port": [1, 0, 0, 0], "log": [0, 1, 0, 0]}
        rows = [np.asarray(next((v for k, v in table.items() if k in t), [0, 0, 1, 0]), "float32")
                for t in texts]
        return np.stack(rows)


def _stream() -> list[Statement]:
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    texts = ["port 1", "port 2", "port 3", "log a", "other"]
    return [Statement(t, t0 + timedelta(days=30 * i), "x", i, t[-1]) for i, t in enumerate(texts)]


def test_naive_rag_ignores_time_and_recency_rag_prefers_the_latest() -> None:
    emb = CachedEmbedder(OneHot())
    naive, rec = VectorRag(emb), RecencyRag(emb)
    for s in (naive, rec):
        s.load(_stream())
    assert set(naive.retrieve("port?", 3)) == {"port 1", "port 2", "port 3"}
    assert rec.retrieve("port?", 1) == ["port 3"]
    as_of = datetime(2025, 2, 10, tzinfo=UTC)  # before "port 3" was said
    assert rec.retrieve("port?", 1, as_of) == ["port 2"]
    assert "port 3" not in rec.retrieve("port?", 5, as_of)


def test_cached_embedder_embeds_each_text_once() -> None:
    calls: list[int] = []

    class Counting(OneHot):
        def embed(self, texts):
            calls.append(len(texts))
            return super().embed(texts)

    emb = CachedEmbedder(Counting())
    emb.warm(["port 1", "log a", "port 1"])
    emb.embed(["port 1", "log a"])
    assert calls == [2]
    emb.bypass = True
    emb.embed(["port 1"])
    assert calls == [2, 1]
