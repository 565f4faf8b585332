# Every target installs what it needs first, so a fresh machine needs only `make test` or `make run`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PORT   ?= 8000
PYTEST_ARGS ?= -n 2

.PHONY: install run test lint typecheck unit spec bench-engine bench-api test-e2e clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

lint: install
	$(VENV)/bin/ruff check service tests
	$(VENV)/bin/ruff format --check service tests

typecheck: install
	$(VENV)/bin/mypy service

unit: install
	$(PY) -m pytest $(PYTEST_ARGS)

test: lint typecheck unit

run: install
	PORT=$(PORT) $(PY) -m service.serve

spec: install
	$(PY) -m service.api.spec > openapi/openapi.json

bench-engine: install
	$(PY) -m tests.bench.bench_engine

bench-api: install
	$(PY) -m tests.bench.bench_api

.PHONY: bench-bots
bench-bots: install
	$(PY) -m tests.bench.bench_bots

test-e2e: install
	$(PY) -m pytest -p no:xdist tests/e2e -m e2e

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache .hypothesis
