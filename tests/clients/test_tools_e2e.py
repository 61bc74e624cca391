"""Five real coding tools through `memstrata serve`, end to end.

For each tool (pinned versions, installed from the registries by
scripts/clients/install.sh) this runs the three-turn story non-interactively, with the
same command lines as scripts/clients/capture.py (scripts/clients/tools.py), against a
real `memstrata serve` subprocess whose upstream is the Ollama stand-in:

    1. "The cache TTL is 300 seconds."
    2. "The cache TTL is now 900 seconds."
    3. "What is the cache TTL?"

and checks
  (a) what the upstream received: every turn-3 chat request carries exactly one
      <memstrata-memory> block, and the block quotes the 900 statement, not the 300 one;
  (b) what the ledger holds (`memstrata export`, and the management API's query with the
      install's token): the 300 statement superseded, the 900 statement active, and no
      other rows, so nothing of the tools' boilerplate (<session> titles, edit-format
      instructions, environment context) is stored as a fact.

A tool whose registry cannot be reached is skipped with install.sh's reason; any other
install problem fails. Each case writes its outcome to tests/clients/.run/results.json,
from which scripts/clients/compat_table.py writes the table in docs/CONNECT.md; logs
(each turn's output, the endpoint's log, the requests the upstream received) go to
tests/clients/.run/e2e/<case>/.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from .http_tap import HttpTap

ROOT = Path(__file__).resolve().parents[2]
INSTALL_SH = ROOT / "scripts" / "clients" / "install.sh"
RUN_DIR = ROOT / "tests" / "clients" / ".run"
RESULTS = RUN_DIR / "results.json"
LOG_DIR = RUN_DIR / "e2e"

INSTALL_TIMEOUT = int(os.environ.get("MEMSTRATA_CLIENTS_INSTALL_TIMEOUT", "900"))
CASE_BUDGET = 240.0  # seconds for one tool's three turns
TURN_TIMEOUT = 120.0  # seconds for one invocation, as capture.py
SERVE_START = 60.0  # seconds for `memstrata serve` to answer

BLOCK_OPEN, BLOCK_CLOSE = "<memstrata-memory>", "</memstrata-memory>"

pytestmark = [
    pytest.mark.slow,
    # The first case also pays for the module's install (about 3 minutes on a first run).
    pytest.mark.timeout(INSTALL_TIMEOUT + int(CASE_BUDGET) + 120),
]


def _load_tools() -> Any:
    name = "memstrata_client_tools"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, ROOT / "scripts" / "clients" / "tools.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


tools = _load_tools()
TURNS: list[str] = tools.TURNS
OLD, NEW, QUESTION = TURNS

# (tool, scenario): the scenarios of capture.py that run without a terminal.
CASES = [(tool, sc) for tool, scs in tools.SCENARIOS.items() for sc in scs]


def case_id(case: tuple[str, str]) -> str:
    return "-".join(p for p in case if p)


# --------------------------------------------------------------------------------------
# Install (once per module)
# --------------------------------------------------------------------------------------

# What an unreachable registry looks like in install.sh's `skipped:` reasons (npm's and
# pip's own messages). install.sh's "(registry unreachable?)" guess is not evidence.
UNREACHABLE = re.compile(
    r"registry unreachable \(npm ping failed\)|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|"
    r"ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|getaddrinfo|network|Failed to establish a new "
    r"connection|Temporary failure in name resolution|Name or service not known|"
    r"Max retries exceeded|ProxyError|Connection (?:refused|reset)|Read timed out|"
    r"timed out|from versions: none", re.I)


@dataclass
class Install:
    state: str  # "ok" | "unreachable" | "error"
    line: str


def parse_install(output: str) -> dict[str, Install]:
    """install.sh's verdict per tool from its `installed:` / `already installed:` /
    `skipped: <tools>: <why>` lines."""
    found: dict[str, Install] = {}
    for line in output.splitlines():
        line = line.strip()
        for prefix in ("already installed: ", "installed: "):
            if line.startswith(prefix):
                found[line[len(prefix):].split()[0]] = Install("ok", line)
                break
        else:
            if line.startswith("skipped: "):
                head, _, why = line[len("skipped: "):].partition(": ")
                evidence = why.replace("(registry unreachable?)", "")
                state = "unreachable" if UNREACHABLE.search(evidence) else "error"
                for label in head.split(", "):
                    found[label.split()[0]] = Install(state, line)
    return found


@pytest.fixture(scope="module")
def installed() -> dict[str, Install]:
    """Run install.sh (idempotent: a second run only checks versions) and read its verdict."""
    try:
        p = subprocess.run(["bash", str(INSTALL_SH)], capture_output=True, text=True,
                           timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"scripts/clients/install.sh did not finish within {INSTALL_TIMEOUT} s "
                    f"(MEMSTRATA_CLIENTS_INSTALL_TIMEOUT); it printed:\n{exc.stdout or ''}")
    if p.returncode != 0:
        pytest.fail(f"scripts/clients/install.sh exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    found = parse_install(p.stdout)
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    (RUN_DIR / "install.log").write_text(p.stdout + p.stderr, encoding="utf-8")
    states = [found.get(t) for t in tools.SCENARIOS]
    if states and all(s is not None and s.state == "unreachable" for s in states):
        pytest.skip("no coding tool could be installed, the registries are unreachable:\n"
                    + "\n".join(s.line for s in states if s))
    return found


# --------------------------------------------------------------------------------------
# The upstream (Ollama stand-in) and the endpoint (`memstrata serve`)
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def standin() -> Iterator[Any]:
    """The stand-in, also serving the models the tools ask for."""
    from memstrata_app.bench.standin import OllamaStandIn
    from memstrata_app.bench.standin import routes as standin_routes
    from memstrata_app.bench.standin import state as standin_mod

    wanted = tuple(n for n in (tools.CHAT_MODEL, tools.OSS_MODEL)
                   if n not in standin_mod.MODELS)
    with pytest.MonkeyPatch.context() as mp:
        # The stand-in's model list is a module constant read at request time.
        for mod in (standin_mod, standin_routes):
            if isinstance(getattr(mod, "MODELS", None), tuple):
                mp.setattr(mod, "MODELS", (*mod.MODELS, *wanted))
        # slow_delay 0: tools that look every listed model up (llm) would wait on standin-slow.
        with OllamaStandIn(slow_delay=0.0) as up:
            yield up


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def memstrata_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("memstrata")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("memstrata")
    return [found] if found else [sys.executable, "-m", "memstrata_app.cli"]


class Serve:
    """`memstrata serve --port P` in its own data folder, forwarding to the stand-in."""

    def __init__(self, home: Path, upstream: str, log: Path) -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("MEMSTRATA_", "OLLAMA_"))}
        self.env.update({"MEMSTRATA_HOME": str(home), "OLLAMA_HOST": upstream,
                         "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"})
        self.log = log
        self.token = ""
        self._out = log.open("wb")
        self.proc = subprocess.Popen([*memstrata_cmd(), "serve", "--port", str(self.port)],
                                     env=self.env, stdout=self._out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=home)
        self._wait_ready()

    def _wait_ready(self) -> None:
        end = time.monotonic() + SERVE_START
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                self.stop()
                pytest.fail(f"memstrata serve exited {self.proc.returncode}:\n"
                            + self.log.read_text(errors="replace")[-3000:])
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/memstrata/status", timeout=2).status_code == 200:
                    return
            time.sleep(0.2)
        self.stop()
        pytest.fail(f"memstrata serve did not answer within {SERVE_START} s:\n"
                    + self.log.read_text(errors="replace")[-3000:])

    def cli(self, *args: str) -> str:
        p = subprocess.run([*memstrata_cmd(), *args], env=self.env, capture_output=True,
                           text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert p.returncode == 0, f"memstrata {' '.join(args)} failed: {p.stderr[-2000:]}"
        return p.stdout

    def query(self, q: str) -> list[str]:
        """The texts the management API returns as valid now (needs the install's token)."""
        self.token = self.token or self.cli("token").strip()
        r = httpx.get(self.url + "/memstrata/v1/query", params={"q": q, "k": 10},
                      headers={"Authorization": f"Bearer {self.token}"}, timeout=60)
        assert r.status_code == 200, f"management query: {r.status_code} {r.text[:500]}"
        return [h.get("text", "") for h in r.json().get("hits", [])]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._out.close()


# --------------------------------------------------------------------------------------
# Reading requests
# --------------------------------------------------------------------------------------


def strings(obj: Any) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)


