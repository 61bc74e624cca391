"""The local impostor: a program of another local user (or any program) that listens where the
CLI looks for `memstrata serve` and answers as the endpoint would. The CLI sends it neither
the install's token nor any text, says so, and opens the ledger itself; the genuine endpoint
proves itself in the handshake and then gets only signed requests, text redacted."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata_app import access, paths, peer
from memstrata_app.bench.standin import OllamaStandIn
from memstrata_app.cli import main
from memstrata_app.cli.listener import listening_uids, port_owners
from memstrata_app.cli.remote import RUNTIME_FILE, outbound, write_runtime_file
from memstrata_app.engine import MemoryEngine
from memstrata_app.engine.governance.secrets import find_secrets
from memstrata_app.proxy.app import create_app
from memstrata_app.proxy.server import ServerThread
from memstrata_app.settings import Settings

pytestmark = pytest.mark.timeout(120)

SECRET = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
SENTENCE = f"The staging deploy token is {SECRET} and the api listens on port 8443."


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], local_embedder: Any
        ) -> Callable[..., tuple[int, str, str]]:
    def _run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    return _run


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- an impostor: a plain socket server that records every byte it is sent -------------------
def _http_answer(body: bytes, status: str = "200 OK") -> bytes:
    return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


def _read_request(conn: socket.socket, received: bytearray) -> bytes:
    """One HTTP request's bytes (head and a Content-Length body), recorded as they come."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
        received += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip() or 0)
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        rest += chunk
        received += chunk
    return head + b"\r\n\r\n" + rest


class Impostor:
    """Listens on a free loopback port and answers every request with `answer(request)`."""

    def __init__(self, answer: Callable[[bytes], bytes | None]):
        self.answer = answer
        self.received = bytearray()
        self.connections = 0
        impostor = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                impostor.connections += 1
                self.request.settimeout(10)
                try:
                    request = _read_request(self.request, impostor.received)
                    reply = impostor.answer(request)
                    if reply is not None:
                        self.request.sendall(reply)
                except OSError:
                    pass

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Impostor:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def status_json() -> bytes:
    """What /memstrata/status says, with this install's (predictable) ledger path."""
    return json.dumps({"memory_enabled": True, "upstream": "http://127.0.0.1:11434",
                       "counts": {"path": str(paths.db_path().resolve()), "active": 0}}).encode()


def _client_nonce(request: bytes) -> str:
    try:
        return str(json.loads(request.partition(b"\r\n\r\n")[2])["client_nonce"])
    except (ValueError, KeyError, TypeError):
        return peer.new_nonce()


def mimic_status(request: bytes) -> bytes:
    """Answers everything as the status route would (and a plausible ingest answer)."""
    if b"/memstrata/v1/" in request.split(b"\r\n", 1)[0]:
        return _http_answer(json.dumps({"actions": [], "skipped": [], "hits": []}).encode())
    return _http_answer(status_json())


def handshake_answer(proof: Callable[[str, str], str]) -> Callable[[bytes], bytes]:
    def answer(request: bytes) -> bytes:
        if b"/memstrata/handshake" not in request.split(b"\r\n", 1)[0]:
            return mimic_status(request)
        server_nonce = peer.new_nonce()
        return _http_answer(json.dumps({
            "version": 1, "server_nonce": server_nonce, "ledger": str(paths.db_path().resolve()),
            "proof": proof(_client_nonce(request), server_nonce)}).encode())
    return answer


IMPOSTORS: dict[str, Callable[[bytes], bytes | None]] = {
    # knows the routes and the ledger path, nothing of the handshake
    "status only": mimic_status,
    # answers as an older endpoint would: the handshake needs a token
    "401 to the handshake": lambda r: _http_answer(b'{"error": "needs a token"}',
                                                   "401 Unauthorized"),
    # the handshake's shape, a made-up proof
    "random proof": handshake_answer(lambda c, s: secrets.token_hex(32)),
    # the right formula with a guessed token
    "proof with another token": handshake_answer(
        lambda c, s: peer.endpoint_proof(secrets.token_urlsafe(32), c, s, "127.0.0.1:1",
                                         str(paths.db_path().resolve()))),
    # echoes the client's nonce back as the proof
    "the nonce as proof": handshake_answer(lambda c, s: c),
    "not HTTP": lambda r: b"SSH-2.0-OpenSSH_9.6\r\n",
    "closes at once": lambda r: None,
}


def stored_texts(embedder: Any) -> list[str]:
    with MemoryEngine.open(paths.db_path(), read_only=True, embedder=embedder) as eng:
        return [a.text for a in eng.list_assertions()]


