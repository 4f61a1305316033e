# Go 1.19 (Debian 12) working without a module proxy.
FROM debian:12-slim
ARG APT_SOURCES
RUN printf '%s\n' "$APT_SOURCES" > /etc/apt/sources.list.d/build.list \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends golang-go \
 && rm -f /etc/apt/sources.list.d/build.list \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
# No network in the sandbox: modules must be vendored or replaced by local paths. Without
# a C compiler in the image, cgo stays off.
ENV GOPROXY=off \
    GOFLAGS=-mod=mod \
    CGO_ENABLED=0
