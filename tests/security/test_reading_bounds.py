"""What the understanding layer reads of a hostile turn (engine/understand/bounds.py).

A token longer than 200 characters is never a claim's key or value, and a sentence too long
to be one fact is kept as plain text without being parsed; either way the sentence is
stored as it was said, and the other claims of a sentence with a long token still stand.
Generated over the classes of long token (one character repeated, repeated short pieces,
a base64-like blob, a URL, a path) at any place of a sentence that states a fact.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata_app.engine import Status
from memstrata_app.engine.understand import read
from memstrata_app.engine.understand.bounds import (
    LONG_TOKEN,
    MAX_SENTENCE_CHARS,
    MAX_TOKEN_CHARS,
    TOO_LONG,
    bounded,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

_UNITS = ("9", "a", "x.y", "1.2.3", "(", "“", "<", "a-", "/dir", "`", "=", "->", "ab+/")


@st.composite
def long_tokens(draw: st.DrawFn) -> str:
    """A run of non-space characters longer than any value: one of the shapes that made the
    patterns quadratic, a blob, a URL or a path."""
    n = draw(st.integers(MAX_TOKEN_CHARS + 1, 3000))
    kind = draw(st.sampled_from(("unit", "blob", "url", "path")))
    if kind == "unit":
        unit = draw(st.sampled_from(_UNITS))
        return (unit * (n // len(unit) + 1))[:n]
    body = draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "0123456789+/=_-", min_size=n, max_size=n))
    return {"blob": body, "url": "https://example.com/" + body,
            "path": "/srv/" + body.replace("+", "/")}[kind]


def _values(r) -> list[str]:
    return [f for e in r.extractions for f in (e.subject, e.object, e.old_object or "",
                                               e.context) if f]


def test_the_issue_token_is_no_value_and_the_sentence_is_kept() -> None:
    sentence = "Bumped the timeout to " + "9" * 8000
    (r,) = read([sentence], T0)
    assert r.sentence == sentence and r.stored
    assert r.extractions == ()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(token=long_tokens(), where=st.sampled_from(("end", "middle", "start")))
def test_a_long_token_is_never_a_key_or_value(token: str, where: str) -> None:
    fact = "We moved the api to port 8443"
    sentence = {"end": f"{fact}, see {token}", "middle": f"{fact} and {token} is gone",
                "start": f"{token} aside, {fact}"}[where]
    (r,) = read([sentence], T0)
    assert r.sentence == sentence
    assert all(len(max(v.split(), key=len, default="")) <= MAX_TOKEN_CHARS and LONG_TOKEN not in v
               for v in _values(r)), _values(r)
    if where == "end":  # the sentence's own fact still stands beside the blob
        assert ("api", "port", "8443") in {(e.subject, e.relation, e.object)
                                           for e in r.extractions}


@settings(max_examples=25, deadline=None)
@given(words=st.lists(st.sampled_from(("set", "to", "moved", "from", "in", "prod", "the",
                                       "api", "port", "8080", "is", "now", "and", ",")),
                      min_size=MAX_SENTENCE_CHARS // 3, max_size=1500))
def test_a_sentence_too_long_for_one_fact_is_plain_text(words: list[str]) -> None:
    sentence = " ".join(words)
    if len(sentence) <= MAX_SENTENCE_CHARS:
        return
    assert bounded(sentence) is None
    (r,) = read([sentence], T0)
    assert r.sentence == sentence and r.kind == "statement"
    assert r.extractions == () and r.reason == TOO_LONG


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=MAX_SENTENCE_CHARS).filter(
    lambda s: all(len(t) <= MAX_TOKEN_CHARS for t in s.split())))
def test_an_ordinary_sentence_is_read_as_it_is(sentence: str) -> None:
    assert bounded(sentence) == sentence


def test_through_the_engine_the_sentence_is_stored_verbatim(engine) -> None:
    blob = "QUJD" * 600
    text = f"The api listens on port 8443 now. The build log is {blob}. " + "lorem " * 200
    engine.ingest(text, source="user", at=T0)
    rows = engine.list_assertions(limit=50)
    texts = {a.text for a in rows}
    assert f"The build log is {blob}." in texts  # kept, retrievable
    assert any(a.text.startswith("lorem lorem") for a in rows)
    keyed = [a for a in rows if a.status == Status.ACTIVE and a.object]
    assert ("api", "8443") in {(a.subject, a.object) for a in keyed}
    assert all(blob not in (a.object or "") and blob not in (a.subject or "") for a in keyed)
