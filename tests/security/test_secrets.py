"""Secrets said in chat never reach the ledger, a query answer or an injected block; purge
erases a sentence from the ledger file itself."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from memstrata_app.engine import EngineError, MemoryEngine, NotFound, Status
from memstrata_app.engine.governance.secrets import find_secrets, redact

pytestmark = pytest.mark.timeout(120)

# --- made-up secrets of each kind the issue names (none is a real credential) ---------------
GHP = "ghp_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"
SK = "sk-" + "4fGh7JkL9mNpQ2rStUvWxYz0123456789AbCdEfGh"
SK_PROJ = "sk-proj-" + "Ab3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9dE1fG3"
SK_LEGACY = "sk-" + "Ab3dE5fG7hI9jK1lM3nO" + "T3BlbkFJ" + "pQ7rS9tU1vW3xY5zA7bC"
AKIA = "AKIA" + "Q3EGRXN6ZP7Y2VLM"
AWS_SECRET = "7rT9pLq2Vx8sKj4Nw1Bz6Hc3Fm5Yd0Ga8UeR2iOt"
PASSWORD = "hunter2-Long!"
PEM_BODY = "MIIEpAIBAAKCAQEA7q2Zs9xVb3kLmN4oPq8rStUvWxYz0aBcDeFgHiJkLmNoPqRsTu"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")

CASES = [  # (text, the secret in it, the placeholder it must become)
    (f"my OpenAI key is {SK_PROJ}", SK_PROJ, "[secret:openai-key]"),
    (f"legacy key {SK_LEGACY} still works", SK_LEGACY, "[secret:openai-key]"),
    (f"use {SK} for the bot", SK, "[secret:api-key]"),
    (f"The deploy token is {GHP}.", GHP, "[secret:github-token]"),
    (f"export GITHUB_TOKEN={GHP}", GHP, "[secret:github-token]"),
    (f"AWS keys: {AKIA} / {AWS_SECRET}", AKIA, "[secret:aws-access-key]"),
    (f"AWS keys: {AKIA} / {AWS_SECRET}", AWS_SECRET, "[secret:aws-secret-key]"),
    (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, "[secret:aws-secret-key]"),
    (f"the password is {PASSWORD}", PASSWORD, "[secret:password]"),
    ("The staging DB password is Tr0ub4dor&3, don't share it.", "Tr0ub4dor&3",
     "[secret:password]"),
    ("the password for the admin panel is P@ssw0rd2024", "P@ssw0rd2024", "[secret:password]"),
    ("password: 'swordfish'", "swordfish", "[secret:password]"),
    ("DB_PASSWORD=s3cr3t-Pa55", "s3cr3t-Pa55", "[secret:password]"),
    ("use Tr0ub4dor&3 as the password", "Tr0ub4dor&3", "[secret:password]"),
    ("connect with postgres://app:Xy7pQ2mN@db.internal:5432/app", "Xy7pQ2mN",
     "[secret:password]"),
    (f"here is the deploy key:\n{PEM}\nkeep it safe", PEM_BODY, "[secret:private-key]"),
    (f"slack bot token {SLACK}", SLACK, "[secret:slack-token]"),
    (f"stripe {STRIPE}", STRIPE, "[secret:stripe-key]"),
    (f"the session cookie was {JWT}", JWT, "[secret:jwt]"),
    ("curl -H 'Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0Ab' https://api",
     "9f8e7d6c5b4a39281706f5e4d3c2b1a0Ab", "[secret:token]"),
    ("I set the API key to Zx81Pq0LmN7tRw2Ks5", "Zx81Pq0LmN7tRw2Ks5", "[secret:api-key]"),
    ("the token is 7rT9pLq2Vx8sKj4Nw1Bz", "7rT9pLq2Vx8sKj4Nw1Bz", "[secret:token]"),
]

# Thirty sentences developers say that hold versions, SHAs, UUIDs, hashes, URLs without
# credentials, ports, identifiers and the words "password", "token", "key": none is a secret.
ORDINARY = [
    "The auth service port is 8080.",
    "We moved the orders API from 8080 to 9090 in prod.",
    "Bumped lodash from 4.17.20 to 4.17.21.",
    "We're on Django 5.1.4 now, Python 3.12.7.",
    "The fix landed in commit 3f9a2b7c1d4e5f60718293a4b5c6d7e8f9012345.",
    "Reverted a1b2c3d, the short SHA from yesterday's deploy.",
    "The tenant id is 550e8400-e29b-41d4-a716-446655440000.",
    "Request 7c9e6679-7425-40de-944b-e07fc1f90ae7 timed out after 30 s.",
    "Docs are at https://docs.example.com/api/v2/reference#pagination.",
    "The staging URL is https://staging.internal.example.org:8443/health.",
    "Redis runs on localhost:6379 and Postgres on 5432.",
    "The build image is ghcr.io/acme/api:1.24.3-alpine.",
    "Set MAX_CONNECTIONS=200 in the pool config.",
    "Node version is 18.19.0 and npm is 10.2.3.",
    "The main entry point is src/server/bootstrapApplication.ts.",
    "Rename getUserAccountBalanceForMonth2 to monthlyBalance.",
    "The sha256 of the release tarball is "
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.",
    "The Kafka topic is orders.v2.created and it has 12 partitions.",
    "Use the TestUserAccountServiceImplV2Handler class for the integration tests.",
    "The Docker digest is "
    "sha256:9b2a3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f80.",
    "Our CI run 8473625190 failed on the lint step.",
    "The password policy is 12 characters minimum.",
    "The token expires after 3600 seconds.",
    "The API key is stored in 1Password under the team vault.",
    "The password is required for the admin panel.",
    "The GITHUB_TOKEN secret is set in the repo settings.",
    "The access token is a JWT signed with RS256.",
    "password = os.environ['DB_PASSWORD']",
    "api_key: ${STRIPE_API_KEY}",
    "The secret key rotation owner is Dana.",
]
MORE_ORDINARY = [
    "The token is base64url-encoded.",
    "The API key for Stripe is now per-environment.",
    "The token for the staging cluster is in the vault.",
    "MAX_TOKENS=4096 in the completion settings.",
    "The password is sha256-hashed before storage.",
    "The private key is in ~/.ssh/id_ed25519.",
    "The token expires in 15m.",
    "The secret is mounted at /var/run/secrets/app.",
    "Secrets manager ARN is arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db",
    "token: $GITHUB_TOKEN",
    "The login is ops@acme.io.",
    "The password field is now optional in v2.3.",
    "The staging DB password rotation owner is Dana.",
]


# --- the detector ---------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "secret", "placeholder"), CASES,
                         ids=[f"{i}-{c[2]}" for i, c in enumerate(CASES)])
def test_each_kind_of_secret_becomes_its_typed_placeholder(text: str, secret: str,
                                                           placeholder: str) -> None:
    out, findings = redact(text)
    assert secret not in out
    assert placeholder in out
    assert findings and all(f.kind for f in findings)


def test_redaction_keeps_the_rest_of_the_sentence() -> None:
    out, _ = redact(f"The deploy token is {GHP}. The port is 8080.")
    assert out == "The deploy token is [secret:github-token]. The port is 8080."
    out, _ = redact(f"here is the deploy key:\n{PEM}\nkeep it safe")
    assert out == "here is the deploy key:\n[secret:private-key]\nkeep it safe"


@pytest.mark.parametrize("text", ORDINARY + MORE_ORDINARY)
def test_ordinary_developer_chat_is_not_flagged(text: str) -> None:
    assert find_secrets(text) == [], redact(text)[0]


def test_there_are_thirty_ordinary_sentences() -> None:
    assert len(ORDINARY) == 30


def test_redacting_twice_changes_nothing_more() -> None:
    once = redact(" ".join(c[0] for c in CASES))[0]
    assert redact(once) == (once, [])


# --- the engine: nothing secret is hashed, embedded, extracted, stored or logged -----------
SECRET_CHAT = (f"My OpenAI key is {SK}. The deploy token is {GHP}. "
               f"AWS access key {AKIA} with secret {AWS_SECRET}. The password is {PASSWORD}")
SECRET_VALUES = [SK, GHP, AKIA, AWS_SECRET, PASSWORD, "hunter2"]


def ledger_bytes(path: Path) -> bytes:
    """The ledger file and its write-ahead log, as they lie on disk."""
    data = path.read_bytes()
    wal = path.with_name(path.name + "-wal")
    return data + (wal.read_bytes() if wal.exists() else b"")


def assert_absent(path: Path, values: list[str]) -> None:
    raw = ledger_bytes(path)
    for v in values:
        assert v.encode() not in raw, f"{v!r} is in the ledger file"


def test_ingest_stores_placeholders_flags_rows_and_never_the_secret(
        tmp_path: Path, local_embedder: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    db = tmp_path / "ledger.db"
    with MemoryEngine.open(db, embedder=local_embedder) as eng:
        res = eng.ingest(SECRET_CHAT)
        assert res.redacted == 5
        texts = [a.text for a in eng.list_assertions()]
        joined = "\n".join(texts)
        for p in ("[secret:api-key]", "[secret:github-token]", "[secret:aws-access-key]",
                  "[secret:aws-secret-key]", "[secret:password]"):
            assert p in joined
        for v in SECRET_VALUES:
            assert v not in joined
        assert set(eng.flagged("secret")) == {a.id for a in eng.list_assertions()}
        assert eng.flags(eng.list_assertions()[0].id) == ["secret"]
        hits = eng.retrieve("what is the deploy token?", k=10)
        dumped = json.dumps([h.to_dict() for h in hits])
        assert "[secret:github-token]" in dumped
        assert not any(v in dumped for v in SECRET_VALUES)
        dry = json.dumps(eng.explain(f"the new token is {GHP}").to_dict())
        assert GHP not in dry and "[secret:github-token]" in dry
        assert GHP not in json.dumps(list(eng.export()))
        assert_absent(db, SECRET_VALUES)  # while open: the file and its WAL
    assert_absent(db, SECRET_VALUES)  # after closing (checkpointed into the file)
    for v in SECRET_VALUES:
        assert v not in caplog.text


def test_a_question_with_a_secret_is_redacted_in_what_ingest_reports(engine: Any) -> None:
    res = engine.ingest(f"can you push with {GHP}?")
    assert not res.actions and res.skipped
    assert GHP not in json.dumps(res.to_dict())
    assert res.redacted == 1


def test_import_redacts_secrets_in_exported_rows(tmp_path: Path, local_embedder: Any) -> None:
    with MemoryEngine.open(tmp_path / "a.db", embedder=local_embedder) as eng:
        n = eng.import_records([{"text": f"The deploy token is {GHP}.", "kind": "assertion",
                                 "subject": "deploy token", "relation": "value",
                                 "object": GHP, "subject_norm": "deploy token",
                                 "relation_norm": "value", "object_norm": GHP.lower(),
                                 "key": "deploy token::value", "status": "active"}])
        assert n == 1
        a = eng.list_assertions()[0]
        assert a.text == "The deploy token is [secret:github-token]."
        assert a.object == "[secret:github-token]"
        assert eng.flags(a.id) == ["secret"]
    assert_absent(tmp_path / "a.db", [GHP, GHP.lower()])


# --- purge ------------------------------------------------------------------------------------
DANA = "the staging DB password rotation owner is Dana"


def test_purge_erases_text_and_vector_from_the_file_and_keeps_a_tombstone(
        tmp_path: Path, local_embedder: Any) -> None:
    db = tmp_path / "ledger.db"
    with MemoryEngine.open(db, embedder=local_embedder) as eng:
        eng.ingest("The release owner is Bob.")
        res = eng.ingest(DANA)
        eng.ingest("The release owner is Dana.")  # retires Bob: his row's reason names Dana
        aid = res.ids[0]
        before = eng.get(aid)
        assert b"Dana" in ledger_bytes(db)
        vec = local_embedder.embed([DANA])[0].astype("float32").tobytes()
        assert vec[:64] in ledger_bytes(db)

        rows = eng.purge(aid, reason="personal data")
        assert [r.id for r in rows] == [aid]
        t = rows[0]
        assert t.text == "" and t.subject is None and t.object is None
        assert t.status is Status.RETRACTED
        assert t.key == before.key and t.relation == before.relation
        assert t.context == before.context
        assert t.valid_from == before.valid_from and t.valid_to is not None
        assert t.reason == "purged: personal data"
        assert "purged" in eng.flags(aid)
        assert not any(h.assertion_id == aid for h in eng.retrieve(DANA, k=10))
        # Only the purged sentence goes: "The release owner is Dana." is another sentence.
        dana_rows = [a for a in eng.list_assertions() if "Dana" in a.text]
        assert [a.text for a in dana_rows] == ["The release owner is Dana."]
        eng.purge(dana_rows[0].id)
        bob = next(a for a in eng.list_assertions() if "Bob" in a.text)
        assert "Dana" not in (bob.reason or "")
        with pytest.raises(EngineError, match="already purged"):
            eng.purge(aid)
        with pytest.raises(NotFound):
            eng.purge(987654)
        # while the ledger is open: neither the file nor its write-ahead log holds it
        raw = ledger_bytes(db)
        assert b"Dana" not in raw and b"dana" not in raw
        assert vec[:64] not in raw
        wal = db.with_name(db.name + "-wal")
        assert not wal.exists() or wal.stat().st_size == 0
    raw = db.read_bytes()
    assert b"Dana" not in raw and b"dana" not in raw and vec[:64] not in raw


def test_purge_takes_every_row_of_the_sentence(engine: Any) -> None:
    res = engine.ingest("The billing service uses redis and kafka.")
    ids = sorted({a.assertion_id for a in res.actions})
    if len(ids) < 2:
        pytest.skip("the sentence no longer makes two rows")
    rows = engine.purge(ids[0])
    assert sorted(r.id for r in rows) == ids
    assert all(r.text == "" for r in rows)


def test_a_purged_row_stays_out_of_the_index_after_reindex(engine: Any) -> None:
    aid = engine.ingest(DANA).ids[0]
    engine.purge(aid)
    engine.reindex("local")
    past = engine.retrieve("staging DB password rotation owner", k=5,
                           as_of=engine.get(aid).valid_from)
    assert all(h.text for h in past)


# --- the CLI ----------------------------------------------------------------------------------
@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], local_embedder: Any) -> Any:
    from memstrata_app.cli import main

    def _run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    return _run


def test_cli_query_never_shows_a_secret_and_purge_with_yes(run: Any, tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    code, out, _ = run("--db", str(db), "--create", "ingest", SECRET_CHAT, "--json")
    assert code == 0 and json.loads(out)["redacted"] == 5
    assert not any(v in out for v in SECRET_VALUES)
    code, out, _ = run("--db", str(db), "query", "what is the deploy token?", "-k", "10",
                       "--json")
    assert code == 0 and "[secret:github-token]" in out
    assert not any(v in out for v in SECRET_VALUES)

    code, out, _ = run("--db", str(db), "ingest", DANA, "--json")
    aid = json.loads(out)["actions"][0]["assertion_id"]
    code, out, _ = run("--db", str(db), "purge", str(aid), "--yes", "--reason", "PII", "--json")
    assert code == 0, out
    tomb = json.loads(out)[0]
    assert tomb["id"] == aid and tomb["text"] == "" and tomb["reason"] == "purged: PII"
    assert b"Dana" not in ledger_bytes(db)
    code, _, err = run("--db", str(db), "purge", str(aid), "--yes")
    assert code == 1 and "already purged" in err
    code, _, err = run("--db", str(db), "purge", "9999", "--yes")
    assert code == 1 and "no assertion" in err


# --- the endpoint: the upstream request and the query API never carry the secret -----------
# (endpoint, http, upstream: tests/proxy's fixtures, shared through tests/security/conftest.py)
def _auth() -> dict[str, str]:
    from memstrata_app import access

    return {access.HEADER: access.load_token()}


def test_endpoint_never_injects_or_returns_a_secret(http: Any, upstream: Any, engine: Any,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    turn = (f"For the release pipeline the GitHub token is {GHP}. "
            f"The AWS credentials for the release pipeline are {AKIA} and {AWS_SECRET}.")
    r = http.post("/api/chat", json={"model": "standin-chat", "stream": False,
                                     "messages": [{"role": "user", "content": turn}]})
    assert r.status_code == 200, r.text
    upstream.clear()
    r = http.post("/api/chat", json={"model": "standin-chat", "stream": False, "messages": [
        {"role": "user", "content": "Which GitHub token does the release pipeline use?"}]})
    assert r.status_code == 200, r.text
    sent = json.dumps([req.json for req in upstream.requests if req.method == "POST"])
    assert "[secret:github-token]" in sent  # the fact is remembered, as its placeholder
    for v in (GHP, AKIA, AWS_SECRET):
        assert v not in sent

    q = http.get("/memstrata/v1/query", headers=_auth(),
                 params={"q": "release pipeline GitHub token AWS credentials", "k": 10})
    assert q.status_code == 200, q.text
    assert "[secret:github-token]" in q.text and "[secret:aws-access-key]" in q.text
    for v in (GHP, AKIA, AWS_SECRET):
        assert v not in q.text
    assert_absent(engine.path, [GHP, AKIA, AWS_SECRET])
    for v in (GHP, AKIA, AWS_SECRET):
        assert v not in caplog.text


def test_management_purge_route(http: Any, engine: Any) -> None:
    aid = engine.ingest(DANA).ids[0]
    r = http.post(f"/memstrata/v1/purge/{aid}", headers=_auth(), json={"reason": "PII"})
    assert r.status_code == 200, r.text
    assert r.json()["purged"][0]["reason"] == "purged: PII"
    again = http.post(f"/memstrata/v1/purge/{aid}", headers=_auth())
    assert again.status_code == 409
    assert http.post("/memstrata/v1/purge/987654", headers=_auth()).status_code == 404
    assert http.post("/memstrata/v1/purge/abc", headers=_auth()).status_code == 400
    assert b"Dana" not in ledger_bytes(engine.path)


def test_mcp_purge_tool(engine: Any) -> None:
    import anyio
    from mcp import Client

    from memstrata_app.proxy.mcp_server import build_server

    aid = engine.ingest(DANA).ids[0]

    async def go() -> None:
        async with Client(build_server(engine)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "purge" in names
            res = await client.call_tool("purge", {"assertion_id": aid, "reason": "PII"})
            assert not res.is_error, res.content
            data = res.structured_content or json.loads(res.content[0].text)
            assert data["purged"][0]["reason"] == "purged: PII"
            again = await client.call_tool("purge", {"assertion_id": aid})
            assert again.is_error

    anyio.run(go)
    assert b"Dana" not in ledger_bytes(engine.path)
