#!/usr/bin/env bash
# Put Hexscope in the desktop's menu: writes ~/.local/share/applications/hexscope.desktop, the
# icon under ~/.local/share/icons and the .hexgraph file type under ~/.local/share/mime
# (XDG_DATA_HOME if set). Run it from the bundle folder
# (dist/hexscope/install-desktop.sh), or give the bundle folder: install-desktop.sh DIR.
# install-desktop.sh --uninstall removes both.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
data=${XDG_DATA_HOME:-$HOME/.local/share}
apps="$data/applications"
icons="$data/icons/hicolor"

mime="$data/mime"

if [ "${1:-}" = --uninstall ]; then
  rm -f "$apps/hexscope.desktop" "$icons/scalable/apps/hexscope.svg" \
    "$mime/packages/hexscope-mime.xml"
  command -v update-mime-database >/dev/null && update-mime-database "$mime" || true
  for s in 16 32 48 64 128 256; do rm -f "$icons/${s}x${s}/apps/hexscope.png"; done
  echo "install-desktop: removed Hexscope from the menu"
  exit 0
fi

bundle="$(cd "${1:-$here}" && pwd)"
exe="$bundle/hexscope"
res="$bundle/_internal/hexscope/resources/icons"
if [ ! -x "$exe" ] || [ ! -f "$res/hexscope.svg" ]; then
  echo "install-desktop: $bundle is not a Hexscope bundle (no hexscope or icons there)" >&2
  exit 2
fi

mkdir -p "$apps" "$icons/scalable/apps" "$mime/packages"
# .hexgraph files open with Hexscope from a file manager.
cp "$bundle/hexscope-mime.xml" "$mime/packages/hexscope-mime.xml"
command -v update-mime-database >/dev/null && update-mime-database "$mime" || true
cp "$res/hexscope.svg" "$icons/scalable/apps/hexscope.svg"
for s in 16 32 48 64 128 256; do
  mkdir -p "$icons/${s}x${s}/apps"
  cp "$res/hexscope-$s.png" "$icons/${s}x${s}/apps/hexscope.png"
done
# Exec may hold spaces: the desktop entry spec quotes the whole argument.
sed -e "s|@EXEC@|\"$exe\"|" -e "s|@ICON@|hexscope|" "$bundle/hexscope.desktop.in" \
  > "$apps/hexscope.desktop"
chmod 644 "$apps/hexscope.desktop"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$apps" || true
command -v gtk-update-icon-cache >/dev/null \
  && gtk-update-icon-cache -q -t "$data/icons/hicolor" 2>/dev/null || true
echo "install-desktop: Hexscope is in the menu ($apps/hexscope.desktop -> $exe)"
