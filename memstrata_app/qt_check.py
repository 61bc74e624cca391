"""Before the desktop app creates its QApplication: is there a display to open a window on,
and do the system libraries of the Qt platform plugin it will load resolve?

Qt answers neither question politely: without a display, or with one library of its xcb
plugin missing, it aborts the process (SIGABRT, a core dump) and names only the first
library. This module asks first, without importing Qt, and says everything that is missing
and how to install it (`memstrata gui` prints that and exits 1). The libraries and their
Debian packages are kept in one place, resources/qt-system-libs.txt, which scripts/setup.sh
and installer/linux/package.sh read too.

    python -m memstrata_app.qt_check            what `memstrata gui` would say (exit 1 if so)
    python -m memstrata_app.qt_check --missing  "soname package" of each unresolved library
                                                of the xcb plugin ("?": no package known)
    python -m memstrata_app.qt_check --derive   the system libraries Qt's own files ask for
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

LIBS_FILE = Path(__file__).resolve().parent / "resources" / "qt-system-libs.txt"
# platforms that draw nowhere on screen: no display needed
HEADLESS = frozenset({"offscreen", "minimal", "minimalegl", "vnc", "linuxfb", "eglfs",
                      "vkkhrdisplay"})
# the loader itself and the kernel's virtual objects: never a package to install
_NOT_A_LIBRARY = ("ld-linux", "linux-vdso", "linux-gate")


def system_libs(path: Path = LIBS_FILE) -> dict[str, str]:
    """soname → Debian package, from resources/qt-system-libs.txt (file order)."""
    out: dict[str, str] = {}
    for line in path.read_text("utf-8").splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) >= 2:
            out[words[0]] = words[1]
    return out


def pyside_dir() -> Path | None:
    """The installed PySide6 package folder, found without importing it (None: not there)."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def qt_lib_dirs() -> list[Path]:
    """Where the Qt libraries that come with the app live (PySide6's, a frozen bundle's)."""
    dirs = []
    pyside = pyside_dir()
    if pyside is not None:
        dirs += [pyside / "Qt" / "lib", pyside]
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        dirs.append(Path(bundle))
    return [d for d in dirs if d.is_dir()]


def platforms(env: Mapping[str, str]) -> list[str]:
    """The platform plugins Qt will try, in order: QT_QPA_PLATFORM's list ("wayland;xcb",
    options after ':' dropped), else wayland then xcb in a Wayland session, else xcb."""
    given = [p.split(":", 1)[0].strip().lower()
             for p in env.get("QT_QPA_PLATFORM", "").split(";")]
    given = [p for p in given if p]
    if given:
        return given
    wayland = env.get("WAYLAND_DISPLAY") or env.get("XDG_SESSION_TYPE", "").lower() == "wayland"
    return ["wayland", "xcb"] if wayland else ["xcb"]


def plugin_file(name: str, env: Mapping[str, str]) -> Path | None:
    """The plugin file Qt loads for the platform `name`: from QT_QPA_PLATFORM_PLUGIN_PATH
    first (as Qt does), else PySide6's Qt/plugins/platforms."""
    dirs = [Path(d) for d in env.get("QT_QPA_PLATFORM_PLUGIN_PATH", "").split(os.pathsep) if d]
    pyside = pyside_dir()
    if pyside is not None:
        dirs.append(pyside / "Qt" / "plugins" / "platforms")
    stems = [f"libq{name}"] + (["libqwayland-generic"] if name == "wayland" else [])
    for d in dirs:
        for stem in stems:
            f = d / f"{stem}.so"
            if f.is_file():
                return f
    return None


