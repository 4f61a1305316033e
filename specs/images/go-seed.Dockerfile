# The Go sandbox with its own Go release's standard library compiled ahead, as the sandbox
# compiles it (the image's CGO_ENABLED and GOFLAGS, the build, go vet's facts, and a test
# binary's build), into a read-only build cache. A resolution run for that release whose
# dependency cache has no build-cache pool for it yet starts the pool from this copy
# (specs/recipes/go-import-rewrite.yaml): a machine's first Go grade then compiles only its
# dependencies, not the standard library as well. go names each cache entry by everything
# that went into it, so an entry is used only where go would have made the same one.
# Nothing of any tree is involved: the package vetted and tested here imports every
# public package of the standard library and holds no code.
ARG BASE
FROM ${BASE}
RUN set -eu; \
    release=$(GOTOOLCHAIN=local go env GOVERSION); \
    seed=/usr/local/lib/migration-evals/go-build/$release; \
    mkdir -p "$seed" /tmp/seed; cd /tmp/seed; \
    export GOCACHE="$seed" GOTOOLCHAIN=local HOME=/tmp; \
    go build std; \
    pkgs=$(go list -e -f '{{if not .Error}}{{if ne .Name "main"}}{{.ImportPath}}{{end}}{{end}}' std \
      | grep -v -e '^vendor/' -e '^internal/' -e '/internal/' -e '/internal$'); \
    printf 'module seed.invalid\n' > go.mod; \
    echo 'package seed' > doc.go; \
    { echo 'package seed'; echo 'import ('; printf '_ "%s"\n' $pkgs; echo ')'; } > seed_test.go; \
    go vet . >/dev/null; \
    go test -count=1 -exec /bin/true . >/dev/null; \
    cd / && rm -rf /tmp/seed "$seed/trim.txt" "$seed/testexpand" && chmod -R a+rX "$seed"
