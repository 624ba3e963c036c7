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

.PHONY: run test test-multihost e2e e2e-deps lint lock bench bench-deps bench-crawl bench-export clean

$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes --no-deps -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# The web console's chart library, vendored from its npm package at this pinned version, the
# package checked against its SHA-256 before anything is taken from it; served by the app
# itself (no CDN). Without npm the console works, without its chart (the table stays).
CHARTJS_VERSION := 4.5.1
CHARTJS_SHA256 := f540d98468457ac7a0aabb32006dfb066297e096c5ea063a5d80aa973d1c337a
VENDOR := api/console/static/vendor
CHARTJS := $(VENDOR)/chart.umd.min.js

$(CHARTJS):
	@if command -v npm >/dev/null; then \
	  set -e; tmp=$$(mktemp -d); \
	  (cd $$tmp && npm pack --silent chart.js@$(CHARTJS_VERSION) >/dev/null); \
	  echo "$(CHARTJS_SHA256)  $$tmp/chart.js-$(CHARTJS_VERSION).tgz" | sha256sum -c --quiet; \
	  tar -xzf $$tmp/chart.js-$(CHARTJS_VERSION).tgz -C $$tmp package/dist/chart.umd.min.js \
	    package/LICENSE.md; \
	  mkdir -p $(VENDOR); cp $$tmp/package/LICENSE.md $(VENDOR)/chart.js-LICENSE.md; \
	  cp $$tmp/package/dist/chart.umd.min.js $@; rm -rf $$tmp; \
	else \
	  echo "npm is missing: the console is served without its usage chart" \
	       "(apt-get install npm, then make again)."; \
	fi

run: $(STAMP) $(CHARTJS)
	$(PY) -m launcher

# Uses a PostgreSQL of its own (database webdata_test) when one answers on 127.0.0.1:5432,
# unless TEST_DATABASE_URL is set already; a Redis of its own unless REDIS_URL is set.
test: $(STAMP) $(CHARTJS)
	$(VENV)/bin/ruff check .
	TEST_DATABASE_URL="$${TEST_DATABASE_URL:-$$($(PY) -m tests.support.postgres)}" \
	  $(PY) -m pytest $(PYTEST_ARGS)

# The platform on separate hosts (tests/test_multihost.py): network namespaces for db, api,
# three workers and the website, as root; skipped, saying why, where ip netns is refused.
test-multihost: $(STAMP)
	$(PY) -m pytest -m multihost -p no:cacheprovider tests/test_multihost.py -s

# The console's tests in a real browser: Debian's chromium and chromium-driver (installed
# here when missing and we are root), driven by Selenium. `make test` runs them too whenever
# chromium is installed.
E2E_TESTS := tests/test_console_browser.py
e2e-deps:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    chromium chromium-driver >/dev/null; \
	else \
	  echo "e2e-deps: install chromium and chromium-driver as root" \
	       "(apt-get install chromium chromium-driver)"; exit 1; \
	fi

e2e: $(STAMP) $(CHARTJS) e2e-deps
	$(PY) -m pytest $(E2E_TESTS)

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
