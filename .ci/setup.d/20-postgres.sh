#!/usr/bin/env bash
# PostgreSQL for the tests marked `postgres` (pytest -m postgres). Idempotent: installs the
# server from apt only when missing, reuses a running cluster, starts one otherwise, and
# makes sure a login role with a password (TCP access on loopback needs one) and a test
# database owned by it exist. The tests create and drop their own schemas inside it.
set -euo pipefail
cd "$(dirname "$0")/../.."

ROLE=migration_evals
PASSWORD=migration-evals-ci  # a loopback-only test credential, not a secret
DATABASE=migration_evals_test

if ! command -v pg_lsclusters >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi

# The first cluster the machine has, or a new one of the newest installed version.
cluster=$(pg_lsclusters -h | awk 'NR == 1 {print $1, $2}')
if [ -z "$cluster" ]; then
  version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  pg_createcluster "$version" main >/dev/null
  cluster="$version main"
fi
read -r version name <<<"$cluster"
if ! pg_lsclusters -h | awk -v v="$version" -v n="$name" '$1 == v && $2 == n {print $4}' \
    | grep -q online; then
  pg_ctlcluster "$version" "$name" start
fi
port=$(pg_lsclusters -h | awk -v v="$version" -v n="$name" '$1 == v && $2 == n {print $3}')

as_postgres() { runuser -u postgres -- psql -p "$port" -v ON_ERROR_STOP=1 -qtA "$@"; }
if [ -z "$(as_postgres -c "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'")" ]; then
  as_postgres -c "CREATE ROLE $ROLE LOGIN"
fi
as_postgres -c "ALTER ROLE $ROLE LOGIN PASSWORD '$PASSWORD'"
if [ -z "$(as_postgres -c "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'")" ]; then
  as_postgres -c "CREATE DATABASE $DATABASE OWNER $ROLE"
fi

url="postgresql+psycopg://$ROLE:$PASSWORD@127.0.0.1:$port/$DATABASE"
python3 - "$url" <<'PY'
import sys
from pathlib import Path

env = Path(".ci/services.env")
lines = env.read_text().splitlines() if env.exists() else []
key = "MIGRATION_EVALS_TEST_POSTGRES_URL"
lines = [line for line in lines if not line.startswith(key + "=")]
env.write_text("\n".join([*lines, f"{key}={sys.argv[1]}"]) + "\n")
PY
echo "PostgreSQL $version/$name on 127.0.0.1:$port, database $DATABASE"
