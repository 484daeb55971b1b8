#!/usr/bin/env bash
# apt_install.sh PACKAGE WHAT WHY: install Debian's PACKAGE with apt-get, through sudo when not
# root; WHAT names it in the error when root is needed, WHY says in the progress line what
# needs it. Used by ensure_chromium.sh, ensure_openssh.sh and ensure_venv.sh.
set -euo pipefail

package="$1" what="$2" why="$3"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "error: $what is missing and installing it needs root: run 'apt-get install -y $package' as root" >&2
    exit 1
  fi
  sudo="sudo"
fi
echo "installing Debian's $package ($why)"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package"