def ldd(path: Path, env: Mapping[str, str] | None = None) -> list[tuple[str, str | None]] | None:
    """(soname, resolved path or None when not found) of every library the dynamic loader
    would load for `path`, as `ldd` lists them; None when there is no `ldd` to ask."""
    tool = shutil.which("ldd")
    if tool is None:
        return None
    try:
        out = subprocess.run([tool, str(path)], capture_output=True, text=True, timeout=30,
                             env=dict(env) if env is not None else None, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    found: dict[str, str | None] = {}
    for line in out.stdout.splitlines():
        name, arrow, where = line.strip().partition("=>")
        if not arrow:
            continue
        name, where = name.strip(), where.strip()
        target = None if where.startswith("not found") else where.split(" (", 1)[0].strip()
        if found.get(name) is None:
            found[name] = target or None
    return list(found.items())


def loadable(soname: str) -> bool:
    """Whether the dynamic loader finds and loads `soname` (ctypes.CDLL)."""
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def unresolved(plugin: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """The sonames the loader cannot find for `plugin`, less those the app ships itself.
    Without `ldd`, each system library of the list is loaded instead (ctypes)."""
    listed = ldd(plugin, env)
    if listed is None:
        missing = [s for s in system_libs() if not loadable(s)]
    else:
        missing = [name for name, where in listed if where is None]
    shipped = qt_lib_dirs()
    return [m for m in missing if not any((d / m).exists() for d in shipped)]


def needed(path: Path) -> list[str]:
    """The DT_NEEDED entries of an ELF shared object: the libraries it asks the loader for,
    read from its dynamic section (what `readelf -d` lists as NEEDED)."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF":
        raise ValueError(f"{path}: not an ELF file")
    wide, end = data[4] == 2, "<" if data[5] == 1 else ">"
    if wide:
        phoff = struct.unpack_from(end + "Q", data, 0x20)[0]
        phentsize, phnum = struct.unpack_from(end + "HH", data, 0x36)
    else:
        phoff = struct.unpack_from(end + "I", data, 0x1C)[0]
        phentsize, phnum = struct.unpack_from(end + "HH", data, 0x2A)
    loads, dynamic = [], None
    for i in range(phnum):
        at = phoff + i * phentsize
        if wide:
            kind, _flags, offset, vaddr, _paddr, filesz = struct.unpack_from(
                end + "IIQQQQ", data, at)
        else:
            kind, offset, vaddr, _paddr, filesz = struct.unpack_from(end + "IIIII", data, at)
        if kind == 1:  # PT_LOAD
            loads.append((vaddr, offset, filesz))
        elif kind == 2:  # PT_DYNAMIC
            dynamic = (offset, filesz)
    if dynamic is None:
        return []
    entry = struct.Struct(end + ("qQ" if wide else "iI"))
    names, strtab = [], None
    for at in range(dynamic[0], dynamic[0] + dynamic[1], entry.size):
        tag, value = entry.unpack_from(data, at)
        if tag == 0:
            break
        if tag == 1:  # DT_NEEDED: an offset into the string table
            names.append(value)
        elif tag == 5:  # DT_STRTAB: the string table's address
            strtab = next((value - v + o for v, o, n in loads if v <= value < v + n), None)
    if strtab is None:
        return []
    return [data[strtab + n:data.index(b"\0", strtab + n)].decode() for n in names]


def derive(plugin: Path | None = None) -> list[str]:
    """The system libraries Qt's own files ask for: the DT_NEEDED entries of the xcb plugin
    and of each Qt library `ldd` shows it loading from PySide6, less what PySide6 ships."""
    plugin = plugin or plugin_file("xcb", {})
    if plugin is None:
        raise RuntimeError("PySide6's xcb platform plugin is not installed")
    shipped = qt_lib_dirs()
    own = [plugin] + [Path(where) for _name, where in (ldd(plugin) or [])
                      if where and any(Path(where).resolve().is_relative_to(d.resolve())
                                       for d in shipped)]
    names = {n for f in own for n in needed(f)}
    return sorted(n for n in names if not n.startswith(_NOT_A_LIBRARY)
                  and not any((d / n).exists() for d in shipped))


def apt_command(packages: Sequence[str]) -> str:
    sudo = "" if hasattr(os, "geteuid") and os.geteuid() == 0 else "sudo "
    return f"{sudo}apt-get install {' '.join(packages)}"


def missing_message(missing: Sequence[str], platform: str = "xcb") -> str:
    """What to tell the user about the unresolved libraries of a platform plugin: each one
    with its package, and the command that installs them."""
    known = system_libs()
    width = max(len(m) for m in missing)
    lines = [f"Qt's {platform} platform plugin cannot load: "
             f"{'this system library is' if len(missing) == 1 else 'these system libraries are'}"
             " missing:"]
    for m in missing:
        pkg = known.get(m)
        lines.append(f"  {m:<{width}}  " + (f"(package {pkg})" if pkg else "(no package known: "
                                             "install the one that provides it)"))
    packages = list(dict.fromkeys(known[m] for m in missing if m in known))
    if packages and shutil.which("apt-get"):
        lines.append(f"install {'it' if len(packages) == 1 else 'them'} with:\n"
                     f"  {apt_command(packages)}")
    elif packages:
        lines.append("install your distribution's packages for them (on Debian/Ubuntu: "
                     f"{' '.join(packages)})")
    lines.append("(./scripts/setup.sh offers to install them; `memstrata serve` and every other"
                 " command work without them)")
    return "\n".join(lines)


NO_DISPLAY = ("no display: DISPLAY and WAYLAND_DISPLAY are not set, so there is no desktop to "
              "open the window on. Use `memstrata serve` for the endpoint without a window "
              "(every other command works headless too), or run the app under a desktop "
              "session (or a virtual one: `xvfb-run memstrata gui`)")


def x_server_problem(display: str) -> str | None:
    """None when an X server answers on `display` (libxcb's xcb_connect), else why not."""
    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return None  # the library check names it
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    conn = xcb.xcb_connect(display.encode(), None)
    try:
        if conn and not xcb.xcb_connection_has_error(conn):
            return None
    finally:
        if conn:
            xcb.xcb_disconnect(conn)
    return (f"no display: no X server answers on DISPLAY={display}. Start the desktop session "
            "(or a virtual one: `xvfb-run memstrata gui`), fix DISPLAY, or use `memstrata "
            "serve` for the endpoint without a window")


def platform_problem(name: str, env: Mapping[str, str]) -> str | None:
    """Why Qt could not start the platform `name` here, or None when nothing stands in the
    way that can be checked before it tries."""
    if name in HEADLESS:
        display = None
    elif name == "xcb":
        display = env.get("DISPLAY")
        if not display:
            return NO_DISPLAY
    elif name.startswith("wayland"):
        sock = env.get("WAYLAND_DISPLAY") or "wayland-0"
        runtime = env.get("XDG_RUNTIME_DIR", "")
        if not env.get("WAYLAND_DISPLAY") and not (runtime and Path(runtime, sock).exists()):
            return NO_DISPLAY
        display = None
    else:
        return None  # a plugin this check does not know: let Qt try
    plugin = plugin_file(name, env)
    if plugin is None:
        return None  # Qt says which plugins it has
    missing = unresolved(plugin, env)
    if missing:
        return missing_message(missing, name)
    return x_server_problem(display) if name == "xcb" and display else None


def gui_problem(env: Mapping[str, str] | None = None) -> str | None:
    """What stops the desktop app from opening here, in words; None when nothing does (or
    off Linux, where Qt's platform plugins bring what they need)."""
    if not sys.platform.startswith("linux"):
        return None
    env = os.environ if env is None else env
    problems = []
    for name in platforms(env):
        problem = platform_problem(name, env)
        if problem is None:
            return None
        if problem not in problems:
            problems.append(problem)
    return "\n".join(problems)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--derive"]:
        print("\n".join(derive()))
        return 0
    if args == ["--missing"]:
        plugin = plugin_file("xcb", os.environ)
        if plugin is None:
            print("PySide6's xcb platform plugin is not installed", file=sys.stderr)
            return 1
        known = system_libs()
        for m in unresolved(plugin):
            print(m, known.get(m, "?"))
        return 0
    if args:
        print(__doc__, file=sys.stderr)
        return 2
    problem = gui_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
