# Two commands on a fresh machine: `make demo` and `make test`. Both build the environment first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The FOCUS validator lives in an environment of its own: its pins (numpy < 2, pandas 2) clash
# with the ledger's. Tests find it at .venv-focus/bin/focus-validator.
FOCUS_VENV := .venv-focus
FOCUS_STAMP := $(FOCUS_VENV)/.installed

.PHONY: env focus-env chromium java postgresql demo test test-fast bench lint format docs clean

env: $(STAMP)

# LiteLLM's price map (`ledger rates import`) comes out of the wheel pinned in
# requirements-prices.txt, downloaded without installing it (ledger/finops/price_map.py).
$(STAMP): requirements.txt constraints.txt pyproject.toml requirements-prices.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt -c constraints.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(BIN)/python -m ledger.finops.price_map
	@touch $(STAMP)

focus-env: $(FOCUS_STAMP)

$(FOCUS_STAMP): requirements-focus.txt
	@test -x $(FOCUS_VENV)/bin/python || $(PYTHON) -m venv $(FOCUS_VENV)
	$(FOCUS_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-focus.txt
	@touch $(FOCUS_STAMP)

demo: env
	$(BIN)/ledger demo

# The browser test drives Debian's chromium; installed here (needs root and apt-get) when missing.
CHROMIUM := /usr/bin/chromium

chromium:
	@test -x $(CHROMIUM) || { \
		command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] || { \
			echo "$(CHROMIUM) is missing: sudo apt-get update && sudo apt-get install -y chromium"; \
			exit 1; }; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; }

# pyspark (LEDGER_ENGINE=spark, the Spark tests, `make bench`) needs a Java 17 runtime; installed
# here (needs root and apt-get) when `java` is missing.
java:
	@command -v java >/dev/null || { \
		command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] || { \
			echo "java is missing: sudo apt-get update && sudo apt-get install -y openjdk-17-jre-headless"; \
			exit 1; }; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless; }

# The Dagster instance test (tests/ops/test_ledger_up.py) starts Debian's PostgreSQL server
# (/usr/lib/postgresql/<version>/bin); installed here (needs root and apt-get) when missing.
postgresql:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || { \
		command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] || { \
			echo "PostgreSQL is missing: sudo apt-get update && sudo apt-get install -y postgresql"; \
			exit 1; }; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql; }

# Two workers, a test file at a time; the files that share a warehouse-building session fixture go
# to one worker together (WORKER_UNITS in tests/plugins/worker_units.py), so each such warehouse is
# built once, the Spark unit first, so that its builds overlap the rest of the suite.
test: env focus-env chromium java postgresql
	$(BIN)/python -m pytest -n 2 --dist loadfile

# Everything but the build-heavy modules (marked `integration`): a quick loop while editing.
test-fast: env
	$(BIN)/python -m pytest -m "not integration"

bench: env java
	$(BIN)/python -m benchmarks.bench

# Python (ruff) and the dbt project's SQL (sqlfluff, configured in dbt/.sqlfluff). CI runs it
# before the tests.
lint: env
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/sqlfluff lint dbt/models dbt/data-tests

format: env
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

# The documentation site (mkdocs.yml, docs/) into site/; --strict: a broken link or anchor fails.
# The documentation site (mkdocs.yml, docs/) into site/; --strict turns a broken link, anchor or a
# page missing from the nav into an error. NO_MKDOCS_2_WARNING quiets Material's banner about a
# future MkDocs, which is not about this site.
docs: env
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) $(FOCUS_VENV) data/home dbt/target dbt/logs site
