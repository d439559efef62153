# Two commands on a fresh machine: `make demo` and `make test`. Both build the environment first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: env demo test bench lint format clean

env: $(STAMP)

$(STAMP): requirements.txt constraints.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt -c constraints.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $(STAMP)

demo: env
	$(BIN)/ledger demo

test: env
	$(BIN)/python -m pytest

bench: env
	$(BIN)/python -m ledger.bench

lint: env
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

format: env
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) data/home dbt/target dbt/logs