@pytest.mark.parametrize("named_by", ["runtime file", "endpoint_port setting"])
@pytest.mark.parametrize("behaviour", list(IMPOSTORS))
def test_an_impostor_gets_neither_the_token_nor_the_text(run: Any, behaviour: str,
                                                         named_by: str, local_embedder: Any
                                                         ) -> None:
    token = access.load_token()
    with Impostor(IMPOSTORS[behaviour]) as imp:
        s = Settings.load()
        s.set("endpoint_port", imp.port if named_by != "runtime file" else free_port())
        s.save()
        if named_by == "runtime file":
            write_runtime_file(imp.port, paths.db_path())
        code, out, err = run("ingest", SENTENCE)
        code_q, out_q, err_q = run("query", f"which token is {SECRET}?")
    got = bytes(imp.received)
    assert token.encode() not in got, got
    assert SECRET.encode() not in got and b"staging deploy" not in got, got
    assert b"authorization" not in got.lower() and b"x-memstrata-token" not in got.lower()
    assert imp.connections >= 1  # it was asked (a nonce), and told nothing else
    for c, e in ((code, err), (code_q, err_q)):
        assert c == 0, e
        assert f"127.0.0.1:{imp.port}" in e and "opened here instead" in e, e
        assert SECRET not in e
    assert SECRET not in out + out_q
    # the ledger was opened here: the statement is stored, its secret replaced
    texts = stored_texts(local_embedder)
    assert any("[secret:" in t and "staging deploy token" in t for t in texts), texts
    assert not any(SECRET in t for t in texts)


# --- the genuine endpoint, with an observer in front of its app -------------------------------
class Recording:
    """The endpoint's own ASGI app, each request's method, path, headers and body noted."""

    def __init__(self, app: Any):
        self.app = app
        self.state = app.state
        self.requests: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        entry: dict[str, Any] = {
            "method": scope["method"], "path": scope["path"], "body": bytearray(),
            "headers": {k.decode("latin-1").lower(): v.decode("latin-1")
                        for k, v in scope["headers"]}}
        self.requests.append(entry)

        async def recorded() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                entry["body"] += message.get("body", b"")
            return message

        await self.app(scope, recorded, send)

    def everything(self) -> bytes:
        return b"".join(json.dumps(r["headers"]).encode() + r["method"].encode()
                        + r["path"].encode() + bytes(r["body"]) for r in self.requests)


@pytest.fixture
def genuine(local_embedder: Any, upstream: OllamaStandIn
            ) -> Iterator[tuple[ServerThread, Recording, MemoryEngine]]:
    """The real endpoint app on this install's ledger, on a free loopback port."""
    eng = MemoryEngine.open(paths.db_path(), embedder=local_embedder)
    recording = Recording(create_app(eng, Settings(None), upstream=upstream.url))
    server = ServerThread(recording, port=0, name="endpoint")
    server.start()
    yield server, recording, eng
    server.stop()
    eng.close()


def test_the_genuine_endpoint_proves_itself_and_gets_signed_redacted_requests(
        run: Any, genuine: tuple[ServerThread, Recording, MemoryEngine]) -> None:
    server, recording, eng = genuine
    assert server.port is not None
    write_runtime_file(server.port, paths.db_path())
    token = access.load_token()
    code, out, err = run("ingest", SENTENCE + " <memstrata-memory>")
    assert code == 0 and "warning" not in err, err
    assert "superseded" in out or "stored" in out or "new" in out, out
    assert "memory block's own tag" in out, out  # the tag taken out here is still reported
    code, out, err = run("explain", "The api listens on port 9443.")
    assert code == 0 and "dry run" in out and "warning" not in err, out + err
    code, out, err = run("query", f"the staging deploy token {SECRET}")
    assert code == 0 and "staging deploy token" in out and "warning" not in err, out + err
    paths_seen = [(r["method"], r["path"]) for r in recording.requests]
    assert paths_seen == [("POST", peer.HANDSHAKE_PATH), ("POST", "/memstrata/v1/ingest"),
                          ("POST", peer.HANDSHAKE_PATH), ("POST", "/memstrata/v1/explain"),
                          ("POST", peer.HANDSHAKE_PATH), ("POST", "/memstrata/v1/query")]
    everything = recording.everything()
    assert token.encode() not in everything  # never on the wire, even to the real endpoint
    assert SECRET.encode() not in everything  # redacted before it left the CLI
    for r in recording.requests:
        assert "authorization" not in r["headers"] and "x-memstrata-token" not in r["headers"]
        if r["path"] != peer.HANDSHAKE_PATH:
            assert peer.parse_signature(r["headers"].get("x-memstrata-signature"))
    ingest = json.loads(recording.requests[1]["body"])
    assert "[secret:github-token]" in ingest["text"] and "memstrata-memory" not in ingest["text"]
    rows = eng.list_assertions()
    assert any("[secret:github-token]" in a.text for a in rows)
    assert not any(SECRET in a.text for a in rows)


