#!/usr/bin/env bash
# Turns the PyInstaller onedir bundle (dist/memstrata/, from packaging/build.sh) into Linux
# release artefacts in dist/installer/:
#
#   memstrata-<ver>-linux-<arch>.tar.gz   the bundle as is (unpack anywhere, run ./memstrata)
#   memstrata_<ver>_<debarch>.deb         /opt/memstrata, /usr/bin/memstrata, menu entry, icons
#   MemStrata.AppDir/                     AppImage layout (AppRun, .desktop, icon); turned into
#                                         MemStrata-<ver>-<arch>.AppImage when appimagetool is
#                                         on PATH (see installer/README.md)
#
#   installer/linux/package.sh [--no-tar] [--no-deb] [--no-appdir]
#
# Environment: DEB_COMPRESS (xz | gzip | zstd | none; default xz, at level 9 "extreme": 8%
# smaller than xz's default level for this bundle, about 4 minutes on 2 cores), BUNDLE
# (default dist/memstrata), DEB_MAINTAINER ("Name <email>" for the control file).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)

do_tar=1 do_deb=1 do_appdir=1
for a in "$@"; do
  case "$a" in
    --no-tar) do_tar=0 ;; --no-deb) do_deb=0 ;; --no-appdir) do_appdir=0 ;;
    *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done

BUNDLE="${BUNDLE:-$ROOT/dist/memstrata}"
OUT="$ROOT/dist/installer"
STAGE="$ROOT/build/installer-linux"
RES="$ROOT/resources"
[ -x "$BUNDLE/memstrata" ] || { echo "no bundle at $BUNDLE: run packaging/build.sh first" >&2; exit 1; }

VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$ROOT/memstrata_app/__init__.py")
ARCH=$(uname -m)                                   # x86_64, aarch64
case "$ARCH" in
  x86_64) DEBARCH=amd64 ;; aarch64) DEBARCH=arm64 ;; *) DEBARCH="$ARCH" ;;
esac
ICON_SIZES="16 32 48 64 128 256"

rm -rf "$STAGE"; mkdir -p "$STAGE" "$OUT"

install_icons() {   # $1: a usr/share prefix
  for s in $ICON_SIZES; do
    install -Dm644 "$RES/icons/memstrata-$s.png" "$1/icons/hicolor/${s}x${s}/apps/memstrata.png"
  done
  install -Dm644 "$RES/memstrata.svg" "$1/icons/hicolor/scalable/apps/memstrata.svg"
}

# --- tar.gz --------------------------------------------------------------------------------
if [ $do_tar = 1 ]; then
  tgz="$OUT/memstrata-$VERSION-linux-$ARCH.tar.gz"
  echo "==> $tgz"
  tar -C "$(dirname "$BUNDLE")" --owner=0 --group=0 -czf "$tgz" "$(basename "$BUNDLE")"
fi

# --- .deb ----------------------------------------------------------------------------------
if [ $do_deb = 1 ]; then
  root="$STAGE/deb"
  mkdir -p "$root/opt" "$root/usr/bin" "$root/DEBIAN"
  cp -a "$BUNDLE" "$root/opt/memstrata"
  ln -s /opt/memstrata/memstrata "$root/usr/bin/memstrata"
  install -Dm644 "$RES/memstrata.desktop" "$root/usr/share/applications/memstrata.desktop"
  install_icons "$root/usr/share"
  size_kb=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
  # The bundle links against the build machine's glibc: the newest GLIBC_x.y symbol version
  # it references is the floor (build on the oldest distro you support).
  glibc=""
  if command -v objdump >/dev/null 2>&1; then
    glibc=$( { (find "$BUNDLE" -type f \( -name "*.so*" -o -perm -u+x \) -print0 |
                xargs -0 objdump -T 2>/dev/null || true) | grep -o "GLIBC_[0-9.]*" |
              sed "s/GLIBC_//" | sort -uV | tail -1; } || true)
  else
    echo "package.sh: objdump (binutils) not found: the .deb's glibc floor is this machine's" \
         "glibc, not the bundle's own (install binutils for the exact floor)" >&2
  fi
  [ -n "$glibc" ] || glibc=$(ldd --version | head -1 | grep -o "[0-9]*\.[0-9]*$")
  # Qt's xcb platform plugin and the GL/font stack come from the system (PyInstaller does
  # not bundle them); everything else (Python, Qt, torch, the model) is inside /opt/memstrata.
  # Their packages: the one list (memstrata_app/resources/qt-system-libs.txt, derived from
  # the plugin's own dependencies), libc6 apart with its version floor.
  qt_deps=$(sed 's/#.*//' "$ROOT/memstrata_app/resources/qt-system-libs.txt" |
            awk 'NF >= 2 && $2 != "libc6" && !seen[$2]++ {printf "%s, ", $2}')
  qt_deps="${qt_deps%, }"
  cat > "$root/DEBIAN/control" <<CTRL
