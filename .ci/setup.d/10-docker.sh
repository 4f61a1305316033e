#!/usr/bin/env bash
# A Docker engine for the docker-marked tests (12-images.bg.sh builds the sandbox images
# they run on). Idempotent: an installed engine and a running daemon are reused.
set -euo pipefail
cd "$(dirname "$0")/../.."

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q -o DPkg::Lock::Timeout=600 "${missing[@]}"
fi

if ! docker info >/dev/null 2>&1; then
  log="${TMPDIR:-/tmp}/migration-evals-dockerd.log"
  echo "starting dockerd (log: ${log})"
  # No bridge and no iptables: sandbox containers use network "none" anyway, and CI
  # machines often cannot change the host's firewall.
  setsid nohup dockerd --iptables=false --ip-forward=false --bridge=none \
    >"${log}" 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  if ! docker info >/dev/null 2>&1; then
    echo "dockerd did not come up:" >&2
    tail -n 20 "${log}" >&2
    exit 1
  fi
fi

make setup
