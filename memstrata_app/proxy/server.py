"""Run the endpoint: in a background thread for the app (EndpointServer) or in the foreground."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import logging
import socket
import sys
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import uvicorn
from starlette.types import ASGIApp

from ..settings import start_extraction
from . import logthrottle
from .app import create_app
from .connections import guarded_protocol
from .limits import DEFAULT_LIMITS, Limits
from .memory import warm_up_in_background
from .security import is_loopback_host

log = logging.getLogger(__name__)


class EndpointError(RuntimeError):
    """The endpoint could not start; the message says why and what to do."""


def bind_loopback(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (0 = any free port); a clear error when the port is busy."""
    if not is_loopback_host(host if ":" not in host else f"[{host}]"):
        raise EndpointError(f"refusing to listen on {host!r}: the endpoint serves this machine "
                            "only, on 127.0.0.1 (or ::1)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP so asyncio sets TCP_NODELAY on accepted connections (else Nagle adds
    # ~40 ms to every streamed chunk after the first).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if sys.platform != "win32":  # on Windows this flag would let two servers share a port
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as e:
        sock.close()
        if e.errno in (errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", -1), errno.EACCES):
            raise EndpointError(
                f"port {port} on {host} is already in use (is another MemStrata or Ollama "
                "running there?); stop it or choose another endpoint_port") from None
        raise EndpointError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    return sock


def raise_open_files_limit(wanted: int = 4096) -> int:
    """Lift this process's soft open-files limit toward `wanted` (macOS starts at 256); the
    limit now in force (0 where unknown)."""
    try:
        import resource
    except ImportError:  # Windows: no such per-process limit to raise
        return 0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    return 0 if soft == resource.RLIM_INFINITY else int(soft)


def server_config(app: ASGIApp, limits: Limits, log_level: str) -> uvicorn.Config:
    """uvicorn's settings for one of our servers: guarded connections under `limits`.

    Each client connection can hold two descriptors (its socket and one upstream), so the
    connection cap stays within half the open-files limit."""
    files = raise_open_files_limit()
    if files and limits.max_connections > (files - 64) // 2:
        limits = dataclasses.replace(limits, max_connections=max(16, (files - 64) // 2))
        log.info("open-files limit %d: at most %d client connections", files,
                 limits.max_connections)
    config = uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="on",
                            http=guarded_protocol(limits),
                            h11_max_incomplete_event_size=limits.max_header_bytes,
                            timeout_keep_alive=limits.keep_alive_timeout,
                            timeout_graceful_shutdown=3)
    logthrottle.install()  # after uvicorn has configured its loggers
    return config


def check_not_self(upstream_url: str, host: str, port: int) -> None:
    """Refuse an upstream that is this endpoint itself (e.g. OLLAMA_HOST set to our port)."""
    u = urlsplit(upstream_url)
    if port and u.port == port and is_loopback_host(u.hostname or "") and is_loopback_host(host):
        raise EndpointError(
            f"the upstream {upstream_url} is this endpoint itself (port {port}); set ollama_url "
            "or OLLAMA_HOST to Ollama's own address, e.g. http://127.0.0.1:11434")


class ServerThread:
    """uvicorn serving one ASGI app on a pre-bound socket, in a daemon thread."""

    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0, name: str = "http"):
        self.app, self.host, self.requested_port, self.name = app, host, port, name
        self.port: int | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return bool(self._thread and self._thread.is_alive() and self._server
                    and self._server.started and not self._server.should_exit)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port if self.port is not None else self.requested_port}"

    def start(self, timeout: float = 15.0) -> None:
        if self.running:
            return
        sock = bind_loopback(self.host, self.requested_port)
        self.port = sock.getsockname()[1]
        limits = getattr(getattr(self.app, "state", None), "limits", DEFAULT_LIMITS)
        server = self._server = uvicorn.Server(server_config(self.app, limits, "warning"))
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                                        name=f"{self.name}-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                sock.close()
                raise EndpointError(f"the {self.name} server on {self.url} did not start")
            time.sleep(0.01)

    def stop(self, timeout: float = 10.0) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("%s server did not stop within %.0f s", self.name, timeout)
        self._thread = None
        self._server = None


class EndpointServer:
    """The local endpoint on 127.0.0.1 in a background thread; memory switchable at run time."""

    def __init__(self, engine: Any, settings: Any, host: str = "127.0.0.1",
                 port: int | None = None, *, upstream: str | None = None,
                 limits: Limits = DEFAULT_LIMITS):
        self.engine, self.settings = engine, settings
        self.app = create_app(engine, settings, upstream=upstream, limits=limits)
        port = int(settings.get("endpoint_port")) if port is None else port
        self._thread = ServerThread(self.app, host, port, name="endpoint")

    def start(self) -> None:
        """Listen, then return; raises EndpointError when the port is busy."""
        check_not_self(self.upstream_url, self._thread.host, self._thread.requested_port)
        self._thread.start()
        warm_up_in_background(self.engine)
        log.info("endpoint listening on %s, upstream %s", self.url, self.upstream_url)

    def stop(self) -> None:
        self._thread.stop()

    @property
    def running(self) -> bool:
        return self._thread.running

    @property
    def url(self) -> str:
        return self._thread.url

    @property
    def upstream_url(self) -> str:
        return self.app.state.upstream.base_url

    @property
    def memory_enabled(self) -> bool:
        return bool(self.app.state.memory.enabled)

    @memory_enabled.setter
    def memory_enabled(self, value: bool) -> None:
        self.app.state.memory.enabled = bool(value)

    def __enter__(self) -> EndpointServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_forever(engine: Any, settings: Any, host: str = "127.0.0.1",
                  port: int | None = None) -> None:
    """`memstrata serve`: run the endpoint in the foreground until Ctrl-C."""
    app = create_app(engine, settings)
    port = int(settings.get("endpoint_port")) if port is None else port
    check_not_self(app.state.upstream.base_url, host, port)
    sock = bind_loopback(host, port)
    log.info("MemStrata endpoint on http://%s:%d, upstream %s, memory %s", host, port,
             app.state.upstream.base_url, "on" if app.state.memory.enabled else "off")
    config = server_config(app, app.state.limits, "info")
    warm_up_in_background(engine)
    start_extraction(engine, settings)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises Ctrl-C after shutting down
        uvicorn.Server(config).run(sockets=[sock])
    log.info("MemStrata endpoint stopped")