Package: memstrata
Version: $VERSION
Section: devel
Priority: optional
Architecture: $DEBARCH
Installed-Size: $size_kb
Depends: libc6 (>= $glibc), $qt_deps
Maintainer: ${DEB_MAINTAINER:-MemStrata maintainers <maintainers@memstrata.invalid>}
Description: local memory for AI coding tools that knows which facts are still true
 MemStrata keeps what your coding assistant was told in a bi-temporal ledger: a new
 value for a fact retires the old one, so stale values never reach the prompt. It
 serves an Ollama/OpenAI/Anthropic-compatible endpoint on 127.0.0.1:11435 and an MCP
 server, with a desktop app to browse and review the ledger. Runs fully offline: the
 embedding model (all-MiniLM-L6-v2) is included.
CTRL
  cat > "$root/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
  command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q /usr/share/applications || true
  command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t -f /usr/share/icons/hicolor || true
fi
exit 0
SH
  cat > "$root/DEBIAN/postrm" <<'SH'
#!/bin/sh
set -e
if [ "$1" = remove ] || [ "$1" = purge ]; then
  command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q /usr/share/applications || true
  command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t -f /usr/share/icons/hicolor || true
fi
exit 0
SH
  chmod 755 "$root/DEBIAN/postinst" "$root/DEBIAN/postrm"
  deb="$OUT/memstrata_${VERSION}_${DEBARCH}.deb"
  echo "==> $deb"
  level=()
  [ "${DEB_COMPRESS:-xz}" = xz ] && level=(-z9 -Sextreme)
  dpkg-deb --root-owner-group -Z"${DEB_COMPRESS:-xz}" ${level[@]+"${level[@]}"} \
    --build "$root" "$deb" >/dev/null
  rm -rf "$root"
fi

# --- AppDir (and AppImage where appimagetool exists) ----------------------------------------
if [ $do_appdir = 1 ]; then
  appdir="$OUT/MemStrata.AppDir"
  echo "==> $appdir"
  rm -rf "$appdir"; mkdir -p "$appdir/usr/lib"
  cp -a "$BUNDLE" "$appdir/usr/lib/memstrata"
  mkdir -p "$appdir/usr/bin"
  ln -s ../lib/memstrata/memstrata "$appdir/usr/bin/memstrata"
  install -Dm644 "$RES/memstrata.desktop" "$appdir/usr/share/applications/memstrata.desktop"
  install_icons "$appdir/usr/share"
  # appimagetool wants the .desktop file and the icon (named as its Icon=) at the top.
  cp "$RES/memstrata.desktop" "$appdir/memstrata.desktop"
  cp "$RES/icons/memstrata-256.png" "$appdir/memstrata.png"
  ln -s memstrata.png "$appdir/.DirIcon"
  cat > "$appdir/AppRun" <<'SH'
#!/bin/sh
# AppImage entry point: the same command as `memstrata` (no args: GUI; subcommands: headless).
HERE=$(dirname "$(readlink -f "$0")")
exec "$HERE/usr/lib/memstrata/memstrata" "$@"
SH
  chmod 755 "$appdir/AppRun"
  if command -v appimagetool >/dev/null 2>&1; then
    img="$OUT/MemStrata-$VERSION-$ARCH.AppImage"
    echo "==> $img"
    ARCH="$ARCH" appimagetool --no-appstream "$appdir" "$img"
  else
    echo "    appimagetool not on PATH: AppDir only. Where it exists:"
    echo "    ARCH=$ARCH appimagetool --no-appstream $appdir MemStrata-$VERSION-$ARCH.AppImage"
  fi
fi

rm -rf "$STAGE"
echo "==> done:"; ls -la "$OUT"
