#!/usr/bin/env bash
# The sandbox images the docker-marked tests run on. No image registry is reachable, so
# they are built here from the machine's apt mirror (`migration-evals images build`,
# bases and the layers over them built side by side). The longest step, and only the
# docker tests need it: `.ci/run` starts it in the background (`.bg.sh`) and runs the
# static checks and the other suites meanwhile. Idempotent: images whose definitions did
# not change are reused.
set -euo pipefail
cd "$(dirname "$0")/../.."

make setup
.venv/bin/migration-evals images build --jobs 3