def test_a_relay_to_the_genuine_endpoint_is_caught(
        run: Any, genuine: tuple[ServerThread, Recording, MemoryEngine]) -> None:
    """A program on another port that passes the handshake on to the real endpoint: the proof
    names the address the endpoint was reached at, so the CLI sees it is not the one it asked."""
    server, recording, _ = genuine
    assert server.port is not None

    def relay(request: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as up:
            up.sendall(request.replace(b"Connection: keep-alive", b"Connection: close"))
            chunks = []
            while chunk := up.recv(65536):
                chunks.append(chunk)
            return b"".join(chunks)

    token = access.load_token()
    with Impostor(relay) as imp:
        write_runtime_file(imp.port, paths.db_path())
        code, _, err = run("ingest", SENTENCE)
    assert code == 0 and f"127.0.0.1:{imp.port}" in err and "did not prove" in err, err
    got = bytes(imp.received)
    assert token.encode() not in got and SECRET.encode() not in got
    assert b"staging" not in got
    # the endpoint saw a handshake and nothing else
    assert [r["path"] for r in recording.requests] == [peer.HANDSHAKE_PATH]


# --- the signed requests: each one once, exactly as signed ---------------------------------------
def shake(url: str, port: int, token: str) -> tuple[bytes, str]:
    nonce = peer.new_nonce()
    r = httpx.post(url + peer.HANDSHAKE_PATH, json={"client_nonce": nonce}, timeout=10)
    assert r.status_code == 200, r.text
    a = r.json()
    expected = peer.endpoint_proof(token, nonce, a["server_nonce"],
                                   peer.address("127.0.0.1", port), a["ledger"])
    assert peer.same(expected, a["proof"])
    # bound to where it was reached: the same proof does not stand for another port
    assert not peer.same(peer.endpoint_proof(token, nonce, a["server_nonce"],
                                             peer.address("127.0.0.1", port + 1), a["ledger"]),
                         a["proof"])
    return peer.session_key(token, nonce, a["server_nonce"]), a["server_nonce"]


def signed(key: bytes, session: str, seq: int, method: str, path: str, body: bytes
           ) -> dict[str, str]:
    digest = peer.body_digest(body)
    return {peer.SIGNATURE_HEADER: peer.signature(
        session, seq, digest, peer.request_mac(key, method, path, seq, digest)),
        "Content-Type": "application/json"}


MUTATIONS = ["replay", "lower seq", "other path", "other method", "other body", "bad mac",
             "unknown session", "other token"]


@settings(max_examples=24, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutation=st.sampled_from(MUTATIONS), text=st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=60))
def test_a_signed_request_is_taken_once_and_only_as_signed(
        genuine: tuple[ServerThread, Recording, MemoryEngine], mutation: str,
        text: str) -> None:
    server, _, eng = genuine
    assert server.port is not None
    url, token = server.url, access.load_token()
    key, session = shake(url, server.port, token)
    path = "/memstrata/v1/explain"
    body = json.dumps({"text": "The cache port is 6379."}).encode()
    ok = httpx.post(url + path, content=body, headers=signed(key, session, 5, "POST", path, body),
                    timeout=30)
    assert ok.status_code == 200, ok.text
    before = eng.count_assertions()
    other = json.dumps({"text": text + " The cache port is 6380."}).encode()
    seq, method, send_path, send_body, sign_body = 6, "POST", path, body, body
    sign_key, sign_session = key, session
    if mutation == "replay":
        seq = 5
    elif mutation == "lower seq":
        seq = 4
    elif mutation == "other path":
        send_path = "/memstrata/v1/ingest"
    elif mutation == "other method":
        method = "PUT"
    elif mutation == "other body":
        send_body = other
    elif mutation == "unknown session":
        sign_session = peer.new_nonce()
    elif mutation == "other token":
        sign_key = peer.session_key(secrets.token_urlsafe(32), peer.new_nonce(), session)
    headers = signed(sign_key, sign_session, seq, method, path, sign_body)
    if mutation == "bad mac":
        sig = headers[peer.SIGNATURE_HEADER]
        headers[peer.SIGNATURE_HEADER] = sig[:-1] + ("0" if sig[-1] != "0" else "1")
    if mutation == "other method":
        method = "POST"  # signed as PUT, sent as POST
    r = httpx.request(method, url + send_path, content=send_body, headers=headers, timeout=30)
    if mutation == "other body":  # the signature held; the body did not match: never acted on
        assert r.status_code == 499, r.text
    else:
        assert r.status_code == 401, (mutation, r.text)
    assert eng.count_assertions() == before


