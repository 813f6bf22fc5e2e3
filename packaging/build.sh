#!/usr/bin/env bash
# Build Hexscope as a one-folder desktop bundle with PyInstaller (from PyPI, the `bundle`
# extra): dist/hexscope/hexscope runs without Python installed. One command from a clean
# clone:
#
#   ./packaging/build.sh [--tar] [DIST_DIR]      (default DIST_DIR: dist)
#
# It installs the Debian libraries Qt needs (packaging/setup.sh debs), makes a build venv in
# build/bundle/venv (HEXSCOPE_BUILD_DIR moves it; reused while pyproject.toml is unchanged)
# with a regular (not editable) install of this checkout, runs packaging/hexscope.spec, and
# checks the result with `hexscope --self-test` offscreen. The bundle folder holds
# hexscope.desktop.in and install-desktop.sh, which puts Hexscope in the desktop's menu.
# --tar also writes DIST_DIR/hexscope-VERSION-linux-x86_64.tar.gz.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tar=0
if [ "${1:-}" = --tar ]; then tar=1; shift; fi
dist=$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)
work=${HEXSCOPE_BUILD_DIR:-$root/build/bundle}
python=${PYTHON:-python3}
started=$(date +%s)

bash packaging/setup.sh debs
mkdir -p "$work"
venv="$work/venv"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
# the extras the bundle carries: tflite, so that .tflite models open in it too
extras=bundle,tflite
# named for the extras: a venv made for other extras installs these (reused otherwise)
stamp="$venv/.deps-installed-$extras"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "build: installing the dependencies and PyInstaller into $venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "$root[$extras]"
  touch "$stamp"
fi
# This checkout's code, as a wheel would install it (PyInstaller cannot follow the package
# mapping of an editable install).
"$venv/bin/python" -m pip install -q --no-deps --force-reinstall "$root"

echo "build: PyInstaller"
"$venv/bin/pyinstaller" --noconfirm --clean --log-level WARN --distpath "$dist" \
  --workpath "$work/pyinstaller" packaging/hexscope.spec
bundle="$dist/hexscope"
cp packaging/hexscope.desktop.in packaging/hexscope-mime.xml packaging/install-desktop.sh \
  "$bundle/"

echo "build: compiling the bundle's kernels (hexscope --warm-up)"
(cd "$work" && "$bundle/hexscope" --warm-up)
echo "build: checking the bundle (hexscope --self-test, offscreen)"
(cd "$work" && QT_QPA_PLATFORM=offscreen "$bundle/hexscope" --self-test)

version=$("$venv/bin/python" -c 'from importlib.metadata import version; print(version("hexscope"))')
if [ "$tar" = 1 ]; then
  archive="$dist/hexscope-$version-linux-$(uname -m).tar.gz"
  tar -C "$dist" -czf "$archive" hexscope
  echo "build: $archive ($(du -h "$archive" | cut -f1))"
fi
echo "build: $bundle ($(du -sh "$bundle" | cut -f1)) in $(( $(date +%s) - started )) s"
echo "build: run it with $bundle/hexscope; put it in the menu with $bundle/install-desktop.sh"
