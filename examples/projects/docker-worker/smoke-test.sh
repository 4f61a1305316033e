#!/bin/sh
# Smoke test run inside the built image: the worker answers jobs and rejects bad ones.
set -eu

out=$(printf 'upper hello\ncount a b c\n' | /usr/local/bin/worker)
[ "$out" = "$(printf 'HELLO\n3')" ] || { echo "unexpected output: $out"; exit 1; }

if echo "explode now" | /usr/local/bin/worker >/dev/null; then
    echo "worker accepted an unknown job"
    exit 1
fi
echo "smoke test passed"
