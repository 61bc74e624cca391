"""Hybrid retrieval: the lexical side (SQLite FTS5 / PostgreSQL tsvector) fused with the
vector one, under the same validity, space and erasure rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstrata_app.engine.retrieve import lexical

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


# near-duplicates that differ by the identifier (and a source the question does not name):
# on its own all-MiniLM-L6-v2 ranks 10 of these 12 questions' answers first
NAMES = ["parse_cfg", "parse_config", "load_cfg", "read_cfg", "parse_conf", "cfg_loader"]
HELPERS = [f"{n} reads the settings from {r}." for n, r in zip(NAMES, (
    "the YAML file", "the TOML file", "environment variables", "the JSON fixtures",
    "the INI file", "plugin manifests"), strict=True)]


@pytest.mark.parametrize(("text", "expected"), [
    ("parse_cfg loads it", ["parse_cfg", "parse", "cfg", "load"]),
    ("parseCfg", ["parse_cfg", "parse", "cfg"]),
    ("api.acme.io:8443", ["api_acme_io_8443", "api", "acme", "io", "8443"]),
    ("bump to v1.2.3", ["bump", "v_1_2_3", "1_2_3", "1", "2", "3"]),
    ("max upload 25MB", ["max", "upload", "25_mb", "25", "mb"]),
    ("The timeouts are", ["timeout"]),
])
def test_terms_keep_identifiers_and_numbers_whole_and_in_parts(text, expected):
    assert lexical.terms(text) == expected


def test_a_match_expression_is_never_syntax():
    # every term is quoted: FTS5 operators in a question are words, not commands
    expr = lexical.match_expression(lexical.query_terms('NEAR("a" b) OR c* AND NOT d'))
    assert all(part.startswith('"') and part.endswith('"') for part in expr.split(" OR "))


def test_a_question_naming_an_identifier_finds_its_sentence_first(engine):
    for i, s in enumerate(HELPERS):
        engine.ingest(s, at=day(i))
    for name, said in zip(NAMES, HELPERS, strict=True):
        for q in (f"where does {name} get its settings from?", f"what is {name} for?"):
            top = engine.retrieve(q, k=3)
            assert top[0].text == said, (q, [h.text for h in top])


def test_the_fused_score_is_cosine_plus_the_weighted_term_coverage(engine):
    for i, s in enumerate(HELPERS):
        engine.ingest(s, at=day(i))
    q = "where does load_cfg get its settings from?"
    engine.hybrid = False
    cosine = {h.text: h.score for h in engine.retrieve(q, k=6)}
    engine.hybrid = True
    fused = engine.retrieve(q, k=6)
    assert {h.text for h in fused} == set(cosine)
    by = {h.text: h.score for h in fused}
    # load_cfg's sentence holds every term of the question the ledger knows: coverage 1
    assert by[HELPERS[2]] == pytest.approx(cosine[HELPERS[2]] + lexical.LEXICAL_WEIGHT, abs=1e-5)
    for h in fused:
        assert cosine[h.text] - 1e-6 <= h.score <= cosine[h.text] + lexical.LEXICAL_WEIGHT + 1e-6
    assert [h.score for h in fused] == sorted((h.score for h in fused), reverse=True)


def test_a_question_with_no_known_term_is_ranked_by_cosine_alone(engine):
    for i, s in enumerate(HELPERS):
        engine.ingest(s, at=day(i))
    engine.hybrid = False
    plain = [(h.text, round(h.score, 6)) for h in engine.retrieve("zqxj wvvk", k=3)]
    engine.hybrid = True
    assert [(h.text, round(h.score, 6)) for h in engine.retrieve("zqxj wvvk", k=3)] == plain


def test_the_validity_filter_applies_to_the_lexical_side(engine):
    engine.ingest("The gateway listens on port 8443.", at=day(0))
    engine.ingest("The gateway listens on port 9443.", at=day(2))
    for i, s in enumerate(HELPERS):
        engine.ingest(s, at=day(3 + i))
    now = [h.text for h in engine.retrieve("is anything still on 8443?", k=8)]
    assert "The gateway listens on port 8443." not in now
    assert "The gateway listens on port 9443." in now
    then = [h.text for h in engine.retrieve("is anything still on 8443?", k=2, as_of=day(1))]
    assert then[0] == "The gateway listens on port 8443."
    known = engine.retrieve("is anything on 8443?", k=2, known_at=datetime.now(UTC),
                            as_of=day(1))
    assert known[0].text == "The gateway listens on port 8443."


def test_the_lexical_side_keeps_to_the_asked_space(engine):
    engine.ingest("The shop's checkout calls charge_card_v2 for payments.", at=day(0),
                  space="shop")
    engine.ingest("Reports are built nightly.", at=day(0), space="analytics")
    got = [h.text for h in engine.retrieve("what calls charge_card_v2?", k=5,
                                           space="analytics")]
    assert got == ["Reports are built nightly."]


def test_erased_sentences_leave_no_terms_behind(engine):
    rid = engine.ingest("The vault token lives in qz7_vault_path.", at=day(0)).actions[0]
    engine.ingest("Reports are built nightly.", at=day(0))
    assert engine.retrieve("where is qz7_vault_path?", k=1)[0].assertion_id == \
        rid.assertion_id
    engine.purge(rid.assertion_id)
    q = engine._readers.query
    assert lexical.doc_freqs(q, engine.backend, ["qz7_vault_path", "vault", "qz7"]) == {}
    assert [h.text for h in engine.retrieve("where is qz7_vault_path?", k=3)] == \
        ["Reports are built nightly."]


def test_a_ledger_from_before_the_lexical_index_is_indexed_when_it_opens(tmp_path,
                                                                          local_embedder):
    import apsw

    from memstrata_app.engine import MemoryEngine

    path = tmp_path / "v6.db"
    with MemoryEngine.open(path, embedder=local_embedder) as eng:
        for i, s in enumerate(HELPERS):
            eng.ingest(s, at=day(i))
    conn = apsw.Connection(str(path))
    for stmt in ("DROP TRIGGER lexical_erase", "DROP TRIGGER lexical_delete",
                 "DROP TABLE lexical_vocab", "DROP TABLE lexical", "PRAGMA user_version=6"):
        conn.execute(stmt)
    conn.close()
    with MemoryEngine.open(path, embedder=local_embedder) as eng:
        n = eng._readers.query("SELECT count(*) FROM lexical_vocab WHERE term='load_cfg'")
        assert n == [(1,)]
        assert eng.retrieve("what is cfg_loader for?", k=1)[0].text == HELPERS[5]


def test_a_term_asked_before_it_was_written_is_found_once_it_is(engine):
    for i, s in enumerate(HELPERS):
        engine.ingest(s, at=day(i))
    assert all("qx_loader" not in h.text for h in engine.retrieve("what is qx_loader for?", k=3))
    said = "qx_loader reads the settings from the vault."
    engine.ingest(said, at=day(9))
    assert engine.retrieve("what is qx_loader for?", k=1)[0].text == said
