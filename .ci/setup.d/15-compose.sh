#!/usr/bin/env bash
# A Compose CLI for the live test of docs/compose.yaml (tests/test_compose_stack.py):
# the `docker compose` plugin when the engine has it, else Debian's docker-compose.
# Idempotent: one already installed is used as it is.
set -euo pipefail
if docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1; then
  exit 0
fi
echo "installing docker-compose"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q -o DPkg::Lock::Timeout=600 docker-compose
