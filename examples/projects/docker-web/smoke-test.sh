#!/bin/sh
# Smoke test run inside the built image: config is valid, the server starts, pages are served.
set -eu

nginx -t
nginx
trap 'nginx -s quit' EXIT

for _ in 1 2 3 4 5; do
    curl -fsS http://127.0.0.1:8080/healthz >/dev/null 2>&1 && break
    sleep 1
done

curl -fsS http://127.0.0.1:8080/healthz | grep -qx ok
curl -fsS http://127.0.0.1:8080/ | grep -q "Hello from docker-web"
echo "smoke test passed"
