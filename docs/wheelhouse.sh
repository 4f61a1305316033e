#!/bin/sh
# Fills build/wheels with the Python dependencies of docs/Dockerfile's image, downloaded
# on this machine (its own proxies and certificates apply), so the image builds with no
# package index: the builder installs from the wheelhouse alone.
#
#   sh docs/wheelhouse.sh          (PYTHON=... names the interpreter with pip; default .venv)
#
# The image's Python is Debian 12's 3.11.2. Environment markers are judged with this
# machine's Python, so what they add below 3.11.3 is named here: redis's async-timeout.
set -eu
cd "$(dirname "$0")/.."
python="${PYTHON:-.venv/bin/python}"
mkdir -p build/wheels
"$python" -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
  > build/requirements.txt
"$python" -m pip download --quiet --dest build/wheels --only-binary=:all: --python-version 3.11 \
  -r build/requirements.txt "async-timeout>=4.0.3"
echo "build/wheels: $(ls build/wheels | wc -l) wheel(s)"
