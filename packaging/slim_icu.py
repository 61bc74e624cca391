"""Rebuild Qt's ICU data library with only the data Qt itself reads (Linux bundles).

PySide6's wheels ship ICU's whole data library (`libicudata.so.NN`, 31 MiB): every
locale's names of languages, regions, currencies and units, time-zone names,
transliterators, number spell-out rules, break-iterator dictionaries and ~200 legacy
character-set tables. Qt's own libraries call ICU for four things only (their undefined
`*_NN` symbols, checked below): collation (`ucol_*`: QCollator, sorting in file dialogs),
case mapping (`u_strToUpper/Lower`: built into libicuuc, no data), time zones (`ucal_*`:
canonical IDs and display names) and character-set conversion (`ucnv_*`: QStringDecoder for
an encoding Qt does not implement itself). Qt's locale data (QLocale) is its own.

What stays: the collation tree (`coll/`), the normalization and core tables, the time-zone
metadata (`zoneinfo64`, `metaZones`, `timezoneTypes`, `windowsZones`) and the converter
alias table. What goes: the rest, including the legacy converters' tables — the app decodes
text in Python, never through Qt, and ICU's UTF-8/16/32, ASCII and Latin-1 converters are
algorithmic (no table). A lookup of something removed fails inside ICU as for any missing
locale: Qt's QCollator sorts as before (checked for de, sv, fr, tr, ja), a time zone's
display name comes back empty and a legacy encoding such as Shift_JIS is reported as
unavailable.

    python packaging/slim_icu.py DIR_WITH_QT_LIBS     (packaging/build.sh runs it)

Needs `icupkg` (Debian: icu-devtools), `readelf` and a C compiler; without them it says so
and leaves the library as it is. The data keep ICU's package format and are linked back as
the same symbol (`icudtNN_dat`) in a library of the same name.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Qt's ICU calls, by prefix: a Qt that calls another part of ICU needs this list revisited.
QT_USES = ("ucol_", "ucnv_", "UCNV_", "ucal_", "u_strToLower", "u_strToUpper")
# Items kept (ICU item names, without the icudtNNl/ prefix)
KEEP_TREES = ("coll/",)
KEEP_TOP = re.compile(
    r"(?:res_index|root|pool|likelySubtags|supplementalData|metadata|langInfo|plurals"
    r"|zoneinfo64|metaZones|timezoneTypes|windowsZones|keyTypeData|icuver|icustd"
    r"|grammaticalFeatures|numberingSystems|dayPeriods|units)\.res"
    r"|.*\.(?:nrm|icu|spp|cfu)$")
DROP_TOP_ICU = ("unames.icu",)  # Unicode character names (u_charName): Qt never asks


def _run(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def qt_icu_calls(qt_lib: Path) -> set[str]:
    """The ICU functions Qt's libraries import."""
    calls = set()
    for lib in qt_lib.glob("libQt6*.so*"):
        out = _run("readelf", "--dyn-syms", "-W", str(lib))
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 8 and parts[6] == "UND" and re.search(r"_\d{2}$", parts[7]):
                calls.add(re.sub(r"_\d{2}$", "", parts[7].split("@")[0]))
    return calls


def keep(item: str) -> bool:
    if item.startswith(KEEP_TREES):
        return True
    if "/" in item:
        return False
    return item not in DROP_TOP_ICU and bool(KEEP_TOP.fullmatch(item))


def slim(qt_lib: Path) -> int:
    libs = sorted(qt_lib.glob("libicudata.so.*"))
    if not libs:
        print(f"slim_icu: no libicudata in {qt_lib}", file=sys.stderr)
        return 1
    for tool in ("icupkg", "readelf", "cc"):
        if shutil.which(tool) is None:
            print(f"slim_icu: {tool} not found (Debian: icu-devtools, binutils, gcc); ICU's data "
                  "stay whole", file=sys.stderr)
            return 0
    unknown = {c for c in qt_icu_calls(qt_lib) if not c.startswith(QT_USES)}
    if unknown:
        print(f"slim_icu: Qt calls ICU functions this filter does not know ({sorted(unknown)}); "
              "ICU's data stay whole", file=sys.stderr)
        return 0
    lib = libs[0]
    syms = _run("readelf", "-sW", str(lib))
    m = re.search(r"^\s*\d+:\s+([0-9a-f]+)\s+(0x[0-9a-f]+|\d+)\s+OBJECT\s+GLOBAL\s+\S+\s+\d+\s+"
                  r"(icudt\d+_dat)$", syms, re.M)
    sections = _run("readelf", "-SW", str(lib))
    s = re.search(r"\.rodata\s+PROGBITS\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", sections)
    if not m or not s:
        print(f"slim_icu: no ICU data symbol in {lib}; left as it is", file=sys.stderr)
        return 0
    addr, size, symbol = int(m.group(1), 16), int(m.group(2), 0), m.group(3)
    offset = addr - int(s.group(1), 16) + int(s.group(2), 16)
    raw = lib.read_bytes()[offset:offset + size]
    if raw[2:4] != b"\xda\x27":
        print(f"slim_icu: {lib}'s data do not start with ICU's header; left as it is",
              file=sys.stderr)
        return 0
    soname = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]",
                       _run("readelf", "-dW", str(lib)))
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        # icupkg wants the package's own name (icudtNNl: "l" for little-endian)
        name = f"{symbol.removesuffix('_dat')}{'l' if sys.byteorder == 'little' else 'b'}.dat"
        (tmp / "in").mkdir()
        (tmp / "out").mkdir()
        whole, slimmed = tmp / "in" / name, tmp / "out" / name
        whole.write_bytes(raw)
        items = _run("icupkg", "-l", str(whole)).split()
        drop = [i for i in items if not keep(i)]
        (tmp / "drop.txt").write_text("\n".join(drop) + "\n")
        _run("icupkg", "-r", str(tmp / "drop.txt"), str(whole), str(slimmed))
        (tmp / "data.S").write_text(
            "\t.section .rodata\n"
            f"\t.globl {symbol}\n\t.type {symbol}, @object\n\t.balign 16\n{symbol}:\n"
            f'\t.incbin "{slimmed}"\n\t.size {symbol}, . - {symbol}\n'
            '\t.section .note.GNU-stack,"",@progbits\n')
        out = tmp / lib.name
        _run("cc", "-shared", "-nostdlib", f"-Wl,-soname,{soname.group(1) if soname else lib.name}",
             "-o", str(out), str(tmp / "data.S"))
        before = lib.stat().st_size
        shutil.copyfile(out, lib)
        print(f"slim_icu: {lib.name} {before / 2**20:.1f} MiB -> {lib.stat().st_size / 2**20:.1f} "
              f"MiB ({len(items) - len(drop)} of {len(items)} items kept)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(slim(Path(sys.argv[1])))
