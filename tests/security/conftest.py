"""The endpoint fixtures of tests/proxy (stand-in upstream, endpoint, clients), reused here."""

from tests.proxy.conftest import (  # noqa: F401  (pytest finds fixtures by name)
    endpoint,
    http,
    settings,
    shared_endpoint,
    shared_http,
    standin_server,
    upstream,
)
