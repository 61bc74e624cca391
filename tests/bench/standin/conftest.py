"""The stand-in fixtures of tests/proxy (one stand-in per session, reset for each test)."""

from tests.proxy.conftest import (  # noqa: F401  (pytest finds fixtures by name)
    standin_server,
    upstream,
)
