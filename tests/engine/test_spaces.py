"""Spaces: one memory per project beside a global one; supersession never crosses spaces."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import apsw
import pytest

from memstrata_app.engine import Action, EngineError, MemoryEngine, Status

T0 = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


def texts(hits) -> list[str]:
    return [h.text for h in hits]


def test_the_same_key_in_two_projects_never_retires_across(engine):
    a = engine.ingest("The API port is 3000.", at=day(0), space="shop").actions[0]
    b = engine.ingest("The API port is 8080.", at=day(1), space="billing").actions[0]
    assert a.action is Action.NOVEL and b.action is Action.NOVEL
    assert engine.get(a.assertion_id).status is Status.ACTIVE
    c = engine.ingest("The API port is 3001.", at=day(2), space="shop").actions[0]
    assert c.action is Action.SUPERSEDED and c.retired == (a.assertion_id,)
    assert engine.get(b.assertion_id).status is Status.ACTIVE


def test_a_read_sees_its_space_and_the_global_one(engine):
    engine.ingest("The API port is 3000.", at=day(0), space="shop")
    engine.ingest("The API port is 8080.", at=day(0), space="billing")
    engine.ingest("Our company style guide forbids tabs.", at=day(0))
    shop = texts(engine.retrieve("API port and style", k=5, space="shop"))
    assert "The API port is 3000." in shop and "The API port is 8080." not in shop
    assert "Our company style guide forbids tabs." in shop
    assert len(texts(engine.retrieve("API port", k=5))) == 3  # no space: every space


def test_value_references_and_renames_stay_in_their_space(engine):
    engine.ingest("The orders API listens on 8080.", at=day(0), space="shop")
    engine.ingest("The gateway listens on 8080.", at=day(0), space="billing")
    res = engine.ingest("8080 → 9000", at=day(1), space="shop")
    assert [a.action for a in res.actions] == [Action.SUPERSEDED]
    billing = engine.list_assertions(limit=10)
    assert any(r.space == "billing" and r.status is Status.ACTIVE for r in billing)


def test_history_is_per_space(engine):
    engine.ingest("The cache TTL is 300 seconds.", at=day(0), space="shop")
    engine.ingest("The cache TTL is 900 seconds.", at=day(1), space="shop")
    engine.ingest("The cache TTL is 60 seconds.", at=day(1))
    assert [a.object for a in engine.history("cache", "ttl", space="shop")] == [
        "300 seconds", "900 seconds"]
    assert [a.object for a in engine.history("cache", "ttl")] == ["60 seconds"]


def test_counts_per_space_and_moving_a_fact(engine):
    engine.ingest("The API port is 3000.", at=day(0))
    engine.ingest("The API port is 3001.", at=day(1))
    engine.ingest("Deploys happen on Fridays.", at=day(0), space="shop")
    assert engine.spaces() == {"global": {"total": 2, "current": 1},
                               "shop": {"total": 1, "current": 1}}
    current = next(r for r in engine.list_assertions(limit=10) if r.object == "3001")
    moved = engine.move_to_space(current.id, "shop")
    assert {r.space for r in moved} == {"shop"} and len(moved) == 2  # the chain moves
    assert texts(engine.retrieve("API port", k=3, space="billing")) == []
    assert "The API port is 3001." in texts(engine.retrieve("API port", k=3, space="shop"))
    engine.ingest("The API port is 4000.", at=day(2), space="other")
    other = next(r for r in engine.list_assertions(limit=10) if r.object == "4000")
    with pytest.raises(EngineError, match="already holds a current value"):
        engine.move_to_space(other.id, "shop")


def test_bad_space_names_are_refused(engine):
    with pytest.raises(EngineError, match="not a space name"):
        engine.ingest("The API port is 3000.", space="../etc")


def test_export_and_import_per_space(engine, tmp_path, local_embedder):
    engine.ingest("The API port is 3000.", at=day(0), space="shop")
    engine.ingest("The API port is 3001.", at=day(1), space="shop")
    engine.ingest("The API port is 8080.", at=day(0), space="billing")
    rows = list(engine.export(space="shop"))
    assert {r["space"] for r in rows} == {"shop"} and len(rows) == 2
    with MemoryEngine.open(tmp_path / "other.db", embedder=local_embedder) as other:
        other.import_records(rows, space="shop-copy")
        assert other.spaces() == {"shop-copy": {"total": 2, "current": 1}}
        assert [a.object for a in other.history("API", "port", space="shop-copy")] == [
            "3000", "3001"]


def downgrade_to_v3(path) -> None:
    """Turn a ledger back into schema 3: drop what later migrations added."""
    conn = apsw.Connection(str(path))
    v3 = {"id", "kind", "subject", "relation", "object", "subject_norm", "relation_norm",
          "object_norm", "key", "text", "text_hash", "source", "method", "confidence",
          "status", "recorded_at", "retired_at", "valid_from", "valid_to", "superseded_by",
          "reason", "reinforced", "last_seen_at", "context"}
    conn.execute("DROP INDEX ix_assertions_space")
    for trigger in ("lexical_erase", "lexical_delete"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    for (_cid, name, *_rest) in list(conn.execute("PRAGMA table_info(assertions)")):
        if name not in v3:
            conn.execute(f"ALTER TABLE assertions DROP COLUMN {name}")
    for table in ("row_versions", "key_holds", "contests", "injections", "erased",
                  "lexical_vocab", "lexical"):
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute("PRAGMA user_version=3")
    conn.close()


def test_an_older_ledger_migrates_into_the_global_space(tmp_path, local_embedder):
    path = tmp_path / "old.db"
    with MemoryEngine.open(path, embedder=local_embedder) as eng:
        eng.ingest("The API port is 3000.", at=day(0))
    downgrade_to_v3(path)
    with MemoryEngine.open(path, embedder=local_embedder) as eng:
        assert eng.spaces() == {"global": {"total": 1, "current": 1}}
        act = eng.ingest("The API port is 3001.", at=day(1)).actions[0]
        assert act.action is Action.SUPERSEDED


def test_the_write_path_keeps_its_selective_indexes(engine):
    """A space has low selectivity: the duplicate look-up must not pick its index (at 100k
    rows that turned every write into a scan)."""
    from memstrata_app.engine.ledger.transaction import DUPLICATE_SQL

    engine.ingest("The API port is 3000.", at=day(0), space="shop")
    conn = apsw.Connection(str(engine.path))
    plan = " ".join(str(r) for r in conn.execute(f"EXPLAIN QUERY PLAN {DUPLICATE_SQL}",
                                                 ("x", "shop")))
    conn.close()
    assert "ix_assertions_hash" in plan
