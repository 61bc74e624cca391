"""No torch at run time: every command a user runs works, and never asks for torch,
sentence-transformers or transformers (tests/support/no_torch.py refuses and records them).

Each check is a subprocess: the CLI's commands over one ledger (ingest with the update judge,
a change, query, explain, history, stats, rejudge), the endpoint answering a chat turn through
the Ollama stand-in and the MCP server's tools, and the app up to its embedder loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(300)


def run_blocked(tmp_path: Path, kind: str, *args: str) -> tuple[dict, str]:
    report = tmp_path / f"report-{kind}.json"
    env = dict(os.environ, MEMSTRATA_HOME=str(tmp_path / "home"), QT_QPA_PLATFORM="offscreen",
               HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    env.pop("OLLAMA_HOST", None)
    proc = subprocess.run([sys.executable, "-m", "tests.support.no_torch", str(report), kind,
                           *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=280)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    return json.loads(report.read_text()), out


def assert_torch_free(report: dict, out: str) -> None:
    assert report["attempts"] == [], f"asked for {report['attempts']}:\n{out}"
    assert report["loaded"] == [], out


CLI = """
from memstrata_app.cli.dispatch import main
db = {db!r}
def run(*a):
    print("$ memstrata", *a, flush=True)
    rc = main(["--db", db, *a])
    assert rc == 0, (a, rc)
run("--create", "ingest", "The Dockerfile uses python 3.11.", "--at", "2026-11-16")
run("ingest", "The billing service port is 8080.", "--at", "2026-11-16")
run("ingest", "The billing service port is now 9090.", "--at", "2026-11-20")
run("query", "which port does the billing service use?")
run("explain", "bumped the Dockerfile to python 3.12")
run("history", "billing")
run("stats")
run("rejudge")
"""


def test_cli_commands_run_without_torch(tmp_path: Path) -> None:
    code = CLI.format(db=str(tmp_path / "f.db"))
    report, out = run_blocked(tmp_path, "code", code)
    assert_torch_free(report, out)
    query = out.split("$ memstrata query")[1].split("$ memstrata")[0]
    assert "9090" in query and "8080" not in query.split("9090")[0], query


SERVE = """
import httpx, anyio, json
from mcp import Client
from memstrata_app.bench.standin import OllamaStandIn
from memstrata_app.engine import MemoryEngine
from memstrata_app.proxy import EndpointServer
from memstrata_app.proxy.mcp_server import build_server
from memstrata_app.settings import Settings

eng = MemoryEngine.open({db!r})
with OllamaStandIn() as up:
    server = EndpointServer(eng, Settings(None), port=0, upstream=up.url)
    server.start()
    try:
        r = httpx.post(server.url + "/api/chat", timeout=120, json={{
            "model": "standin-chat", "stream": False, "messages": [
                {{"role": "user", "content": "The cache TTL is 300 seconds."}}]}})
        assert r.status_code == 200, r.text
        r = httpx.post(server.url + "/api/chat", timeout=120, json={{
            "model": "standin-chat", "stream": False, "messages": [
                {{"role": "user", "content": "what is the cache TTL?"}}]}})
        assert r.status_code == 200, r.text
        sent = json.dumps([r.json for r in up.requests if r.method == "POST"][-1])
        assert "300 seconds" in sent, sent
    finally:
        server.stop()

async def mcp():
    async with Client(build_server(eng)) as client:
        await client.call_tool("remember", {{"text": "The queue is rabbitmq."}})
        res = await client.call_tool("recall", {{"query": "which queue"}})
        assert "rabbitmq" in str(res.content), res
anyio.run(mcp)
eng.close()
print("served")
"""


def test_endpoint_and_mcp_run_without_torch(tmp_path: Path) -> None:
    report, out = run_blocked(tmp_path, "code", SERVE.format(db=str(tmp_path / "s.db")))
    assert_torch_free(report, out)
    assert "served" in out


APP = """
from memstrata_app.gui.app import main
raise SystemExit(main(["--exit-when-warm", "--db", {db!r}]))
"""


def test_app_loads_its_embedder_without_torch(tmp_path: Path) -> None:
    pytest.importorskip("PySide6")
    report, out = run_blocked(tmp_path, "code", APP.format(db=str(tmp_path / "a.db")))
    assert_torch_free(report, out)
    assert "embedder loaded" in out, textwrap.shorten(out, 2000)
