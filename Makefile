# The two commands of the README: `make run` and `make test`. Both build .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m api.serve

# Uses a PostgreSQL of its own (database webdata_test) when one answers on 127.0.0.1:5432,
# unless TEST_DATABASE_URL is set already; a Redis of its own unless REDIS_URL is set.
test: $(STAMP)
	TEST_DATABASE_URL="$${TEST_DATABASE_URL:-$$($(PY) -m tests.postgres)}" \
	  $(PY) -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .

bench: $(STAMP)
	$(PY) bench/latency.py

clean:
	rm -rf $(VENV) var .pytest_cache
