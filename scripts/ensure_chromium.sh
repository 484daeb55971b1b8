#!/usr/bin/env bash
# Install Debian's Chromium for the browser tests when it is missing.
# Playwright drives this binary; `playwright install` is never used.
set -euo pipefail

chromium="/usr/lib/chromium/chromium"
if [ -x "$chromium" ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "error: Chromium is missing and installing it needs root: run 'apt-get install -y chromium' as root" >&2
    exit 1
  fi
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
echo "installing Debian's chromium (needed by the browser tests)"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

if [ ! -x "$chromium" ]; then
  echo "error: apt-get installed chromium but $chromium is missing" >&2
  exit 1
fi
