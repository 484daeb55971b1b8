#!/usr/bin/env bash
# Install Debian's OpenSSH client when it is missing: the quickstart SSHes into its pod,
# and tests/runtime/test_ssh_server.py and test_pod_ssh.py connect with ssh, scp, sftp and
# ssh-keygen, as a user of a pod's SSH commands does.
set -euo pipefail

if command -v ssh >/dev/null 2>&1 && command -v scp >/dev/null 2>&1 \
  && command -v sftp >/dev/null 2>&1 && command -v ssh-keygen >/dev/null 2>&1; then
  exit 0
fi

"$(dirname "$0")/apt_install.sh" openssh-client "the OpenSSH client" \
  "the quickstart and the pod SSH tests use it"

if ! command -v ssh >/dev/null 2>&1; then
  echo "error: apt-get installed openssh-client but ssh is missing" >&2
  exit 1
fi