def items(body: Any) -> list[dict[str, Any]]:
    """Conversation items of a chat request: `messages` (Ollama/OpenAI/Anthropic) or
    `input` (Responses)."""
    if not isinstance(body, dict):
        return []
    for key in ("messages", "input"):
        if isinstance(body.get(key), list):
            return [m for m in body[key] if isinstance(m, dict)]
    return []


def is_chat(body: Any) -> bool:
    return bool(items(body)) or (isinstance(body, dict) and (
        isinstance(body.get("input"), str) or isinstance(body.get("prompt"), str)))


def user_texts(body: Any) -> list[str]:
    """Every user-role text of a request, oldest first."""
    out = [" ".join(strings(m.get("content"))) for m in items(body) if m.get("role") == "user"]
    if isinstance(body, dict):
        for key in ("input", "prompt"):
            if isinstance(body.get(key), str):
                out.append(body[key])
    return out


def newest_user_text(body: Any) -> str:
    texts = user_texts(body)
    return texts[-1] if texts else ""


def memory_blocks(body: Any) -> tuple[int, list[str]]:
    """How many <memstrata-memory> openings a request holds, and each block's text."""
    count, found = 0, []
    for s in strings(body):
        count += s.count(BLOCK_OPEN)
        found += re.findall(re.escape(BLOCK_OPEN) + r".*?(?:" + re.escape(BLOCK_CLOSE)
                            + r"|\Z)", s, re.S)
    return count, found


