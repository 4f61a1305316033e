# A stand-in for golang:1.19-<release>: that Debian release with Go 1.19 from
# migration-evals/go. Debian's `go` command links against glibc 2.34, newer than
# bullseye's, so it is rebuilt without cgo; the rest of the toolchain is static already.
ARG BASE
FROM migration-evals/go:3 AS toolchain
RUN GOFLAGS= GOTOOLCHAIN=local /usr/lib/go-1.19/bin/go build -o /tmp/go cmd/go

FROM ${BASE}
COPY --from=toolchain /usr/lib/go-1.19 /usr/lib/go-1.19
COPY --from=toolchain /usr/share/go-1.19 /usr/share/go-1.19
COPY --from=toolchain /tmp/go /usr/lib/go-1.19/bin/go
ENV PATH=/usr/lib/go-1.19/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    GOPROXY=off
