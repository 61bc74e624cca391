"""A real PostgreSQL server for tests: `initdb` in a temporary folder, a free loopback port.

The server binaries come from the distribution's packages (`scripts/postgres.sh` installs
them; `.ci/run` calls it through scripts/test.sh). Where none can be found the tests that
need one skip, saying so. initdb refuses to run as root: as root the cluster belongs to the
`postgres` user the package creates, and the server runs as that user.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path


def find_bindir() -> Path | None:
    """The folder holding initdb/pg_ctl: $PG_BINDIR, then PATH, then Debian's layout."""
    env = os.environ.get("PG_BINDIR")
    if env and (Path(env) / "initdb").exists():
        return Path(env)
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(d) / "initdb").exists():
            return Path(d)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """One throwaway cluster; `new_database()` gives each test its own database."""

    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.port = _free_port()
        self.root = Path(tempfile.mkdtemp(prefix="memstrata-pg-"))
        self.data = self.root / "data"
        self.user: str | None = None
        if os.getuid() == 0:  # initdb won't run as root
            try:
                self.user = pwd.getpwnam("postgres").pw_name
            except KeyError:
                self.user = None
            if self.user is None:
                raise RuntimeError("running as root and no 'postgres' user exists")
            pw = pwd.getpwnam(self.user)
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust",
                  "-E", "UTF8", "--no-sync", "--locale=C.UTF-8")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w",
                  "-t", "60", "-o",
                  f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} "
                  "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
                  "-c max_connections=200 -c deadlock_timeout=50ms", "start")

    def _run(self, tool: str, *args: str) -> None:
        cmd = [str(self.bindir / tool), *args]
        if self.user is not None:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=self.root)
        if r.returncode != 0:
            raise RuntimeError(f"{tool} failed ({r.returncode}): {r.stderr.strip()[-2000:]}")

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.dsn(), autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return self.dsn(name)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def start_server() -> tuple[PostgresServer | None, str]:
    """A running server, or None and why not."""
    bindir = find_bindir()
    if bindir is None:
        return None, ("no PostgreSQL server binaries (initdb) found: run scripts/postgres.sh "
                      "(Debian/Ubuntu: apt-get install postgresql) or set PG_BINDIR")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return None, "psycopg is not installed (pip install 'psycopg[binary]')"
    try:
        return PostgresServer(bindir), ""
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        return None, f"could not start PostgreSQL from {bindir}: {e}"


@contextlib.contextmanager
def running() -> Iterator[PostgresServer | None]:
    server, _why = start_server()
    try:
        yield server
    finally:
        if server is not None:
            server.stop()


def wait_until(cond, timeout: float = 5.0, step: float = 0.01) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(step)
    return bool(cond())
