#!/usr/bin/env bash
# Install Debian's Chromium for the browser tests when it is missing.
# Playwright drives this binary; `playwright install` is never used.
set -euo pipefail

chromium="/usr/lib/chromium/chromium"
if [ -x "$chromium" ]; then
  exit 0
fi

"$(dirname "$0")/apt_install.sh" chromium Chromium "needed by the browser tests"

if [ ! -x "$chromium" ]; then
  echo "error: apt-get installed chromium but $chromium is missing" >&2
  exit 1
fi
