"""The ledger's -shm file changed under a running `memstrata serve` (truncated, or made
unwritable): SQLite maps that file, and touching the map afterwards ended the process by
SIGBUS, silently. Now writes stop with a clear error, reads and chats go on, one line is
logged, and every acknowledged write is still in the ledger (docs/SECURITY.md, "Ledger
faults"). Run in a real `memstrata serve` process, since on failure it dies.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import apsw
import httpx
import pytest

from memstrata_app.access import load_token
from memstrata_app.bench.standin import OllamaStandIn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]
ROOT = Path(__file__).resolve().parents[2]
FACTS = ["The auth service port is 8443.", "The deploy owner is Priya.",
         "The staging database is db-7.", "The service3 port is 9103.",
         "The build cache lives in /var/cache/ci.", "The release train leaves on Thursdays."]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(db: Path, upstream: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`memstrata --db DB serve` in its own process, forwarding to `upstream`."""
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "PYTHONPATH": str(ROOT), "OLLAMA_HOST": upstream}
    proc = subprocess.Popen([sys.executable, "-m", "memstrata_app", "--db", str(db), "--create",
                             "serve", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(url + "/memstrata/status", timeout=2).status_code == 200:
                    break
            assert time.monotonic() < deadline, "memstrata serve did not start"
            time.sleep(0.2)
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


@contextlib.contextmanager
def fault(shm: Path, how: str) -> Iterator[None]:
    """Change the -shm file under the running process: truncate it, or make it unwritable
    (the immutable attribute: as root file modes do not bind, and a mode change does not
    reach a map that is already open; it needs root)."""
    if how == "truncated":
        os.truncate(shm, 0)
        yield
        return
    if os.geteuid() != 0 or shutil.which("chattr") is None:
        pytest.skip("making a mapped file unwritable needs root and chattr (+i)")
    done = subprocess.run(["chattr", "+i", str(shm)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"`chattr +i` failed here ({done.stderr.strip()})")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(shm)], check=True)


def rows_in(db: Path) -> list[str]:
    c = apsw.Connection(str(db))
    try:
        return [r[0] for r in c.execute("SELECT text FROM assertions ORDER BY id")]
    finally:
        c.close()


@pytest.mark.parametrize("how", ["truncated", "unwritable"])
def test_serve_survives_its_shm_file_changing_and_keeps_reading(tmp_path: Path,
                                                                how: str) -> None:
    db = tmp_path / "ledger" / "memstrata.db"
    shm = db.with_name(db.name + "-shm")
    token = {"Authorization": f"Bearer {load_token()}"}
    with OllamaStandIn() as up, serve(db, up.url) as (url, proc):
        with httpx.Client(base_url=url, timeout=60, headers=token) as http:
            for fact in FACTS:  # acknowledged writes, still in the WAL (no checkpoint yet)
                assert http.post("/memstrata/v1/ingest", json={"text": fact}).status_code == 200
            assert shm.stat().st_size > 0
            with fault(shm, how):
                r = http.post("/memstrata/v1/ingest",
                              json={"text": "The billing service port is 7070."})
                assert r.status_code == 409, r.text
                msg = r.json()["error"]
                assert "stopped taking writes" in msg and str(shm) in msg
                assert "no acknowledged write was lost" in msg and "restart" in msg
                # reads go on, with everything written before (read from the WAL)
                listed = http.get("/memstrata/v1/list", params={"limit": 100})
                assert listed.status_code == 200, listed.text
                assert set(FACTS) <= {row["text"] for row in listed.json()["rows"]}
                found = http.post("/memstrata/v1/query", json={"query": "service3 port"})
                assert found.status_code == 200
                assert found.json()["hits"][0]["text"] == FACTS[3]
                # a chat still gets the facts injected; its turn is not stored
                chat = http.post("/api/chat", json={
                    "model": "standin-chat", "stream": False,
                    "messages": [{"role": "user", "content": "Which port does service3 use?"}]})
                assert chat.status_code == 200, chat.text
                assert chat.headers["x-memstrata-memory"] == "injected"
                assert FACTS[3] in str(up.requests[-1].json)
                assert proc.poll() is None  # alive
                r = http.post("/memstrata/v1/ingest", json={"text": "The cache port is 6379."})
                assert r.status_code == 409
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        log = proc.stderr.read().decode() if proc.stderr else ""
    assert proc.returncode == 0, log  # not -7 (SIGBUS)
    said = [ln for ln in log.splitlines() if "stopped taking writes" in ln]
    assert len(said) == 1 and "ERROR" in said[0], log
    assert "Traceback" not in log
    stored = rows_in(db)
    assert set(FACTS) <= set(stored)  # every acknowledged write
    assert not any("billing" in t or "6379" in t for t in stored)  # nothing refused
