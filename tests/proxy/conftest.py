"""Endpoint fixtures: an Ollama stand-in upstream and our endpoint before it, on real sockets."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import anthropic
import httpx
import ollama
import openai
import pytest

from memstrata_app.access import load_token
from memstrata_app.bench.standin import OllamaStandIn
from memstrata_app.proxy import EndpointServer
from memstrata_app.settings import Settings


@pytest.fixture
def settings() -> Settings:
    """Defaults, not saved anywhere."""
    return Settings(None)


@pytest.fixture(scope="session")
def standin_server() -> Iterator[OllamaStandIn]:
    with OllamaStandIn() as up:
        yield up


@pytest.fixture
def upstream(standin_server: OllamaStandIn) -> OllamaStandIn:
    """The stand-in, with no recorded requests, no delays and its models as at start."""
    standin_server.clear()
    standin_server.reset()
    standin_server.chunk_delay = standin_server.response_delay = 0.0
    return standin_server


@pytest.fixture(scope="module")
def shared_endpoint(tmp_path_factory: pytest.TempPathFactory, local_embedder,
                    standin_server: OllamaStandIn) -> Iterator[EndpointServer]:
    """One endpoint for a module's checks that store nothing (bad input, refused requests)."""
    from memstrata_app.engine import MemoryEngine

    eng = MemoryEngine.open(tmp_path_factory.mktemp("shared") / "ledger.db",
                            embedder=local_embedder)
    server = EndpointServer(eng, Settings(None), port=0, upstream=standin_server.url)
    server.start()
    yield server
    server.stop()
    eng.close()


def token_headers() -> dict[str, str]:
    """What the management API asks for: this (test) install's access token."""
    return {"Authorization": f"Bearer {load_token()}"}


@pytest.fixture
def shared_http(shared_endpoint: EndpointServer, upstream: OllamaStandIn
                ) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=shared_endpoint.url, timeout=30,
                      headers=token_headers()) as client:
        yield client


@pytest.fixture
def endpoint(engine, settings, upstream) -> Iterator[EndpointServer]:
    """Our endpoint on a free loopback port, forwarding to the stand-in."""
    server = EndpointServer(engine, settings, port=0, upstream=upstream.url)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def http(endpoint) -> Iterator[httpx.Client]:
    """A client of the endpoint that holds the install's token (as the app and CLI do)."""
    with httpx.Client(base_url=endpoint.url, timeout=30, headers=token_headers()) as client:
        yield client


@pytest.fixture
def ollama_client(endpoint) -> ollama.Client:
    return ollama.Client(host=endpoint.url)


@pytest.fixture
def openai_client(endpoint) -> openai.OpenAI:
    return openai.OpenAI(base_url=endpoint.url + "/v1", api_key="sk-test-secret", max_retries=0)


@pytest.fixture
def anthropic_client(endpoint) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=endpoint.url, api_key="sk-ant-test-secret",
                               max_retries=0)


def closed_port() -> int:
    """A loopback port with nothing listening on it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
