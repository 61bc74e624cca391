"""Setting up and starting the desktop app: on a machine that cannot show it, `memstrata gui`
says what is missing (no display, a system library of Qt's platform plugin) and exits 1
instead of letting Qt abort the process; the one list of those libraries
(resources/qt-system-libs.txt) matches what the installed plugin needs, scripts/setup.sh
offers to install the missing ones, and the .deb depends on them. The README says how long
the tests take."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
linux_qt = pytest.mark.skipif(
    not sys.platform.startswith("linux") or importlib.util.find_spec("PySide6") is None
    or shutil.which("ldd") is None, reason="needs Linux, PySide6 and ldd")
DISPLAYS = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "QT_QPA_PLATFORM_PLUGIN_PATH",
            "XDG_SESSION_TYPE")


def gui(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`memstrata ARGS` in a real process, without the test run's display settings."""
    base = {k: v for k, v in os.environ.items() if k not in DISPLAYS}
    base["MEMSTRATA_HOME"] = str(tmp_path / "home")
    return subprocess.run([sys.executable, "-m", "memstrata_app", *args],
                          env={**base, **env}, capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


def qt() -> Any:
    from memstrata_app import qt_check

    return qt_check


def pyside() -> Path:
    spec = importlib.util.find_spec("PySide6")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


def plugin() -> Path:
    """The installed xcb platform plugin, the one Qt loads."""
    return pyside() / "Qt" / "plugins" / "platforms" / "libqxcb.so"


# --- the list ------------------------------------------------------------------------------
@linux_qt
def test_the_list_is_what_the_installed_xcb_plugin_needs():
    """Every system library Qt's own files ask for (the plugin and the Qt libraries ldd shows
    it loading) is listed with its package, and nothing else is: the list cannot drift."""
    listed = qt().system_libs()
    derived = qt().derive()
    assert sorted(listed) == derived, (
        f"resources/qt-system-libs.txt differs from the plugin's needs: missing "
        f"{sorted(set(derived) - set(listed))}, stale {sorted(set(listed) - set(derived))}")
    for must in ("libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1",
                 "libxkbcommon-x11.so.0", "libEGL.so.1", "libfontconfig.so.1"):
        assert must in listed


@linux_qt
def test_the_elf_reader_agrees_with_readelf():
    if shutil.which("readelf") is None:
        pytest.skip("needs readelf")
    out = subprocess.run(["readelf", "-d", str(plugin())], capture_output=True, text=True,
                         check=True).stdout
    expected = [line.split("[", 1)[1].rstrip("]") for line in out.splitlines()
                if "(NEEDED)" in line]
    assert qt().needed(plugin()) == expected and "libQt6Gui.so.6" in expected


@linux_qt
def test_each_package_is_the_one_that_holds_the_library():
    """Where the library is installed, dpkg says which package holds it: the list's."""
    if shutil.which("dpkg-query") is None:
        pytest.skip("needs dpkg")
    listed = qt().system_libs()
    checked = 0
    for name, where in qt().ldd(plugin()) or []:
        if name not in listed or where is None:
            continue
        owners = set()
        for path in {where, os.path.realpath(where), "/usr" + where}:
            out = subprocess.run(["dpkg-query", "-S", path], capture_output=True, text=True)
            owners |= {ln.split(":")[0] for ln in out.stdout.splitlines() if ":" in ln}
        if not owners:
            continue  # not from a package (a library built by hand)
        # Ubuntu 24.04's 64-bit time transition renamed some: libglib2.0-0t64
        assert {o.removesuffix("t64") for o in owners} & {listed[name]}, (name, owners)
        checked += 1
    assert checked >= 10


def test_the_message_names_each_library_its_package_and_the_command():
    text = qt().missing_message(["libxcb-icccm.so.4", "libxcb-keysyms.so.1",
                                     "libfoo.so.9"])
    assert "libxcb-icccm.so.4" in text and "(package libxcb-icccm4)" in text
    assert "libxcb-keysyms.so.1" in text and "(package libxcb-keysyms1)" in text
    assert "libfoo.so.9" in text and "no package known" in text
    if shutil.which("apt-get"):
        assert "apt-get install libxcb-icccm4 libxcb-keysyms1\n" in text
    assert "memstrata serve" in text


# --- memstrata gui -------------------------------------------------------------------------
@pytest.mark.parametrize("args", [("gui",), ()])
def test_gui_without_a_display_says_so_and_exits_1(tmp_path, args):
    if not sys.platform.startswith("linux"):
        pytest.skip("DISPLAY is Linux's")
    out = gui(tmp_path, *args)
    assert out.returncode == 1, out.stderr[-2000:]  # not -6: Qt's abort
    assert out.stderr.startswith("memstrata: error: no display: DISPLAY and WAYLAND_DISPLAY "
                                 "are not set")
    assert "memstrata serve" in out.stderr and "desktop session" in out.stderr
    assert "Traceback" not in out.stderr and "qt.qpa" not in out.stderr


@linux_qt
def test_gui_with_a_library_of_the_plugin_missing_names_it_and_exits_1(tmp_path):
    """A real plugin whose dependency cannot be found: the real xcb plugin, copied with one
    DT_NEEDED entry renamed to a library no machine has (the loader then cannot find it,
    as with an uninstalled package), loaded from QT_QPA_PLATFORM_PLUGIN_PATH as Qt would."""
    platforms = tmp_path / "qt" / "plugins" / "platforms"
    platforms.mkdir(parents=True)
    (tmp_path / "qt" / "lib").symlink_to(pyside() / "Qt" / "lib")  # its RUNPATH
    data = plugin().read_bytes()
    assert data.count(b"libxcb-cursor.so.0\0") == 1
    (platforms / "libqxcb.so").write_bytes(
        data.replace(b"libxcb-cursor.so.0\0", b"libxcb-cursxr.so.0\0"))
    out = gui(tmp_path, "gui", DISPLAY=":97", QT_QPA_PLATFORM_PLUGIN_PATH=str(platforms))
    assert out.returncode == 1, out.stderr[-2000:]
    assert out.stderr.startswith("memstrata: error: Qt's xcb platform plugin cannot load:")
    assert "libxcb-cursxr.so.0" in out.stderr and "no package known" in out.stderr
    assert "libxcb-cursor.so.0" not in out.stderr  # the one it found is not blamed
    assert "Traceback" not in out.stderr and "qt.qpa" not in out.stderr


@linux_qt
def test_gui_here_either_names_the_missing_libraries_or_the_missing_x_server(tmp_path):
    """On this machine as it is, with a display no X server answers: whichever of the two
    stands in the way is said, with the apt command for the libraries; never an abort."""
    if Path("/tmp/.X11-unix/X97").exists():
        pytest.skip("an X server is on :97")
    missing = qt().unresolved(plugin())
    out = gui(tmp_path, "gui", DISPLAY=":97")
    assert out.returncode == 1, out.stderr[-2000:]
    if missing:
        packages = list(dict.fromkeys(qt().system_libs()[m] for m in missing))
        for m in missing:
            assert m in out.stderr
        if shutil.which("apt-get"):
            assert f"apt-get install {' '.join(packages)}" in out.stderr
    else:
        assert "no X server answers on DISPLAY=:97" in out.stderr


@linux_qt
def test_offscreen_needs_no_display_and_a_wayland_session_falls_back_to_xcb():
    assert qt().platforms({"QT_QPA_PLATFORM": "offscreen"}) == ["offscreen"]
    assert qt().platform_problem("offscreen", {}) is None
    assert qt().gui_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    assert qt().platforms({"WAYLAND_DISPLAY": "wayland-0"}) == ["wayland", "xcb"]
    assert qt().platforms({"QT_QPA_PLATFORM": "xcb:dpi=96;wayland"}) == ["xcb", "wayland"]
    assert qt().gui_problem({}) == qt().NO_DISPLAY


# --- scripts/setup.sh: asking before apt-get ------------------------------------------------
def setup_tree(tmp_path: Path, uid: str = "1000") -> tuple[Path, dict[str, str], Path]:
    """A copy of setup.sh with a stand-in venv whose check reports two libraries missing
    (until installed), and stand-ins for uname, id, sudo and apt-get that log their calls."""
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    for f in ("scripts/setup.sh", "scripts/python-venv.sh", "scripts/build_static_embedder.py",
              "scripts/build_onnx_embedder.py", "pyproject.toml"):
        shutil.copy(ROOT / f, tree / f)
    bin_ = tree / ".venv" / "bin"
    bin_.mkdir(parents=True)
    log = tmp_path / "calls.log"
    log.write_text("")
    installed = tmp_path / "installed"
    (bin_ / "python").write_text(
        "#!/bin/sh\n"
        'if [ "$2" = memstrata_app.qt_check ] && [ "$3" = --missing ]; then\n'
        f'  [ -f {installed} ] && exit 0\n'
        "  printf 'libxcb-icccm.so.4 libxcb-icccm4\\nlibxcb-keysyms.so.1 libxcb-keysyms1\\n'\n"
        "fi\nexit 0\n")
    (bin_ / "memstrata").write_text("#!/bin/sh\n")
    fake = tmp_path / "fakebin"
    fake.mkdir()
    scripts = {
        "uname": "echo Linux",
        "id": f"echo {uid}",
        "sudo": f'echo "sudo $*" >> {log}; exec "$@"',
        "apt-get": f'echo "apt-get $*" >> {log}; [ "$1" = install ] && touch {installed}; exit 0',
    }
    for name, body in scripts.items():
        (fake / name).write_text(f"#!/bin/sh\n{body}\n")
    for f in [*fake.iterdir(), bin_ / "python", bin_ / "memstrata"]:
        f.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:/usr/bin:/bin"}
    return tree, env, log


def test_setup_without_a_terminal_says_what_to_run_and_installs_nothing(tmp_path):
    tree, env, log = setup_tree(tmp_path)
    out = subprocess.run(["bash", "scripts/setup.sh"], cwd=tree, env=env, capture_output=True,
                         text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "libxcb-icccm.so.4  (package libxcb-icccm4)" in out.stdout
    assert "libxcb-keysyms.so.1  (package libxcb-keysyms1)" in out.stdout
    assert ("not installing without asking: run scripts/setup.sh --yes (or scripts/run.sh "
            "--yes), or: "
            "sudo apt-get install libxcb-icccm4 libxcb-keysyms1") in out.stdout
    assert log.read_text() == ""


@pytest.mark.parametrize("uid", ["1000", "0"])
def test_setup_yes_installs_every_missing_package(tmp_path, uid):
    tree, env, log = setup_tree(tmp_path, uid)
    out = subprocess.run(["bash", "scripts/setup.sh", "--yes"], cwd=tree, env=env,
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert out.returncode == 0, out.stderr
    calls = log.read_text().splitlines()
    install = "apt-get install -y -qq libxcb-icccm4 libxcb-keysyms1"
    assert install in calls and "apt-get update -qq" in calls
    assert any(c.startswith("sudo ") for c in calls) == (uid != "0")
    assert "still missing" not in out.stdout


@pytest.mark.parametrize(("answer", "installs"), [("\n", True), ("y\n", True), ("n\n", False)])
def test_setup_on_a_terminal_asks_first(tmp_path, answer, installs):
    tree, env, log = setup_tree(tmp_path)
    primary, secondary = os.openpty()
    try:
        os.write(primary, answer.encode())
        out = subprocess.run(["bash", "scripts/setup.sh"], cwd=tree, env=env, stdin=secondary,
                             capture_output=True, text=True, timeout=60)
    finally:
        os.close(primary)
        os.close(secondary)
    assert out.returncode == 0, out.stderr
    assert "Install them now (sudo apt-get install libxcb-icccm4 libxcb-keysyms1)? [Y/n]" in (
        out.stdout + out.stderr)
    assert ("apt-get install -y -qq libxcb-icccm4 libxcb-keysyms1" in log.read_text()) == installs


def test_run_sh_yes_installs_without_asking_and_passes_the_rest_on(tmp_path):
    tree, env, log = setup_tree(tmp_path)
    shutil.copy(ROOT / "scripts/run.sh", tree / "scripts/run.sh")
    (tree / ".venv" / "bin" / "memstrata").write_text(f'#!/bin/sh\necho "memstrata $*" >> {log}\n')
    out = subprocess.run(["bash", "scripts/run.sh", "--yes", "gui", "--tray"], cwd=tree, env=env,
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert out.returncode == 0, out.stderr
    calls = log.read_text().splitlines()
    assert "apt-get install -y -qq libxcb-icccm4 libxcb-keysyms1" in calls
    assert calls[-1] == "memstrata gui --tray"


# --- the .deb ------------------------------------------------------------------------------
# --- scripts/setup.sh: Python's venv module (Debian ships it apart) ------------------------
def no_venv_python(tmp_path: Path, env: dict[str, str], log: Path) -> dict[str, str]:
    """A stand-in python3 (3.11) whose venv module is missing until apt-get installs it."""
    fake = tmp_path / "fakebin"
    has = tmp_path / "venv-installed"
    (fake / "python3").write_text(
        "#!/bin/sh\n"
        f'echo "python3 $*" >> {log}\n'
        'case "$2" in\n'
        f"  *ensurepip*) [ -f {has} ] ;;\n"
        "  *print*) echo 3.11 ;;\n"
        "  *) exit 0 ;;\n"
        "esac\n")
    (fake / "python3").chmod(0o755)
    (fake / "apt-get").write_text(
        f'#!/bin/sh\necho "apt-get $*" >> {log}\n'
        f'case "$*" in *python3.11-venv*) touch {has} ;; esac\nexit 0\n')
    return {**env, "PYTHON": str(fake / "python3")}


def test_setup_without_pythons_venv_says_what_to_install_and_stops(tmp_path):
    tree, env, log = setup_tree(tmp_path)
    env = no_venv_python(tmp_path, env, log)
    out = subprocess.run(["bash", "scripts/setup.sh"], cwd=tree, env=env, capture_output=True,
                         text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert out.returncode == 1
    assert ("Python's venv module is missing: run sudo apt-get install python3.11-venv (or"
            " scripts/setup.sh --yes), then this again") in out.stderr
    assert "apt-get" not in log.read_text() and "-m venv" not in log.read_text()


def test_setup_yes_installs_pythons_venv_and_remakes_a_venv_left_without_pip(tmp_path):
    tree, env, log = setup_tree(tmp_path)
    env = no_venv_python(tmp_path, env, log)
    (tree / ".venv" / "bin" / "python").write_text(  # a .venv made without ensurepip: no pip
        '#!/bin/sh\n[ "$2" = pip ] && { echo "No module named pip" >&2; exit 1; }\nexit 0\n')
    out = subprocess.run(["bash", "scripts/setup.sh", "--yes"], cwd=tree, env=env,
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    calls = log.read_text().splitlines()
    assert any("install -y -qq python3.11-venv" in c for c in calls), out.stdout
    assert "python3 -m venv --clear .venv" in calls
    assert "has no pip" in out.stdout


def test_the_deb_depends_on_every_package_of_the_list(tmp_path):
    if shutil.which("dpkg-deb") is None or not sys.platform.startswith("linux"):
        pytest.skip("needs dpkg-deb")
    tree = tmp_path / "tree"
    for f in ("installer/linux/package.sh", "memstrata_app/__init__.py",
              "memstrata_app/resources/qt-system-libs.txt"):
        (tree / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / f, tree / f)
    shutil.copytree(ROOT / "resources", tree / "resources")
    bundle = tree / "dist" / "memstrata"
    bundle.mkdir(parents=True)
    shutil.copy("/bin/true", bundle / "memstrata")  # a real ELF: its glibc floor is read
    subprocess.run(["bash", "installer/linux/package.sh", "--no-tar", "--no-appdir"], cwd=tree,
                   env={**os.environ, "DEB_COMPRESS": "none"}, check=True, capture_output=True,
                   timeout=120)
    (deb,) = (tree / "dist" / "installer").glob("*.deb")
    depends = subprocess.run(["dpkg-deb", "-f", str(deb), "Depends"], capture_output=True,
                             text=True, check=True).stdout.strip().split(", ")
    assert depends[0].startswith("libc6 (>= ")
    packages = [p for p in dict.fromkeys(qt().system_libs().values()) if p != "libc6"]
    assert depends[1:] == packages


def test_the_readme_says_how_long_the_full_test_run_takes():
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme[readme.index("## Run the tests"):]
    section = section[:section.index("\n## ", 1)]
    assert "./scripts/test.sh" in section and "about 20 minutes on 2 CPU cores" in section
