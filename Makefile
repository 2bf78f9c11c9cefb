# Two commands set up and test a fresh clone: `make setup` then `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup test generate check clean lint typecheck

# The checkout's tools (requirements/), then the checkout itself on the venv's path and
# the cudart-bindgen command (generator/checkout.py): the generator is not installed as
# a distribution, and the cudart wheel (pyproject.toml) does not contain it.
setup:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements/dev.txt
	$(BIN)/python -m generator.checkout

test:
	$(BIN)/python -m pytest -q

generate:
	$(BIN)/cudart-bindgen generate --all

check:
	$(BIN)/cudart-bindgen check

# Our own code, as CI checks it: formatting, lint rules, types (pyproject.toml says which).
lint:
	$(BIN)/python -m black --check --quiet .
	$(BIN)/python -m ruff check --quiet .
	$(BIN)/python -m mypy

clean:
	rm -rf $(VENV) build *.egg-info

# `make bench BENCH_ARGS='--only cpu ...'` passes options through (see bench/README.md).
.PHONY: bench
bench:
	$(BIN)/python -m bench $(BENCH_ARGS)
