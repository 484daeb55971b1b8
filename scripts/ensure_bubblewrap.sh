#!/usr/bin/env bash
# Install Debian's bubblewrap when it is missing: `podbook emulator --sandbox bwrap` runs each
# pod in a bwrap box, and tests/runtime/test_sandbox_bwrap.py runs pods that way.
set -euo pipefail

if command -v bwrap >/dev/null 2>&1; then
  exit 0
fi

"$(dirname "$0")/apt_install.sh" bubblewrap "bubblewrap (bwrap)" \
  "the pod sandbox tests run pods in bwrap boxes"

if ! command -v bwrap >/dev/null 2>&1; then
  echo "error: apt-get installed bubblewrap but bwrap is missing" >&2
  exit 1
fi
