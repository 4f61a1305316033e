# The Go sandbox with the harness's test supervisor: go test runs each test binary through
# it (-exec migration-evals-supervise), and it reports what only a process outside the
# binary sees (see supervise.go). Built here from the standard library alone, into the
# read-only root filesystem, where no code under test can replace it.
ARG BASE
FROM ${BASE}
COPY supervise.go /usr/local/src/migration-evals-supervise/main.go
RUN cd /usr/local/src/migration-evals-supervise \
 && GOFLAGS=-buildvcs=false GOTOOLCHAIN=local GOCACHE=/tmp/supervise-cache GO111MODULE=off \
    go build -trimpath -o /usr/local/bin/migration-evals-supervise main.go \
 && rm -rf /tmp/supervise-cache