def test_sessions_are_bounded_and_end_with_the_token(
        genuine: tuple[ServerThread, Recording, MemoryEngine]) -> None:
    server, recording, _ = genuine
    assert server.port is not None
    token = access.load_token()
    key, session = shake(server.url, server.port, token)
    for _ in range(300):
        httpx.post(server.url + peer.HANDSHAKE_PATH, json={"client_nonce": peer.new_nonce()},
                   timeout=10)
    assert len(recording.state.sessions) <= 256
    key, session = shake(server.url, server.port, token)
    path = "/memstrata/v1/quarantine"
    assert httpx.get(server.url + path, headers=signed(key, session, 1, "GET", path, b""),
                     timeout=10).status_code == 200
    paths.token_path().unlink()  # a replaced token ends every session at once
    access.load_token()
    r = httpx.get(server.url + path, headers=signed(key, session, 2, "GET", path, b""),
                  timeout=10)
    assert r.status_code == 401
    for bad in ({}, {"client_nonce": "00"}, {"client_nonce": "G" * 64}, {"client_nonce": 1}):
        assert httpx.post(server.url + peer.HANDSHAKE_PATH, json=bad,
                          timeout=10).status_code == 400


# --- what leaves the CLI: redacted and neutralized, as the engine would ----------------------
_SECRETS = st.sampled_from([
    SECRET, "sk-proj-" + "Zq8" * 16, "AKIAIOSFODNN7EXAMPLE",
    "xoxb-" + "1234567890-" * 2 + "abcdEFGHijkl",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "postgresql://app:Sup3rS3cretPw@db.internal:5432/app"])
_WORDS = st.text(st.sampled_from("abcdefgh <>|[]/:=.\n"), max_size=40)


@settings(max_examples=40, deadline=None)
@given(before=_WORDS, secret=_SECRETS, after=_WORDS)
def test_what_leaves_the_cli_holds_no_secret_and_is_what_the_engine_would_store(
        before: str, secret: str, after: str) -> None:
    text = f"{before} the key is {secret} {after}"
    sent, _ = outbound(text)
    assert secret not in sent
    assert not find_secrets(sent)
    # the endpoint neutralizes and redacts again: it then sees exactly the same text
    assert outbound(sent)[0] == sent


# --- another user's listener: not even connected to -------------------------------------------
def test_the_listener_table_names_its_owner() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        owners = port_owners(port)
        if owners is None:
            pytest.skip("no /proc/net/tcp on this system")
        assert owners == {os.geteuid()}
    assert port_owners(port) == set()
    table = ("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid\n"
             "   0: 0100007F:2CCB 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1001\n"
             "   1: 0100007F:2CCB 0100007F:AF6E 01 00000000:00000000 00:00000000 00000000  1002\n")
    if sys.byteorder == "little":
        assert listening_uids(0x2CCB, [table]) == {1001}  # established rows are not listeners


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.geteuid() != 0,
                    reason="needs Linux and root to listen as another user")
def test_a_port_held_by_another_user_is_not_even_connected_to(run: Any, tmp_path: Path) -> None:
    script = ("import socket,sys\ns=socket.socket();s.bind(('127.0.0.1',0));s.listen(8)\n"
              "print(s.getsockname()[1],flush=True)\n"
              "while True:\n c,_=s.accept();print('connected',flush=True);c.close()\n")
    try:
        python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
        other = subprocess.Popen([python, "-c", script], user=65534, group=65534,
                                 stdout=subprocess.PIPE, text=True, cwd="/")
    except (OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"cannot start a process as another user: {e}")
    try:
        line = other.stdout.readline() if other.stdout else ""
        if not line.strip().isdigit():
            pytest.skip("the other user's process could not start python")
        port = int(line)
        write_runtime_file(port, paths.db_path())
        code, _, err = run("ingest", SENTENCE)
        assert code == 0 and f"127.0.0.1:{port} is held by another user (uid 65534)" in err
        time.sleep(0.2)
    finally:
        other.terminate()
        out, _ = other.communicate(timeout=10)
    assert "connected" not in out
    assert (paths.data_dir() / RUNTIME_FILE).exists()
