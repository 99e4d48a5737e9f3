#!/usr/bin/env bash
# Installs what Fief needs on a fresh Debian machine (run as root, or with sudo available).
# Idempotent: installs only the packages that are missing. `--tests` adds what only the tests
# need: Chromium, which renders the HTML reports in a test.
set -euo pipefail

packages=(fuse3 libfuse3-dev pkg-config libsqlite3-dev sqlite3 liblmdb-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Optional: where it cannot be installed, the browser test skips and says so.
if [ "${1:-}" = "--tests" ] && ! dpkg -s chromium >/dev/null 2>&1; then
  echo "setup: installing chromium (for the test that renders the HTML reports)"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null; } \
    || echo "setup: WARNING: chromium could not be installed; testHTMLRendersInHeadlessChromium will skip" >&2
fi

if ! command -v swift >/dev/null 2>&1; then
  echo "setup: swift is not on PATH; install Swift 6 (https://swift.org/install) and retry" >&2
  exit 1
fi
if [ ! -e /dev/fuse ]; then
  echo "setup: WARNING: /dev/fuse is missing; FaultFS mounts (power-cut scenarios and FaultFS tests) cannot run here" >&2
fi
echo "setup: ready ($(swift --version 2>&1 | head -1))"
