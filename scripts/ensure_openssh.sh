#!/usr/bin/env bash
# Install Debian's OpenSSH client when it is missing: the quickstart SSHes into its pod,
# and tests/runtime/test_ssh_server.py and test_pod_ssh.py connect with ssh, scp, sftp and
# ssh-keygen, as a user of a pod's SSH commands does.
set -euo pipefail

if command -v ssh >/dev/null 2>&1 && command -v scp >/dev/null 2>&1 \
  && command -v sftp >/dev/null 2>&1 && command -v ssh-keygen >/dev/null 2>&1; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "error: the OpenSSH client is missing and installing it needs root: run 'apt-get install -y openssh-client' as root" >&2
    exit 1
  fi
  sudo="sudo"
fi
echo "installing Debian's openssh-client (the quickstart and the pod SSH tests use it)"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-client

if ! command -v ssh >/dev/null 2>&1; then
  echo "error: apt-get installed openssh-client but ssh is missing" >&2
  exit 1
fi
