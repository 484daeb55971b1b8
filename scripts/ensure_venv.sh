#!/usr/bin/env bash
# Create the project's virtualenv if it is missing: ensure_venv.sh PYTHON VENV_DIR
# On Debian, `python3 -m venv` needs the python3-venv package; install it when absent.
set -euo pipefail

python="${1:-python3}"
venv="${2:-.venv}"

if [ -x "$venv/bin/python" ]; then
  exit 0
fi

if ! command -v "$python" >/dev/null 2>&1; then
  echo "error: $python not found; install Python >= 3.10 (Debian: apt-get install python3)" >&2
  exit 1
fi

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "error: $python is $("$python" -V 2>&1); podbook needs Python >= 3.10 (set PYTHON=...)" >&2
  exit 1
fi

if ! "$python" -m venv "$venv" 2>/dev/null; then
  rm -rf "$venv"
  "$(dirname "$0")/apt_install.sh" python3-venv python3-venv "python venv support is missing"
  "$python" -m venv "$venv"
fi

"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
