#!/usr/bin/env bash
# Install Debian's Chromium for the browser tests when it is missing.
# Playwright drives this binary; `playwright install` is never used.
set -euo pipefail

chromium="/usr/lib/chromium/chromium"
if [ -x "$chromium" ]; then
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
echo "installing Debian's chromium (needed by the browser tests)"
$sudo apt-get update -qq
$sudo apt-get install -y -qq chromium

if [ ! -x "$chromium" ]; then
  echo "error: apt-get installed chromium but $chromium is missing" >&2
  exit 1
fi