def quoted_lines(block: str) -> list[str]:
    """The numbered fact lines of a block (not its header, which carries a timestamp)."""
    return [ln for ln in block.splitlines() if re.match(r"\d+\. ", ln)]


def norm(text: str) -> str:
    return " ".join(str(text).split())


# --------------------------------------------------------------------------------------
# Known limits, read off the run
# --------------------------------------------------------------------------------------


def known_limits(tool: str, scenario: str, bodies: list[tuple[int, Any]],
                 tap_routes: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    chats = [(turn, b) for turn, b in bodies if is_chat(b)]
    titles = [b for _, b in chats if "<session>" in newest_user_text(b)]
    if titles:
        blocks = sum(memory_blocks(b)[0] for b in titles)
        out.append("sends a session-title request on turn 1 (the user's words in "
                   "`<session>…</session>`, `tools: []`; not sent with "
                   "`CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`); it reached the upstream "
                   + ("with a memory block" if blocks else "without a memory block"))
    if any(isinstance(b, dict) and "system" in b and m.get("role") == "system"
           for _, b in chats for m in items(b)):
        out.append("puts a `role: system` message inside `messages` (mid-conversation "
                   "system beta)")
    if any("<system-reminder>" in t for _, b in chats for t in user_texts(b)):
        out.append("adds `<system-reminder>` context blocks to the first user message")
    if any("<environment_context>" in t for _, b in chats for t in user_texts(b)):
        out.append("sends an `<environment_context>` user item (cwd, shell, date) before "
                   "each turn")
    models = {b.get("model") for _, b in chats if isinstance(b, dict)}
    if tools.OSS_MODEL in models:
        pulls = sum(1 for r in tap_routes if r["path"] == "/api/pull")
        out.append(f"`--oss` takes no model setting here and asks for `{tools.OSS_MODEL}`"
                   + (f" (pulled via `/api/pull`, {pulls}×, as `/api/tags` lacked it)" if pulls
                      else " (Ollama must list it in `/api/tags`, else Codex pulls it via "
                           "`/api/pull`)"))
    if any("To suggest changes to a file" in newest_user_text(b) for _, b in chats):
        out.append("appends its edit-format instructions to the user's own message")
    if tool == "aider" and any(not any(t in u for t in TURNS)
                               for _, b in chats for u in user_texts(b)):
        out.append("sends few-shot example user/assistant turns before the conversation")
    if tool == "continue-cn" and any(r["path"] == "/v1/chat/completions" for r in tap_routes):
        out.append("uses the OpenAI API (`/v1/chat/completions`) even with `provider: ollama`")
    if tool == "llm" and any(r["path"] == "/api/tags" for r in tap_routes):
        out.append("asks `/api/tags` on every invocation and `/api/show` once per model "
                   "digest (then cached on disk)")
    bad = Counter(f"{r['method']} {r['path']} → {r['status']}" for r in tap_routes
                  if (r["status"] or 0) >= 400 or r["status"] is None)
    for what, n in sorted(bad.items()):
        out.append(f"the endpoint answered {what}" + (f" ({n}×)" if n > 1 else ""))
    return out


# --------------------------------------------------------------------------------------
# Results file (read by scripts/clients/compat_table.py)
# --------------------------------------------------------------------------------------


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def save_result(cid: str, result: dict[str, Any]) -> None:
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {}
    if RESULTS.exists():
        with contextlib.suppress(ValueError):
            data = json.loads(RESULTS.read_text(encoding="utf-8"))
    data.setdefault("cases", {})[cid] = result
    data["turns"] = TURNS
    data["command"] = ("python -m pytest tests/clients/test_tools_e2e.py "
                       "(the stand-in as upstream)")
    data["updated_at"] = result["run_at"]
    RESULTS.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                       encoding="utf-8")


