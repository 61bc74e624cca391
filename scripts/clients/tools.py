"""How each real coding tool is run non-interactively against a local model endpoint.

Shared by scripts/clients/capture.py (which points the tools at its recording server)
and tests/clients/test_tools_e2e.py (which points them at `memstrata serve`): the same
fresh HOME, clean environment, configuration files and command lines per tool, so the
end-to-end run exercises exactly the invocations whose requests were captured.

    plan = PLANNERS["codex"]("http://127.0.0.1:PORT", scenarios=("provider",))
    for sc in plan.scenarios:
        for turn, argv in enumerate(sc.argvs, 1):
            res = invoke(argv, sc.env, sc.work, timeout=120)

Plain standard library only; every subprocess has a timeout.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "tests" / "clients"
TOOLS_PREFIX = CLIENTS / ".tools"
RUN_DIR = CLIENTS / ".run"  # logs of each invocation (ignored by git)
# Temp HOMEs and work dirs live outside the repository, so no tool finds this repo's
# git root or instruction files, and outside /tmp (Codex refuses helper links there).
SCRATCH = Path(os.environ.get("CAPTURE_SCRATCH",
                              Path.home() / ".cache" / "memstrata-client-capture"))

TURNS = [
    "The cache TTL is 300 seconds.",
    "The cache TTL is now 900 seconds.",
    "What is the cache TTL?",
]

CHAT_MODEL = "qwen2.5-coder:7b"  # what every tool is told to use
OSS_MODEL = "gpt-oss:20b"  # what `codex --oss` asks for by itself (no -m)

# Scenarios per tool, in the order capture.py runs them (Claude Code's interactive TUI
# scenario is capture.py's own: it needs tmux and the recorder to pace the turns).
SCENARIOS: dict[str, tuple[str, ...]] = {
    "claude-code": ("quiet", "nonessential"),
    "codex": ("provider", "oss"),
    "continue-cn": ("",),
    "aider": ("",),
    "llm": ("",),
}


@dataclass
class Scenario:
    """One way of running a tool: its environment, work dir and one command per turn."""

    tool: str
    scenario: str  # "" where the tool has one way only
    env: dict[str, str]
    work: Path
    argvs: list[list[str]]


@dataclass
class Plan:
    """A tool's scenarios, or why it cannot run (not installed)."""

    tool: str
    installed: bool
    version: str = ""
    scenarios: list[Scenario] = field(default_factory=list)
    how: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass
class Invocation:
    rc: int | str  # exit status, or "timeout" / "error"
    stdout: bytes
    stderr: bytes
    seconds: float


def base_env(home: Path) -> dict[str, str]:
    """A clean environment: no inherited model/provider settings, no proxies."""
    keep = ("PATH", "LANG", "LC_ALL", "SSL_CERT_FILE", "TZ", "USER", "LOGNAME", "SHELL")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update({
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    })
    env.setdefault("LANG", "C.UTF-8")
    return env


def bin_path(name: str) -> Path:
    return TOOLS_PREFIX / "node_modules" / ".bin" / name


def executable(tool: str) -> Path:
    """Where install.sh puts the tool's command."""
    return {
        "claude-code": bin_path("claude"),
        "codex": bin_path("codex"),
        "continue-cn": bin_path("cn"),
        "aider": CLIENTS / ".venv-aider" / "bin" / "aider",
        "llm": CLIENTS / ".venv-llm" / "bin" / "llm",
    }[tool]


def fresh_dirs(tool: str, scenario: str = "", scratch: Path | None = None
               ) -> tuple[Path, Path]:
    """A new HOME and work dir (with a README.md) under `scratch` (default SCRATCH)."""
    scratch = scratch or SCRATCH
    scratch.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix=f"{tool}-{scenario or 'main'}-", dir=scratch))
    home, work = root / "home", root / "work"
    home.mkdir()
    work.mkdir()
    (work / "README.md").write_text("# demo project\n")
    return home, work


