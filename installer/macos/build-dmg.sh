#!/usr/bin/env bash
# Wraps dist/MemStrata.app (from packaging/build.sh on macOS) into a drag-to-Applications
# disk image dist/installer/MemStrata-<version>-macos-<arch>.dmg. macOS only (hdiutil).
#
#   installer/macos/build-dmg.sh
#
# Signing and notarization (optional; without them Gatekeeper blocks the app on other Macs
# until the user right-clicks > Open, or runs `xattr -dr com.apple.quarantine MemStrata.app`):
#   CODESIGN_IDENTITY  "Developer ID Application: Name (TEAMID)": re-signs the .app with the
#                      hardened runtime and installer/macos/entitlements.plist, then the .dmg
#   NOTARY_PROFILE     a notarytool keychain profile, created once with
#                      xcrun notarytool store-credentials NAME --apple-id ... --team-id ...
#                      The .dmg is submitted, waited for, and the ticket stapled.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
[ "$(uname -s)" = Darwin ] || { echo "build-dmg.sh runs on macOS only (needs hdiutil)" >&2; exit 1; }

APP="$ROOT/dist/MemStrata.app"
[ -d "$APP" ] || { echo "no $APP: run packaging/build.sh first" >&2; exit 1; }
VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$ROOT/memstrata_app/__init__.py")
ARCH=$(uname -m)                     # arm64 (torch 2.13 ships no x86_64 macOS wheels)
OUT="$ROOT/dist/installer"
DMG="$OUT/MemStrata-$VERSION-macos-$ARCH.dmg"
STAGE="$ROOT/build/dmg"
ENT="$ROOT/installer/macos/entitlements.plist"
mkdir -p "$OUT"

if [ -n "${CODESIGN_IDENTITY:-}" ]; then
  echo "==> codesign $APP"
  # Sign every Mach-O inside first, then the bundle (--deep is not enough for notarization
  # when binaries sit in Resources/ or Frameworks/ with non-standard names).
  find "$APP/Contents" -type f \( -name "*.so" -o -name "*.dylib" -o -perm -u+x \) -print0 |
    while IFS= read -r -d '' f; do
      if file "$f" | grep -q "Mach-O"; then
        codesign --force --timestamp --options runtime --entitlements "$ENT" \
          --sign "$CODESIGN_IDENTITY" "$f"
      fi
    done
  codesign --force --timestamp --options runtime --entitlements "$ENT" \
    --sign "$CODESIGN_IDENTITY" "$APP"
  codesign --verify --deep --strict --verbose=2 "$APP"
fi

echo "==> $DMG"
rm -rf "$STAGE" "$DMG"; mkdir -p "$STAGE"
cp -R "$APP" "$STAGE/"
ln -s /Applications "$STAGE/Applications"
hdiutil create -volname "MemStrata $VERSION" -srcfolder "$STAGE" -fs HFS+ \
  -format UDZO -imagekey zlib-level=9 -ov "$DMG"
rm -rf "$STAGE"

if [ -n "${CODESIGN_IDENTITY:-}" ]; then
  codesign --force --timestamp --sign "$CODESIGN_IDENTITY" "$DMG"
fi
if [ -n "${NOTARY_PROFILE:-}" ]; then
  [ -n "${CODESIGN_IDENTITY:-}" ] || { echo "notarization needs CODESIGN_IDENTITY" >&2; exit 1; }
  echo "==> notarize (xcrun notarytool, waits for Apple)"
  xcrun notarytool submit "$DMG" --keychain-profile "$NOTARY_PROFILE" --wait
  xcrun stapler staple "$DMG"
  spctl --assess --type open --context context:primary-signature --verbose=2 "$DMG" || true
fi
echo "==> $(du -h "$DMG" | cut -f1) $DMG"
