"""Everything MemStrata writes in its data folder is the owner's alone: the folder 0700, each
file 0600 from the moment it exists, whatever the umask (docs/SECURITY.md, Local access)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata_app import access, paths
from memstrata_app.cli.remote import write_runtime_file
from memstrata_app.engine.ledger.files import write_private
from memstrata_app.settings import Settings
from tests.test_cli import CLIENT

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")


def loose_modes(folder: Path) -> dict[str, str]:
    """Every entry under `folder` (itself too) that group or others may use, with its mode."""
    found = {}
    for p in [folder, *folder.rglob("*")]:
        m = stat.S_IMODE(p.lstat().st_mode)
        if m & 0o077:
            found[str(p.relative_to(folder))] = f"{m:04o}"
    return found


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The widest umask there is: a file's mode is then only what its writer asked for."""
    old = os.umask(0)
    yield
    os.umask(old)


def test_each_file_the_app_writes_is_owner_only_whatever_the_umask(open_umask: None) -> None:
    home = paths.data_dir()
    write_runtime_file(11500, paths.db_path())
    s = Settings.load()
    s.set("endpoint_port", 11500)
    s.save()
    s.save()  # replaced, not rewritten in place
    access.load_token()
    assert json.loads((home / "endpoint.json").read_text())["port"] == 11500
    assert Settings.load()["endpoint_port"] == 11500
    assert sorted(p.name for p in home.iterdir()) == ["endpoint.json", "settings.json", "token"]
    assert loose_modes(home) == {}


def test_an_older_installs_open_settings_file_is_made_private(open_umask: None) -> None:
    target = paths.settings_path()
    target.write_text("{}")
    os.chmod(target, 0o644)
    Settings.load()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_private_write_replaces_whole_and_leaves_nothing_behind(tmp_path: Path,
                                                                  open_umask: None) -> None:
    target = tmp_path / "f.json"
    target.write_text("old")
    os.chmod(target, 0o644)
    write_private(target, b"new")
    assert target.read_bytes() == b"new" and stat.S_IMODE(target.stat().st_mode) == 0o600
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(OSError):
        write_private(tmp_path / "dir.json", b"x")  # cannot replace a folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.json", "f.json"]


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_running_serve_leaves_only_owner_only_files_and_the_cli_proves_it(
        tmp_path: Path) -> None:
    """A real `memstrata serve` (umask 022, as a login shell has): after it has written its
    ledger, token and runtime file, and the CLI has stored a fact through it after the
    handshake, nothing in the data folder is open to other users."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    home = tmp_path / "home"
    env = {**os.environ, "MEMSTRATA_HOME": str(home), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    env.pop("MEMSTRATA_SPACE", None)
    server = subprocess.Popen([sys.executable, "-m", "memstrata_app", "serve", "--port",
                               str(port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, umask=0o022)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/memstrata/status", timeout=1)
                break
            except OSError:
                assert server.poll() is None, "serve exited"
                time.sleep(0.3)
        cli = subprocess.run(
            [sys.executable, "-c", CLIENT, "ingest", "The billing api port is 7070."],
            env=env, capture_output=True, text=True, timeout=240, umask=0o022)
        # through the endpoint (no model loaded here), without a warning about the handshake
        assert "RESULT 0 []" in cli.stderr and "warning" not in cli.stderr, cli.stderr
        assert "7070" in cli.stdout
        assert (home / "endpoint.json").exists() and (home / "memstrata.db-wal").exists()
        assert loose_modes(home) == {}
    finally:
        server.terminate()
        server.wait(timeout=60)
