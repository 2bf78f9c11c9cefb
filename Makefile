# Two commands set up and test a fresh clone: `make setup` then `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup test generate check clean

setup:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'

test:
	$(BIN)/python -m pytest -q

generate:
	$(BIN)/cudart-bindgen generate --all

check:
	$(BIN)/cudart-bindgen check

clean:
	rm -rf $(VENV) build *.egg-info

# `make bench BENCH_ARGS='--only cpu ...'` passes options through (see bench/README.md).
.PHONY: bench
bench:
	$(BIN)/python -m bench $(BENCH_ARGS)
