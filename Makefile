# Every target installs what it needs first, so a fresh machine needs only `make test` or `make run`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PORT   ?= 8000
PYTEST_ARGS ?= -n 2

.PHONY: install lock lock-upgrade run test lint typecheck unit spec bench-engine bench-api test-e2e test-image clean

install: $(STAMP)

# Exact versions with hashes from the lock files, then the project itself without its deps.
# The lock is complete, so nothing is resolved (--no-deps; `pip check` proves it complete): the
# pip of a new venv (23.x on Python 3.11.7) refuses a pinned extra such as coverage[toml].
# The Python client is its own distribution (clients/python), installed beside the service.
$(STAMP): pyproject.toml requirements.lock requirements-dev.lock clients/python/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes --no-deps -r requirements-dev.lock
	$(PY) -m pip check
	$(PY) -m pip install --quiet --no-deps -e . -e clients/python
	touch $(STAMP)

# `make lock` re-resolves the lock files after a change to pyproject.toml, keeping the pins that
# still fit; `make lock-upgrade` moves every pin to the newest release its range allows. Only
# PyPI is consulted: pip's machine-wide settings (extra indexes, local wheel folders) are off.
PIP_COMPILE = env -u PIP_FIND_LINKS -u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL -u PIP_CONSTRAINT \
	PIP_CONFIG_FILE=/dev/null $(VENV)/bin/pip-compile --quiet --generate-hashes --allow-unsafe \
	--strip-extras $(LOCK_ARGS)

lock: install
	$(PIP_COMPILE) -o requirements.lock pyproject.toml
	$(PIP_COMPILE) --extra dev -c requirements.lock -o requirements-dev.lock pyproject.toml

lock-upgrade:
	$(MAKE) lock LOCK_ARGS=--upgrade

LINTED := service devstack tests bench clients/python

lint: install
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)

typecheck: install
	$(VENV)/bin/mypy service devstack clients/python/src

# Line coverage of service/ is reported on every run; the engine and the Redis layer must keep
# COVERAGE_FLOOR percent each (coverage settings in pyproject.toml).
COVERAGE_FLOOR ?= 95
COVERED_PACKAGES := rules store

unit: install
	$(PY) -m pytest $(PYTEST_ARGS) --cov --cov-report=term
	@for pkg in $(COVERED_PACKAGES); do \
	  printf 'service/%s line coverage (floor $(COVERAGE_FLOOR)%%): ' $$pkg; \
	  $(VENV)/bin/coverage report --include="service/$$pkg/*" --format=total \
	    --fail-under=$(COVERAGE_FLOOR) || exit 1; \
	done

test: lint typecheck unit

run: install
	PORT=$(PORT) $(PY) -m devstack.serve

spec: install
	$(PY) -m service.api.spec > openapi/openapi.json

bench-engine: install
	$(PY) -m bench.bench_engine

bench-api: install
	$(PY) -m bench.bench_api

.PHONY: bench-streams
bench-streams: install
	$(PY) -m bench.bench_streams

.PHONY: bench-lobby
# 200 clients seek 4-player tables at once over two instances, bots filling after 2 s.
bench-lobby: install
	$(PY) -m bench.bench_lobby

.PHONY: bench-lobby-filter
# One filtered lobby listing's Redis commands and wall time behind BENCH_LOBBY_OTHERS tables.
bench-lobby-filter: install
	$(PY) -m bench.bench_lobby_filter

.PHONY: bench-wakeups
# Per-node pub/sub counts on a local 3-master cluster for 30 bot games with a stream each;
# BENCH_AGAINST=<another checkout> (e.g. a worktree of main) runs the same load on its code first.
bench-wakeups: install
	$(PY) -m bench.bench_wakeups

.PHONY: bench-sweep
# One sweep for lost hand-overs (service/worker/sweep.py) over many live games, one Redis and a cluster.
bench-sweep: install
	$(PY) -m bench.bench_sweep

.PHONY: bench-tables
bench-tables: install
	$(PY) -m bench.bench_tables

.PHONY: soak
# SOAK_MINUTES (default 20) of mixed traffic at half the measured capacity against the stack
# `make run` starts; writes docs/soak.md and docs/soak.png (bench/soak.py says what it checks).
soak: install
	$(PY) -m bench.soak

.PHONY: bench-bots
# e.g. BENCH_BOTS_ARGS="--hard-games 200 --results var/bench/bots.jsonl --minutes 30 --skip-http"
bench-bots: install
	$(PY) -m bench.bench_bots $(BENCH_BOTS_ARGS)

.PHONY: test-faults
# Redis killed and restarted, hung, and a cluster master killed, under load with streams
# watched (docs/design.md, "Redis faults"); also part of `make test`.
test-faults: install
	$(PY) -m pytest -p no:xdist -s tests/faults tests/cluster/test_failover.py tests/frameworks

# The Dockerfile built with buildah and run (tests/image/image.py says how); part of `make test`.
test-image: install
	$(PY) -m pytest -p no:xdist -s tests/image -m image

test-e2e: install
	$(PY) -m pytest -p no:xdist tests/e2e -m e2e

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache .hypothesis .coverage .coverage.*
