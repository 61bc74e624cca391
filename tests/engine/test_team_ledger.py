"""The team ledger on PostgreSQL: several clients, one ledger, the invariant kept.

A real server (tests/support/postgres.py: initdb in a temp folder); each client is a
MemoryEngine with its own connections, as another machine would be.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata_app.engine import MemoryEngine, Status
from memstrata_app.engine.ledger.pg import describe, redact_dsn, translate_sql
from memstrata_app.engine.types import EngineError, StoreReadOnly
from tests.engine.test_invariant import SUBJECTS, VALUES, check_invariant
from tests.support.postgres import wait_until

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def top_texts(eng: MemoryEngine, q: str, k: int = 3, **kw) -> list[str]:
    return [h.text for h in eng.retrieve(q, k=k, **kw)]


# --- one client ---------------------------------------------------------------------------
def test_supersession_history_and_as_of_on_postgresql(pg_engine):
    eng = pg_engine
    eng.ingest("The billing service port is 3000.", at=day(0))
    act = eng.ingest("The billing service port is 8080.", at=day(5)).actions[0]
    assert act.action.value == "superseded"
    assert top_texts(eng, "billing service port", k=1) == ["The billing service port is 8080."]
    assert top_texts(eng, "billing service port", k=1, as_of=day(2)) == [
        "The billing service port is 3000."]
    chain = eng.history("billing service", "port")
    assert [(r.object, r.status) for r in chain] == [("3000", Status.SUPERSEDED),
                                                      ("8080", Status.ACTIVE)]
    assert chain[0].valid_to == chain[1].valid_from == day(5)


def test_every_row_records_who_wrote_it(pg_dsn, local_embedder, monkeypatch):
    monkeypatch.setenv("MEMSTRATA_AUTHOR", "dana@build-box")
    with MemoryEngine.open(pg_dsn, embedder=local_embedder) as eng:
        rid = eng.ingest("The deploy region is eu-west-1.").actions[0].assertion_id
        assert eng.get(rid).author == "dana@build-box"
        assert eng.export().__next__()["author"] == "dana@build-box"


def test_the_location_never_shows_a_password(pg_server):
    dsn = f"postgresql://postgres:s3cret-pw@127.0.0.1:{pg_server.port}/postgres"
    assert "s3cret" not in redact_dsn(dsn)
    assert describe(dsn) == f"PostgreSQL · postgres@127.0.0.1:{pg_server.port}/postgres"
    db = pg_server.new_database().replace("postgres@", "postgres:s3cret-pw@")
    with MemoryEngine.open(db, embedder="local") as eng:  # trust auth: any password is taken
        assert "s3cret" not in eng.location and "s3cret" not in str(eng.stats())


def test_an_unreachable_server_is_a_clear_error(pg_server):
    from tests.support.postgres import _free_port

    with pytest.raises(EngineError, match="cannot reach the team ledger"):
        MemoryEngine.open(f"postgresql://postgres@127.0.0.1:{_free_port()}/x", embedder="local")


def test_a_read_only_role_reads_and_is_refused_writes(pg_dsn, local_embedder):
    with MemoryEngine.open(pg_dsn, embedder=local_embedder) as eng:
        eng.ingest("The API port is 3000.", at=day(0))
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute("CREATE ROLE reader LOGIN")
        c.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    ro = pg_dsn.replace("postgres@", "reader@")
    with MemoryEngine.open(ro, embedder=local_embedder) as eng:
        assert top_texts(eng, "API port", k=1) == ["The API port is 3000."]
        with pytest.raises(StoreReadOnly):
            eng.ingest("The API port is 4000.", at=day(1))
        assert top_texts(eng, "API port", k=1) == ["The API port is 3000."]


def test_purge_leaves_no_text_in_the_tables(pg_engine, pg_dsn):
    rid = pg_engine.ingest("The staging DB password hint is hunter-orange.").actions[0]
    pg_engine.purge(rid.assertion_id, reason="personal data")
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        rows = c.execute("SELECT text, subject, object, reason FROM assertions").fetchall()
        vecs = c.execute("SELECT count(*) FROM vectors").fetchone()[0]
    assert all("hunter" not in str(r) for r in rows), rows
    assert vecs == 0
    assert top_texts(pg_engine, "staging DB password hint") == []


def test_translation_of_sqlite_statements():
    assert translate_sql("SELECT id FROM a WHERE k=? AND +space=? AND reason LIKE 'x%'") == (
        "SELECT id FROM a WHERE k=%s AND space=%s AND reason LIKE 'x%%'")
    assert translate_sql("INSERT OR IGNORE INTO flags(assertion_id, kind, at) VALUES (?, ?, ?)"
                         ) == ("INSERT INTO flags(assertion_id, kind, at) VALUES (%s, %s, %s)"
                               " ON CONFLICT DO NOTHING")
    assert translate_sql("INSERT OR REPLACE INTO meta(k, v) VALUES ('dim', ?)") == (
        "INSERT INTO meta(k, v) VALUES ('dim', %s) ON CONFLICT (k) DO UPDATE SET v = excluded.v")
    assert translate_sql("PRAGMA secure_delete=ON") is None
    assert translate_sql("SELECT 'what?' FROM t WHERE instr(text, ?) > 0") == (
        "SELECT 'what?' FROM t WHERE strpos(text, %s) > 0")


# --- several clients ----------------------------------------------------------------------
def test_a_fact_written_by_one_client_is_retrievable_by_another(pg_dsn, local_embedder):
    with MemoryEngine.open(pg_dsn, embedder=local_embedder) as a, \
            MemoryEngine.open(pg_dsn, embedder=local_embedder) as b:
        a.ingest("The worker timeout is 30 seconds.", at=day(0))
        assert top_texts(b, "worker timeout", k=1) == ["The worker timeout is 30 seconds."]
        a.ingest("The worker timeout is 45 seconds.", at=day(1))
        # b's index follows a's writes through the change feed, without b doing anything
        assert wait_until(lambda: top_texts(b, "worker timeout", k=2)
                          == ["The worker timeout is 45 seconds."], timeout=1.0)
        b.ingest("The worker timeout is 60 seconds.", at=day(2))
        assert wait_until(lambda: top_texts(a, "worker timeout", k=2)
                          == ["The worker timeout is 60 seconds."], timeout=1.0)
        assert [r.object for r in a.history("worker", "timeout")] == ["30 seconds",
                                                                      "45 seconds",
                                                                      "60 seconds"]


def test_a_client_catches_up_after_losing_its_listener(pg_dsn, local_embedder):
    with MemoryEngine.open(pg_dsn, embedder=local_embedder) as a, \
            MemoryEngine.open(pg_dsn, embedder=local_embedder) as b:
        a.ingest("The cache TTL is 60 seconds.", at=day(0))
        assert top_texts(b, "cache TTL", k=1) == ["The cache TTL is 60 seconds."]
        with psycopg.connect(pg_dsn, autocommit=True) as c:  # drop b's LISTEN connection
            c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                      " WHERE application_name = 'memstrata-listen'")
        a.ingest("The cache TTL is 120 seconds.", at=day(1))
        assert wait_until(lambda: top_texts(b, "cache TTL", k=2)
                          == ["The cache TTL is 120 seconds."], timeout=10.0)


def test_spaces_are_kept_apart_across_clients(pg_dsn, local_embedder):
    with MemoryEngine.open(pg_dsn, embedder=local_embedder) as a, \
            MemoryEngine.open(pg_dsn, embedder=local_embedder) as b:
        a.ingest("The API port is 3000.", at=day(0), space="shop")
        b.ingest("The API port is 8080.", at=day(1), space="blog")
        assert wait_until(lambda: top_texts(a, "API port", k=2, space="blog")
                          == ["The API port is 8080."])
        assert top_texts(b, "API port", k=2, space="shop") == ["The API port is 3000."]
        assert b.spaces()["shop"]["current"] == 1


def _write_concurrently(dsn: str, embedder, histories: list[list[tuple]]) -> None:
    """Each history on its own client (own connections), all at once."""
    engines = [MemoryEngine.open(dsn, embedder=embedder) for _ in histories]
    errors: list[BaseException] = []
    start = threading.Barrier(len(engines))

    def run(eng: MemoryEngine, history: list[tuple]) -> None:
        try:
            start.wait()
            for subj, val, d, template in history:
                eng.ingest(template.format(s=subj, v=val), at=T0 + timedelta(days=d))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(e, h)) for e, h in zip(engines, histories,
                                                                          strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in engines:
        e.close()
    assert not errors, errors


statement = st.tuples(
    st.sampled_from(SUBJECTS), st.sampled_from(VALUES), st.integers(min_value=0, max_value=40),
    st.sampled_from(["The {s} port is {v}.", "{s} listens on port {v}",
                     "Set the {s} port to {v}."]))


@pytest.mark.slow
@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(histories=st.lists(st.lists(statement, min_size=1, max_size=8), min_size=2,
                          max_size=4))
def test_concurrent_writers_keep_one_value_per_key(pg_server, local_embedder, histories):
    """The invariant run of test_invariant.py, with several clients writing the same keys
    at the same time: at most one valid value per single-valued key at any instant."""
    dsn = pg_server.new_database()
    _write_concurrently(dsn, local_embedder, histories)
    with MemoryEngine.open(dsn, embedder=local_embedder) as eng:
        check_invariant(eng)
        for d in range(0, 42, 3):
            t = T0 + timedelta(days=d, hours=12)
            for subj in SUBJECTS:
                assert len([r for r in eng.history(subj, "port") if r.valid_at(t)]) <= 1


def test_many_writers_on_one_key_keep_one_current_value(pg_dsn, local_embedder):
    """Eight clients each state a value of the same key at the same moment, many times: the
    key ends with exactly one active row and a gapless chain (the per-key lock at work)."""
    histories = [[("auth service", str(7000 + 10 * c + i), 0, "The {s} port is {v}.")
                  for i in range(4)] for c in range(8)]
    _write_concurrently(pg_dsn, local_embedder, histories)
    with MemoryEngine.open(pg_dsn, embedder=local_embedder) as eng:
        check_invariant(eng)
        chain = eng.history("auth service", "port")
        assert sum(r.status is Status.ACTIVE for r in chain) == 1
        assert len(chain) == 32


# --- push and pull ------------------------------------------------------------------------
def test_a_local_ledger_pushed_to_the_team_ledger_keeps_its_history(tmp_path, pg_dsn,
                                                                    local_embedder):
    local = tmp_path / "mine.db"
    with MemoryEngine.open(local, embedder=local_embedder) as eng:
        eng.ingest("The API port is 3000.", at=day(0), space="shop")
        eng.ingest("The API port is 8080.", at=day(3), space="shop")
        eng.ingest("We use ruff for linting.", at=day(1), space="shop")
        rows = list(eng.export(space="shop"))
    with MemoryEngine.open(pg_dsn, embedder=local_embedder) as team:
        team.ingest("The API port is 5000.", at=day(0), space="blog")  # another space
        assert team.import_records(rows) == 3
        chain = team.history("API", "port", space="shop")
        assert [(r.object, r.status, r.author) for r in chain] == [
            ("3000", Status.SUPERSEDED, rows[0]["author"]),
            ("8080", Status.ACTIVE, rows[1]["author"])]
        assert top_texts(team, "API port", k=1, space="shop", as_of=day(1)) == [
            "The API port is 3000."]
        pulled = list(team.export(space="shop"))
    back = tmp_path / "pulled.db"
    with MemoryEngine.open(back, embedder=local_embedder) as eng:
        eng.import_records(pulled)
        assert [r.object for r in eng.history("API", "port", space="shop")] == ["3000", "8080"]
        assert eng.spaces().keys() == {"shop"}


def test_a_client_reads_its_own_writes_at_once_with_its_listener_connected(pg_engine):
    """With the listener connected, a read uses the index as kept in step (no query per
    retrieve for the generation), and still sees this client's own writes at once."""
    pg_engine.ingest("The log level is debug.", at=day(0))
    assert wait_until(lambda: pg_engine._listener.connected.is_set())
    assert top_texts(pg_engine, "log level", k=1) == ["The log level is debug."]
    pg_engine.ingest("The log level is info.", at=day(1))
    assert top_texts(pg_engine, "log level", k=2) == ["The log level is info."]