def route_summary(routes: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in routes:
        key = f"{r['method']} {r['path']}"
        st = str(r["status"]) if r["status"] is not None else "no answer"
        out.setdefault(key, {})
        out[key][st] = out[key].get(st, 0) + 1
    return out


# --------------------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_three_turn_story(case: tuple[str, str], installed: dict[str, Install],
                          standin: Any, tmp_path: Path) -> None:
    tool, scenario = case
    cid = case_id(case)
    verdict = installed.get(tool)
    if verdict is None:
        pytest.fail(f"scripts/clients/install.sh said nothing about {tool}; see "
                    f"{RUN_DIR / 'install.log'}")
    if verdict.state != "ok":
        why = ("not installed, its registry is unreachable" if verdict.state == "unreachable"
               else "could not be installed")
        save_result(cid, {"tool": tool, "scenario": scenario, "install": verdict.line,
                          "run_at": now(), "skipped": f"{why}: {verdict.line}",
                          "passed": False})
        if verdict.state == "unreachable":
            pytest.skip(f"{tool} {why}: {verdict.line}")
        pytest.fail(f"{tool} {why}: {verdict.line}")

    logs = LOG_DIR / cid
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    scratch = Path.home() / ".cache" / "memstrata-client-e2e" / f"{os.getpid()}-{cid}"
    standin.clear()
    deadline = time.monotonic() + CASE_BUDGET
    serve = Serve(tmp_path / "serve-home", standin.url, logs / "serve.log")
    problems: list[str] = []
    runs: list[dict[str, Any]] = []
    bounds: list[int] = []
    try:
        serve.query("warm-up")  # loads the embedder now, not inside the tool's first turn
        with HttpTap(serve.port) as tap:
            plan = tools.PLANNERS[tool](tap.base, scenarios=(scenario,), scratch=scratch)
            assert plan.installed, f"{tool}: {plan.notes}"
            (sc,) = plan.scenarios
            bounds.append(len(standin.requests))  # the endpoint's own start-up calls before
            for turn, argv in enumerate(sc.argvs, 1):
                tap.turn = turn
                left = deadline - time.monotonic()
                if left < 5:
                    runs.append({"turn": turn, "rc": "not run (case budget spent)",
                                 "seconds": 0})
                    bounds.append(len(standin.requests))
                    continue
                res = tools.invoke(argv, sc.env, sc.work, timeout=min(TURN_TIMEOUT, left))
                time.sleep(0.5)  # late background requests land under this turn
                bounds.append(len(standin.requests))
                tools.write_log(logs / f"turn{turn}.log", argv, res.stdout, res.stderr)
                runs.append({"turn": turn, "rc": res.rc, "seconds": res.seconds,
                             "stderr_tail": res.stderr.decode(errors="replace")[-600:]})
            tap.turn = 0
            tap_routes = tap.routes()
        try:
            valid_now = serve.query(QUESTION)
        except AssertionError as exc:
            valid_now = []
            problems.append(str(exc))
    finally:
        serve.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    rows = json.loads(serve.cli("export"))
    (logs / "ledger.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False),
                                      encoding="utf-8")

    # Requests the upstream received, by turn.
    recorded = list(standin.requests)
    bodies: list[tuple[int, Any]] = []
    with (logs / "upstream.jsonl").open("w", encoding="utf-8") as f:
        for turn in range(1, len(bounds)):
            for r in recorded[bounds[turn - 1]:bounds[turn]]:
                bodies.append((turn, r.json))
                f.write(json.dumps({"turn": turn, "method": r.method, "path": r.path,
                                    "body": r.json}, ensure_ascii=False) + "\n")
    upstream_routes = Counter(f"{r.method} {r.path}" for r in recorded)

    for r in runs:
        if r["rc"] != 0:
            problems.append(f"turn {r['turn']}: {tool} exited {r['rc']}: "
                            f"{norm(r.get('stderr_tail', ''))[-300:]}")

    # (a) The upstream's turn-3 request(s): one block, 900 in it, 300 not.
    turn3 = [b for t, b in bodies if t == 3 and is_chat(b) and QUESTION in newest_user_text(b)]
    inj: dict[str, Any] = {"turn3_requests": len(turn3), "one_block": 0, "has_new": 0,
                           "has_old": 0}
    if not turn3:
        problems.append("no chat request carrying turn 3 reached the upstream "
                        f"(upstream routes: {dict(upstream_routes)})")
    for b in turn3:
        n, found = memory_blocks(b)
        facts = "\n".join(ln for blk in found for ln in quoted_lines(blk))
        inj["one_block"] += n == 1
        inj["has_new"] += "900" in facts
        inj["has_old"] += "300" in facts
        if n != 1:
            problems.append(f"turn-3 request carries {n} memory blocks, not 1")
        if "900" not in facts:
            problems.append(f"turn-3 memory block lacks the 900 statement: {found!r:.400}")
        if "300" in facts:
            problems.append(f"turn-3 memory block quotes the retired 300 statement: "
                            f"{found!r:.400}")
    inj["ok"] = bool(turn3) and inj["one_block"] == inj["has_new"] == len(turn3) \
        and inj["has_old"] == 0

    # (b) The ledger: 300 superseded, 900 active, nothing else.
    old_rows = [r for r in rows if norm(r.get("text", "")) == OLD]
    new_rows = [r for r in rows if norm(r.get("text", "")) == NEW]
    other = [r for r in rows if r not in old_rows and r not in new_rows]
    stored = {"old": [r.get("status") for r in old_rows],
              "new": [r.get("status") for r in new_rows],
              "other": [f"{r.get('status')}: {norm(r.get('text', ''))[:160]}" for r in other]}
    if [r.get("status") for r in new_rows] != ["active"]:
        problems.append(f"ledger: want one active row {NEW!r}, have {stored['new']}")
    if [r.get("status") for r in old_rows] != ["superseded"]:
        problems.append(f"ledger: want one superseded row {OLD!r}, have {stored['old']}")
    elif new_rows and old_rows[0].get("superseded_by") != new_rows[0].get("id"):
        problems.append(f"ledger: {OLD!r} superseded by #{old_rows[0].get('superseded_by')}, "
                        f"not by the 900 row #{new_rows[0].get('id')}")
    if other:
        problems.append("ledger holds rows that are not the user's statements "
                        f"(tool boilerplate?): {stored['other'][:8]}")
    if not any(norm(t) == NEW for t in valid_now) or any(norm(t) == OLD for t in valid_now):
        problems.append(f"management query {QUESTION!r}: want the 900 statement valid now "
                        f"and not the 300 one, got {valid_now[:5]}")
    stored["spaces"] = sorted({str(r["space"]) for r in rows if r.get("space")})
    stored["ok"] = stored["old"] == ["superseded"] and stored["new"] == ["active"] \
        and not other

    seen = Counter(problems)  # one line per kind of problem (a retrying tool repeats them)
    problems = [p + (f" (×{seen[p]})" if seen[p] > 1 else "") for p in dict.fromkeys(problems)]
    result = {
        "tool": tool, "scenario": scenario, "version": plan.version, "how": plan.how,
        "install": verdict.line,
        "run_at": now(),
        "turns": runs,
        "tool_routes": route_summary(tap_routes),
        "upstream_routes": dict(upstream_routes),
        "injected": inj, "stored": stored, "valid_now": valid_now[:5],
        "known_limits": known_limits(tool, scenario, bodies, tap_routes),
        "problems": problems, "passed": not problems,
        "logs": str(logs.relative_to(ROOT)),
    }
    save_result(cid, result)
    assert not problems, (f"{cid}: " + "\n  - ".join(["", *problems])
                          + f"\n(logs: {logs.relative_to(ROOT)})")
