#!/bin/sh
# Smoke test run inside the built image: config is valid, the server starts, pages are served.
# It runs as an unprivileged user on a read-only root filesystem, so nginx gets a main
# config of its own that keeps its pid file and temporary files under a fresh directory.
set -eu

dir=$(mktemp -d)
cat > "$dir/nginx.conf" <<EOF
pid $dir/nginx.pid;
error_log stderr;
events {}
http {
    access_log off;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    include /etc/nginx/mime.types;
    include /etc/nginx/conf.d/*.conf;
}
EOF

nginx -t -c "$dir/nginx.conf"
nginx -c "$dir/nginx.conf"
trap 'nginx -c "$dir/nginx.conf" -s quit' EXIT

for _ in 1 2 3 4 5; do
    curl -fsS http://127.0.0.1:8080/healthz >/dev/null 2>&1 && break
    sleep 1
done

curl -fsS http://127.0.0.1:8080/healthz | grep -qx ok
curl -fsS http://127.0.0.1:8080/ | grep -q "Hello from docker-web"
echo "smoke test passed"
