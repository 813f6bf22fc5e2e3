#!/usr/bin/env bash
# One-time (and idempotent) set-up: the Debian libraries Qt needs, a virtual environment in
# .venv, and hexscope installed in it with its test tools. Usage: setup.sh [gui|test|debs]
# (debs: only the Debian libraries a real window needs; build.sh uses it for the bundle)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-gui}

# Qt's offscreen platform (tests) needs these; a real window also needs the xcb plugin's.
# gcc and make build the C test peers (packaging/dsp-agent: make -C packaging/dsp-agent host).
debs="libegl1 libgl1 libxkbcommon0 libfontconfig1 libfreetype6 libglib2.0-0 libdbus-1-3
      fonts-dejavu-core gcc make"
if [ "$mode" = gui ] || [ "$mode" = debs ]; then
  debs="$debs libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0
        libxcb-randr0 libxcb-shape0 libxcb-xfixes0 libxcb-xkb1 libxcb-sync1 libxcb-shm0
        libxcb-util1 libxcb-glx0 libx11-xcb1 libxkbcommon-x11-0"
fi
# the tests also build the C agent for 64-bit ARM (the phone's CPU) and run it under qemu
if [ "$mode" = test ]; then
  debs="$debs gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"
fi
python=${PYTHON:-python3}
if ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then debs="$debs python3-venv"; fi

missing=""
if command -v dpkg-query >/dev/null; then
  for p in $debs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing="$missing $p"
  done
fi
if [ -n "$missing" ]; then
  echo "setup: installing Debian packages:$missing"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [ -n "$sudo" ] && ! command -v sudo >/dev/null; then
    echo "setup: please install as root: apt-get install$missing" >&2; exit 1
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi
[ "$mode" = debs ] && exit 0

"$python" - <<'PY' || { echo "setup: Hexscope needs Python 3.11 or newer" >&2; exit 1; }
import sys; sys.exit(sys.version_info < (3, 11))
PY

[ -x .venv/bin/python ] || "$python" -m venv .venv
# tflite: .tflite models open in the app, with TFLite's kernels as the reference; a user's
# first model should not stop on a missing package
extras=test,tflite
# the test mode also installs the optional extras whose tests CI runs (Dask: --scheduler)
if [ "$mode" = test ]; then extras=test,cluster,tflite; fi
stamp=".venv/.hexscope-installed-${extras//,/-}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing hexscope and its dependencies into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[$extras]"
  # compile the simulator's kernels now, not on the first run (31 s there otherwise)
  .venv/bin/hexscope --warm-up || echo "setup: the kernel warm-up failed; the first run compiles them" >&2
  touch "$stamp"
fi