def tool_version(argv: list[str], env: dict[str, str]) -> str:
    try:
        p = subprocess.run(argv, env=env, capture_output=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        return (p.stdout or p.stderr).decode(errors="replace").strip().splitlines()[-1]
    except Exception as exc:
        return f"unknown ({exc})"


def invoke(argv: list[str], env: dict[str, str], cwd: Path, timeout: float) -> Invocation:
    """Run one turn: no stdin, its own session, killed after `timeout` seconds."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=timeout, start_new_session=True)
        rc: int | str = p.returncode
        out, err = p.stdout, p.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = "timeout", exc.stdout or b"", exc.stderr or b""
    except OSError as exc:
        rc, out, err = "error", b"", str(exc).encode()
    return Invocation(rc, out, err, round(time.monotonic() - t0, 2))


def write_log(path: Path, argv: list[str], out: bytes, err: bytes) -> None:
    path.write_bytes(b"$ " + " ".join(argv).encode() + b"\n--- stdout\n" + out +
                     b"\n--- stderr\n" + err)


def not_installed(tool: str) -> Plan:
    return Plan(tool, False, notes=["not installed (run scripts/clients/install.sh)"])


# --------------------------------------------------------------------------------------
# Per-tool invocations. `base` is the endpoint's URL ("http://127.0.0.1:PORT").
# --------------------------------------------------------------------------------------


def plan_claude(base: str, scenarios: Sequence[str] = SCENARIOS["claude-code"],
                scratch: Path | None = None) -> Plan:
    exe = executable("claude-code")
    if not exe.exists():
        return not_installed("claude-code")
    plan = Plan("claude-code", True,
                how="claude [--continue] -p TEXT --model qwen2.5-coder:7b with "
                    "ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN=ollama; scenario 'quiet' adds "
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, 'nonessential' does not; "
                    "'interactive' types the turns into one TUI session under tmux")
    for scenario in scenarios:
        quiet = scenario == "quiet"
        home, work = fresh_dirs("claude-code", scenario, scratch)
        env = base_env(home)
        env.update({
            "ANTHROPIC_BASE_URL": base,
            "ANTHROPIC_AUTH_TOKEN": "ollama",
            "ANTHROPIC_API_KEY": "",
            "DISABLE_AUTOUPDATER": "1",
        })
        if quiet:
            env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
        plan.version = plan.version or tool_version([str(exe), "--version"], env)
        argvs = []
        for i, text in enumerate(TURNS, 1):
            argv = [str(exe), "-p", text, "--model", CHAT_MODEL]
            if i > 1:
                argv.insert(1, "--continue")
            argvs.append(argv)
        plan.scenarios.append(Scenario("claude-code", scenario, env, work, argvs))
    return plan


def plan_codex(base: str, scenarios: Sequence[str] = SCENARIOS["codex"],
               scratch: Path | None = None) -> Plan:
    exe = executable("codex")
    if not exe.exists():
        return not_installed("codex")
    plan = Plan("codex", True,
                how="scenario 'provider': ~/.codex/config.toml with [model_providers.memstrata] "
                    "base_url=<server>/v1, wire_api=responses; scenario 'oss': codex exec --oss "
                    "--local-provider ollama with CODEX_OSS_BASE_URL=<server>/v1; turns 2-3 via "
                    "`codex exec resume --last`")
    for scenario in scenarios:
        home, work = fresh_dirs("codex", scenario, scratch)
        env = base_env(home)
        codex_home = home / ".codex"
        codex_home.mkdir()
        env["CODEX_HOME"] = str(codex_home)
        common = ["--skip-git-repo-check", "--color", "never", "-s", "read-only"]
        if scenario == "provider":
            (codex_home / "config.toml").write_text(
                f'model = "{CHAT_MODEL}"\n'
                'model_provider = "memstrata"\n\n'
                "[model_providers.memstrata]\n"
                'name = "MemStrata"\n'
                f'base_url = "{base}/v1"\n'
                'env_key = "MEMSTRATA_API_KEY"\n'
                'wire_api = "responses"\n')
            env["MEMSTRATA_API_KEY"] = "sk-local-placeholder"
            extra: list[str] = []
        else:
            # Built-in Ollama provider; CODEX_OSS_BASE_URL moves it off :11434.
            # No -m: the default open model (OSS_MODEL) is pulled when not in /api/tags.
            env["CODEX_OSS_BASE_URL"] = f"{base}/v1"
            extra = ["--oss", "--local-provider", "ollama"]
        plan.version = plan.version or tool_version([str(exe), "--version"], env)
        argvs = []
        for i, text in enumerate(TURNS, 1):
            if i == 1:
                argv = [str(exe), "exec", *extra, *common, "-C", str(work), text]
            else:
                argv = [str(exe), "exec", *extra, *common, "-C", str(work),
                        "resume", "--last", text]
            argvs.append(argv)
        plan.scenarios.append(Scenario("codex", scenario, env, work, argvs))
    return plan


def plan_cn(base: str, scenarios: Sequence[str] = SCENARIOS["continue-cn"],
            scratch: Path | None = None) -> Plan:
    exe = executable("continue-cn")
    if not exe.exists():
        return not_installed("continue-cn")
    home, work = fresh_dirs("continue-cn", "", scratch)
    env = base_env(home)
    cfg_dir = home / ".continue"
    cfg_dir.mkdir()
    cfg = cfg_dir / "config.yaml"
    cfg.write_text(
        "name: capture\nversion: 1.0.0\nschema: v1\nmodels:\n"
        "  - name: Qwen2.5 Coder (with memory)\n"
        "    provider: ollama\n"
        f"    model: {CHAT_MODEL}\n"
        f"    apiBase: {base}\n"
        "    roles: [chat, edit, apply]\n")
    version = tool_version([str(exe), "--version"], env)
    argvs = []
    for i, text in enumerate(TURNS, 1):
        argv = [str(exe), "-p", "--config", str(cfg), text]
        if i > 1:
            argv.insert(2, "--resume")
        argvs.append(argv)
    return Plan("continue-cn", True, version, [Scenario("continue-cn", "", env, work, argvs)],
                how="cn -p [--resume] --config ~/.continue/config.yaml TEXT, model "
                    "provider: ollama, apiBase: <server>")


def plan_aider(base: str, scenarios: Sequence[str] = SCENARIOS["aider"],
               scratch: Path | None = None) -> Plan:
    exe = executable("aider")
    if not exe.exists():
        return not_installed("aider")
    home, work = fresh_dirs("aider", "", scratch)
    env = base_env(home)
    env.update({
        "OLLAMA_API_BASE": base,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "AIDER_ANALYTICS": "false",
        "AIDER_CHECK_UPDATE": "false",
    })
    version = tool_version([str(exe), "--version"], env)
    argvs = []
    for i, text in enumerate(TURNS, 1):
        argv = [str(exe), "--model", f"ollama_chat/{CHAT_MODEL}", "--message", text,
                "--yes-always", "--no-git", "--no-check-update", "--no-show-release-notes",
                "--analytics-disable", "--no-pretty", "--no-fancy-input"]
        if i > 1:
            argv.append("--restore-chat-history")
        argvs.append(argv)
    return Plan("aider", True, version, [Scenario("aider", "", env, work, argvs)],
                how="aider --model ollama_chat/qwen2.5-coder:7b --message TEXT --yes-always "
                    "--no-git (turns 2-3 add --restore-chat-history), OLLAMA_API_BASE=<server>")


def plan_llm(base: str, scenarios: Sequence[str] = SCENARIOS["llm"],
             scratch: Path | None = None) -> Plan:
    exe = executable("llm")
    if not exe.exists():
        return not_installed("llm")
    home, work = fresh_dirs("llm", "", scratch)
    env = base_env(home)
    env.update({"OLLAMA_HOST": base, "LLM_USER_PATH": str(home / "llm")})
    version = tool_version([str(exe), "--version"], env)
    argvs = []
    for i, text in enumerate(TURNS, 1):
        first = ["-m", f"ollama/{CHAT_MODEL}"] if i == 1 else ["-c"]
        argvs.append([str(exe), *first, text])
    return Plan("llm", True, version, [Scenario("llm", "", env, work, argvs)],
                how="llm -m ollama/qwen2.5-coder:7b TEXT (llm-ollama 0.19 prefixes ids with "
                    "ollama/), then llm -c TEXT; OLLAMA_HOST=<server>")


PLANNERS: dict[str, Callable[..., Plan]] = {
    "claude-code": plan_claude,
    "codex": plan_codex,
    "continue-cn": plan_cn,
    "aider": plan_aider,
    "llm": plan_llm,
}
