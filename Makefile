# One command sets everything up and runs the demo; one sets up and runs the tests.
#   make demo           create .venv, install, grade the bundled examples
#   make test           create .venv, install, run the offline test suite (no service needed)
#   make test-services  the tests of real services: Docker, PostgreSQL, Redis, Chromium
#                       (= make test-databases, then make test-docker)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test test-services test-databases test-docker lint docs bench bench-gate bench-gate-incremental bench-sandbox bench-webhooks bench-burst bench-scale bench-realworld bench-freshbrew images clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

demo: setup
	$(BIN)/migration-evals demo

# The pytest markers of real services (pyproject lists them). `make test` leaves them out
# whatever the machine has, so it stays fast; `make test-services` runs them (never `live`,
# which needs real API keys). Compiled test modules are cached under the virtualenv even
# where PYTHONDONTWRITEBYTECODE is set: compiling ~200 modules again costs every run seconds.
SERVICES := docker or postgres or redis or browser
OFFLINE := not ($(SERVICES)) and not live
TEST_ENV := PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(abspath $(VENV))/pycache
SUITE_BUDGET ?= 30
# The offline suite's scratch folders go to RAM where /dev/shm has 2 GB free: the suite makes
# about 100,000 files and folders, which on a disk-backed /tmp cost a third of its CPU in
# system time. Only the last run's folders are kept (about 350 MB). TEST_TMP= keeps TMPDIR.
TEST_TMP ?= $(shell d=/dev/shm; [ -d $$d ] && [ -w $$d ] && \
	[ "$$(df -Pk $$d | awk 'NR == 2 {print $$4}')" -gt 2000000 ] && echo $$d/migration-evals-$$(id -u))
OFFLINE_TMP := $(if $(TEST_TMP),TMPDIR=$(TEST_TMP))

test: setup
	$(if $(TEST_TMP),mkdir -p $(TEST_TMP))
	$(TEST_ENV) $(OFFLINE_TMP) $(BIN)/python -m pytest -m "$(OFFLINE)" --suite-budget $(SUITE_BUDGET) \
		-o tmp_path_retention_count=1

# Service URLs come from .ci/services.env (written by .ci/setup.d). Under CI=1 a test
# whose service is missing fails instead of skipping. The tests of the services that need
# no sandbox image run apart from the docker ones, so CI runs them while the images build.
SERVICE_ENV := set -a; [ ! -f .ci/services.env ] || . ./.ci/services.env; set +a;
test-services: test-databases test-docker

test-databases: setup
	$(SERVICE_ENV) $(TEST_ENV) $(BIN)/python -m pytest -m "($(SERVICES)) and not docker"

# The docker tests run one group per test module on both workers, handed out in the order
# tests/conftest.py puts them (longest first), not by their number of tests; the phase's
# time is printed against DOCKER_BUDGET, which CI's 20 minutes leave it.
DOCKER_BUDGET ?= 900

test-docker: setup
	$(SERVICE_ENV) $(TEST_ENV) $(BIN)/python -m pytest -m docker --no-loadscope-reorder --suite-budget $(DOCKER_BUDGET)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python examples/build.py --check

# The reference pages in docs/reference/ are generated from the code; a test fails when they
# are not current.
docs: setup
	$(BIN)/python scripts/gen_docs.py

bench: setup
	$(BIN)/python benchmarks/replay.py

bench-gate: setup
	$(BIN)/python benchmarks/gate.py

# PostgreSQL's URL comes from .ci/services.env (.ci/setup.d/20-postgres.sh writes it).
bench-gate-incremental: setup
	set -a; [ ! -f .ci/services.env ] || . ./.ci/services.env; set +a; \
	$(BIN)/python benchmarks/gate_incremental.py

bench-sandbox: setup
	$(BIN)/python benchmarks/sandbox.py

bench-webhooks: setup
	$(BIN)/python benchmarks/webhooks.py

bench-burst: setup
	$(BIN)/python benchmarks/burst.py

bench-scale: setup
	set -a; [ ! -f .ci/services.env ] || . ./.ci/services.env; set +a; $(BIN)/python benchmarks/scale.py

bench-realworld: setup
	$(if $(MIRRORS),,$(error set MIRRORS=DIR, the folder that holds the cases' bare git mirrors))
	$(BIN)/python benchmarks/realworld.py --mirrors $(MIRRORS) $(REALWORLD_ARGS)

bench-freshbrew: setup
	$(if $(MIRRORS),,$(error set MIRRORS=DIR, the folder that holds the repositories' bare git mirrors and FreshBrew's))
	$(BIN)/python benchmarks/freshbrew.py --mirrors $(MIRRORS) $(FRESHBREW_ARGS)

images: setup
	$(BIN)/migration-evals images build

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache migration-evals.db* migration-evals-demo.json
