"""How a coding tool is pointed at the local endpoint: the base URL of each API it speaks and the
configuration each documented tool needs, for the app's "Connect a tool" helper.

docs/CONNECT.md shows the same snippets with the default port; tests/gui/test_connect.py fails
when the two differ, so a change is made here and in the doc together."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_PORT = 11435
HOST = "127.0.0.1"


@dataclass(frozen=True)
class BaseUrl:
    """One API the endpoint speaks: its name, the address a tool is given, and a note."""

    api: str
    address: str
    note: str


def base_urls(port: int = DEFAULT_PORT) -> list[BaseUrl]:
    """Per API the address to give a tool (the endpoint on `port`)."""
    root = f"http://{HOST}:{port}"
    return [
        BaseUrl("Ollama native", root,
                "/api/chat and /api/generate: where a tool would use Ollama's port 11434"),
        BaseUrl("OpenAI", f"{root}/v1",
                "chat completions and the Responses API; any API key"),
        BaseUrl("Anthropic", root,
                "the Messages API (/v1/messages): the base URL without /v1"),
        BaseUrl("MCP", "memstrata mcp",
                "a stdio server the tool starts itself (no URL): remember, recall, history"),
    ]


@dataclass(frozen=True)
class ToolSetup:
    """A tool: where its setting lives, the snippet (with `{base}` for the endpoint's root URL)
    and the language it is written in."""

    tool: str
    where: str
    template: str
    language: str = "sh"
    then: str = ""  # a second snippet for the shell, where the tool needs one too

    def snippet(self, port: int = DEFAULT_PORT) -> str:
        return self.template.replace("{base}", f"http://{HOST}:{port}")

    def shell(self, port: int = DEFAULT_PORT) -> str:
        return self.then.replace("{base}", f"http://{HOST}:{port}")

    def text(self, port: int = DEFAULT_PORT) -> str:
        """Everything to copy: the snippet, and the shell lines after it."""
        return self.snippet(port) + (f"\n{self.shell(port)}" if self.then else "")


TOOLS: tuple[ToolSetup, ...] = (
    ToolSetup("Claude Code", "the shell that starts claude (Anthropic Messages API)",
              "export ANTHROPIC_BASE_URL={base}\n"
              "export ANTHROPIC_AUTH_TOKEN=ollama   # required by Claude Code, ignored locally\n"
              'export ANTHROPIC_API_KEY=""\n'
              "claude --model qwen3-coder\n"),
    ToolSetup("Codex CLI", "~/.codex/config.toml (OpenAI Responses API)",
              'model = "qwen2.5-coder:7b"\n'
              'model_provider = "memstrata"\n'
              "\n"
              "[model_providers.memstrata]\n"
              'name = "MemStrata"\n'
              'base_url = "{base}/v1"\n'
              'env_key = "MEMSTRATA_API_KEY"\n'
              'wire_api = "responses"\n', "toml",
              then="export MEMSTRATA_API_KEY=local   # any value; the endpoint does not check it\n"
                   "codex                            # or: codex exec \"…\", codex exec resume "
                   "--last \"…\"\n"),
    ToolSetup("Continue (cn, VS Code, JetBrains)", "~/.continue/config.yaml",
              "models:\n"
              "  - name: Qwen2.5 Coder (with memory)\n"
              "    provider: ollama\n"
              "    model: qwen2.5-coder:7b\n"
              "    apiBase: {base}\n", "yaml"),
    ToolSetup("Aider", "the shell that starts aider (Ollama native API)",
              "export OLLAMA_API_BASE={base}\n"
              "aider --model ollama_chat/qwen2.5-coder:7b\n"),
    ToolSetup("llm (with llm-ollama)", "the command line: for this command only, not the "
              "whole session (MemStrata reads OLLAMA_HOST to find Ollama)",
              'OLLAMA_HOST={base} llm -m qwen2.5-coder:7b "Which port does the api use?"\n'),
    ToolSetup("Claude Code, over MCP", "a terminal, once (the tool starts the server itself)",
              "claude mcp add memstrata -- memstrata mcp\n"),
    ToolSetup("Cursor, over MCP", "~/.cursor/mcp.json (Claude Desktop: the same shape)",
              '{ "mcpServers": { "memstrata": { "command": "memstrata", "args": ["mcp"] } } }\n',
              "json"),
)
