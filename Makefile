# The two commands of the README: `make run` and `make test`. Both build .venv first, from the
# lock file: every package at the version the suite last passed with, checked against its hash.
# pyproject.toml keeps the loose ranges; `make lock` re-resolves them into requirements.lock.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
LOCK := requirements.lock
# Two test processes by default (the suite starts its own Redis, workers and site per process).
PYTEST_ARGS ?= -n 2

.PHONY: run test lint lock bench bench-deps bench-crawl bench-export clean

$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes --no-deps -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m api.serve

# Uses a PostgreSQL of its own (database webdata_test) when one answers on 127.0.0.1:5432,
# unless TEST_DATABASE_URL is set already; a Redis of its own unless REDIS_URL is set.
test: $(STAMP)
	$(VENV)/bin/ruff check .
	TEST_DATABASE_URL="$${TEST_DATABASE_URL:-$$($(PY) -m tests.postgres)}" \
	  $(PY) -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .

# Re-resolve pyproject.toml's ranges (all platforms, Python 3.11+) into the hashed lock file.
lock:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet 'uv>=0.4'
	$(VENV)/bin/uv pip compile pyproject.toml --extra dev --universal --python-version 3.11 \
	  --generate-hashes --quiet --output-file $(LOCK)

bench: $(STAMP)
	$(PY) bench/latency.py

# nginx serves the crawl bench's site (bench/crawl.py); Debian's nginx-light, via apt-get.
NGINX := /usr/sbin/nginx
bench-deps:
	@if [ -x $(NGINX) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light; \
	else \
	  echo "bench-deps: $(NGINX) is missing; install nginx-light as root" \
	       "(apt-get install nginx-light). bench/crawl.py falls back to a slower static server."; \
	fi

bench-crawl: $(STAMP) bench-deps
	$(PY) bench/crawl.py

# Export of a 100,000-result collection (SQLite); EXPORT_ARGS=--postgres for PostgreSQL.
bench-export: $(STAMP)
	$(PY) bench/export.py $(EXPORT_ARGS)

clean:
	rm -rf $(VENV) var .pytest_cache
