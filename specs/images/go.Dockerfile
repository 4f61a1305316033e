# Go for the sandbox: a release from the Go module proxy (the toolchain module, pinned by
# hash in images.yaml) that switches to whatever release a go.mod's `go`/`toolchain` line
# asks for, from the dependency cache the resolution step filled. socat forwards a
# resolution run's loopback port to the registry gate, its only way out.
FROM debian:12-slim
ARG APT_SOURCES
RUN printf '%s\n' "$APT_SOURCES" > /etc/apt/sources.list.d/build.list \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      golang-go socat ca-certificates \
 && rm -f /etc/apt/sources.list.d/build.list \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
COPY go /usr/local/go
# A new dependency-cache volume takes this folder's owner: the sandbox's user.
RUN mkdir -p /deps && chown 65534:65534 /deps
# Debian's Go 1.19 stays in /usr/lib/go-1.19 for the golang:1.19-* stand-ins built from it.
# Builds and tests run with no network: modules come from the cache mounted at /deps.
# Without a C compiler in the image, cgo stays off.
ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    GOTOOLCHAIN=auto \
    GOPROXY=off \
    GOMODCACHE=/deps/mod \
    CGO_ENABLED=0 \
    GOFLAGS=-buildvcs=false
# Builds and tests start from a private build cache seeded with the one resolution made for
# the tree's dependencies ($MIGRATION_EVALS_BUILD_CACHE names it) or, from resolutions
# before that, with the standard library's for the Go release in use: a writable cache
# shared between runs could be poisoned by one candidate's code for the next. The seed is
# a tree of symbolic links into the read-only mount, not a copy: go only ever adds files
# to its cache (an entry it reads is never rewritten), so reads come from the shared
# cache and writes land in the private folder, and a cache of a hundred megabytes costs
# milliseconds rather than seconds per run. trim.txt is the private folder's own (go
# rewrites it when it trims).
RUN printf '%s\n' '#!/bin/sh' \
      'key=${MIGRATION_EVALS_BUILD_CACHE:-}' \
      'case "$key" in *[!0-9a-f]*) key="" ;; esac' \
      'seed=' \
      'if [ -n "$key" ] && [ -d "/deps/build-deps/$key" ]; then seed="/deps/build-deps/$key"' \
      'else release=$(go env GOVERSION) || exit $?' \
      '  if [ -d "/deps/build/$release" ]; then seed="/deps/build/$release"; fi; fi' \
      'if [ -n "$seed" ]; then cp -Rs "$seed" /tmp/go-build || exit 125' \
      '  rm -f /tmp/go-build/trim.txt && date +%s > /tmp/go-build/trim.txt; fi' \
      'export GOCACHE=/tmp/go-build' \
      'exec "$@"' > /usr/local/bin/with-go-cache \
 && chmod 755 /usr/local/bin/with-go-cache