WRITER = """
import sys
from datetime import UTC, datetime, timedelta
from memstrata_app.engine import MemoryEngine
dsn, who = sys.argv[1], sys.argv[2]
T0 = datetime(2026, 1, 1, tzinfo=UTC)
with MemoryEngine.open(dsn, embedder="local") as eng:
    for i, line in enumerate(sys.stdin.read().splitlines()):
        day, text = line.split("|", 1)
        eng.ingest(text, source="chat", at=T0 + timedelta(days=int(day)))
"""


@pytest.mark.slow
def test_three_processes_writing_at_once_keep_the_invariant_and_their_authors(pg_dsn,
                                                                             local_embedder):
    """Three OS processes (three 'machines': own interpreter, own connections, own author)
    write the same keys at once; the ledger keeps one value per key at every instant and
    every row says which of them wrote it."""
    import os
    import random
    import subprocess
    import sys

    with MemoryEngine.open(pg_dsn, embedder=local_embedder):
        pass  # the schema and vector space exist before the writers race
    rng = random.Random(5)
    procs = []
    for who in ("ana@laptop", "ben@desktop", "cy@ci-runner"):
        lines = "\n".join(f"{rng.randint(0, 30)}|The {rng.choice(SUBJECTS)} port is "
                          f"{rng.choice(VALUES)}." for _ in range(15))
        env = {**os.environ, "MEMSTRATA_AUTHOR": who, "HF_HUB_OFFLINE": "1"}
        p = subprocess.Popen([sys.executable, "-c", WRITER, pg_dsn, who], env=env,
                             stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        p.stdin.write(lines)
        p.stdin.close()
        procs.append(p)
    for p in procs:
        assert p.wait(timeout=600) == 0, p.stderr.read()
    with MemoryEngine.open(pg_dsn, embedder=local_embedder) as eng:
        check_invariant(eng)
        rows = eng.list_assertions(limit=1000)
        assert {r.author for r in rows} == {"ana@laptop", "ben@desktop", "cy@ci-runner"}
        for subj in SUBJECTS:
            assert sum(r.status is Status.ACTIVE for r in eng.history(subj, "port")) == 1


def test_redaction_leaves_no_text_in_the_tables_and_is_refused_again(pg_engine, pg_dsn):
    said = "The vendor escalation phone is 555-0199-77."
    rid = pg_engine.ingest(said).actions[0].assertion_id
    pg_engine.redact(rid, reason="personal data")
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        rows = c.execute("SELECT text, object, reason, key FROM assertions").fetchall()
        vecs = c.execute("SELECT count(*) FROM vectors").fetchone()[0]
    assert all("555-0199" not in str(r) for r in rows) and vecs == 0
    assert pg_engine.get(rid).key  # the key stays
    assert pg_engine.ingest(said).actions[0].action.value == "refused"


def test_a_read_that_meets_a_row_changed_elsewhere_catches_up_at_once(pg_dsn, local_embedder):
    """The listener may be a few ms behind another client's commit; a read that finds a row
    of its index changed meanwhile catches up before answering (here the listener is made
    to never catch up, so only the read can)."""
    with MemoryEngine.open(pg_dsn, embedder=local_embedder) as a, \
            MemoryEngine.open(pg_dsn, embedder=local_embedder) as b:
        a.ingest("The auth service port is 8080.", at=day(0))
        assert top_texts(a, "auth service port", k=1) == ["The auth service port is 8080."]
        assert wait_until(lambda: a._listener.connected.is_set())
        a._listener.on_change = lambda _gen: None
        b.ingest("The auth service port is 9090.", at=day(1))
        assert top_texts(a, "auth service port", k=1) == ["The auth service port is 9090."]
