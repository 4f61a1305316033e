#!/usr/bin/env bash
# Redis for the tests marked `redis` (pytest -m redis). Idempotent: installs redis-server
# from apt only when missing and starts one on loopback unless one already answers there.
# The tests that restart Redis start private servers of their own with the same binary.
set -euo pipefail
cd "$(dirname "$0")/../.."

PORT=6379

if ! command -v redis-server >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq redis-server >/dev/null
fi

if [ "$(redis-cli -h 127.0.0.1 -p "$PORT" ping 2>/dev/null || true)" != "PONG" ]; then
  dir=/var/tmp/migration-evals-redis
  mkdir -p "$dir"
  redis-server --bind 127.0.0.1 --port "$PORT" --daemonize yes --dir "$dir" \
    --logfile "$dir/redis.log" --pidfile "$dir/redis.pid" --save "" --appendonly no
  for _ in $(seq 50); do
    [ "$(redis-cli -h 127.0.0.1 -p "$PORT" ping 2>/dev/null || true)" = "PONG" ] && break
    sleep 0.1
  done
fi
redis-cli -h 127.0.0.1 -p "$PORT" ping >/dev/null

python3 - "redis://127.0.0.1:$PORT/0" <<'PY'
import sys
from pathlib import Path

env = Path(".ci/services.env")
lines = env.read_text().splitlines() if env.exists() else []
key = "MIGRATION_EVALS_TEST_REDIS_URL"
lines = [line for line in lines if not line.startswith(key + "=")]
env.write_text("\n".join([*lines, f"{key}={sys.argv[1]}"]) + "\n")
PY
echo "Redis on 127.0.0.1:$PORT"
