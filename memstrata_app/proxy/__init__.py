"""Localhost endpoint (Ollama-native, OpenAI and Anthropic APIs with memory) and MCP server."""

from .app import create_app
from .server import EndpointError, EndpointServer, serve_forever

__all__ = ["EndpointError", "EndpointServer", "create_app", "serve_forever"]
