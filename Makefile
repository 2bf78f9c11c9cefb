# Two commands set up and test a fresh clone: `make setup` then `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: setup build test test-ctypes test-freethreaded test-py314 generate check clean lint \
	typecheck docs

# The checkout's tools (requirements/), then the checkout itself on the venv's path and
# the cudart-bindgen command (generator/checkout.py): the generator is not installed as
# a distribution, and the cudart wheel (pyproject.toml) does not contain it.
setup:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements/dev.txt
	$(BIN)/python -m generator.checkout
	$(MAKE) --no-print-directory build

# The compiled backend, in place (cudart/_fast_<ver>*.so): optional, as for a user's
# pip install (setup.py): without a C compiler, one line says the ctypes backend serves.
build:
	$(BIN)/python setup.py --quiet build_ext --inplace --parallel $(JOBS)

# One worker per core (pytest-xdist). Each test file runs whole in one worker, so what a
# module builds once (a version's gcc report, a fuzz grid) is built once per run; files
# are handed out in collection order (tests/conftest.py puts the longest first and the
# NVRTC tests last), not reordered by size.
# A crashed worker fails the run: pytest-xdist 3.8 with --dist loadfile hangs for good
# once it has replaced one, so none is.
WORKERS ?= auto
PYTEST_ARGS := -q -p no:cacheprovider -n $(WORKERS) --dist loadfile --no-loadscope-reorder \
	--max-worker-restart 0
PYTEST := $(BIN)/python -m pytest $(PYTEST_ARGS)

test:
	$(PYTEST)

# The tests whose outcome depends on the backend (marked `backend`), again with the
# ctypes backend forced: `make test` takes the compiled one where it is built, and CI
# runs both. The rest (generator, gcc judge, snapshots, packaging) ran once already.
test-ctypes:
	CUDART_BACKEND=ctypes $(PYTEST) -m backend

# Free-threaded CPython 3.13t (issue 25): the interpreter built once per machine under
# ~/.cache/cudart-freethreaded (tests/freethreaded/interpreter.py: about 8 minutes on two
# cores, then instant), a venv for it (requirements/freethreaded.txt: no lint or type
# tools), the compiled backend built in place for it (cudart/_fast_*.cpython-313t-*.so,
# beside the GIL build's .abi3.so), then the runtime and compiled tests on the compiled
# backend, the backend's ones again on ctypes, tests/freethreaded/, and the packaging test's
# pip install of the sdist into a fresh 3.13t venv (run by .venv's Python, which builds
# the sdist: `make setup` first).
# The GIL stays off (no PYTHON_GIL=0, which would hide a module that turns it back on):
# tests/conftest.py fails the run if anything does. A crash prints every thread's stack,
# in the interpreters the tests start too.
FT_VENV ?= .venv-ft
FT_BIN := $(FT_VENV)/bin
FT_ENV := PYTHONFAULTHANDLER=1
FT_PYTEST := $(FT_ENV) $(FT_BIN)/python -X faulthandler -m pytest $(PYTEST_ARGS)

test-freethreaded:
	ft=$$($(PYTHON) tests/freethreaded/interpreter.py --jobs $(JOBS)) && \
		$(MAKE) --no-print-directory freethreaded-run FT_PYTHON=$$ft

.PHONY: freethreaded-run
freethreaded-run:
	$(FT_PYTHON) -m venv $(FT_VENV)
	$(FT_BIN)/python -m pip install --quiet --upgrade pip
	$(FT_BIN)/python -m pip install --quiet --only-binary :all: -r requirements/freethreaded.txt
	$(FT_BIN)/python setup.py --quiet build_ext --inplace --parallel $(JOBS)
	$(FT_PYTEST) tests/runtime tests/compiled tests/freethreaded
	CUDART_BACKEND=ctypes $(FT_PYTEST) -m backend tests/runtime tests/compiled
	CUDART_FREETHREADED_PYTHON=$(FT_PYTHON) $(FT_ENV) $(BIN)/python -m pytest -q \
		-p no:cacheprovider tests/generator/test_packaging.py -k free_threaded

# CPython 3.14, the GIL build (issue 25): Debian sid's python3.14 in a debootstrap chroot
# made once per machine under ~/.cache/cudart-py314 (tests/py314/chroot.py: about 80 s;
# root and `apt-get install debootstrap`), this checkout bound at /src. Its venv
# (.venv-py314) takes the test requirements from PyPI; the compiled backend is the abi3
# build `make build` made, which serves 3.14 as it is (the chroot's gcc is the tests'
# own, for their stand-in libraries). Then tests/runtime on the compiled backend, and
# the backend's tests again on ctypes; a worker's crash fails the run, as above.
PY314 := $(PYTHON) tests/py314/chroot.py
PY314_VENV ?= .venv-py314
PY314_PYTEST := $(PY314_VENV)/bin/python -X faulthandler -m pytest $(PYTEST_ARGS)

test-py314:
	$(PY314) ensure >/dev/null
	$(PY314) run "python3.14 -m venv $(PY314_VENV) && \
		$(PY314_VENV)/bin/python -m pip install --quiet --only-binary :all: \
		-r requirements/freethreaded.txt"
	$(PY314) run "$(PY314_VENV)/bin/python -c \
		'import cudart; assert cudart.backend() == \"compiled\", \"make build first\"'"
	$(PY314) run "$(PY314_PYTEST) tests/runtime"
	$(PY314) run "CUDART_BACKEND=ctypes $(PY314_PYTEST) -m backend tests/runtime"

generate:
	$(BIN)/cudart-bindgen generate --all

check:
	$(BIN)/cudart-bindgen check

# Our own code, as CI checks it: formatting, lint rules, types (pyproject.toml says which).
lint:
	$(BIN)/python -m black --check --quiet .
	$(BIN)/python -m ruff check --quiet .
	$(BIN)/python -m mypy

# The generated modules (every version's, through cudart/_generated/) and the typing
# scripts of tests/ (a user's, on the checked and the raw layer) under mypy --strict.
# About 30 s on two cores from a cold cache; mypy's cache makes a rerun instant.
# Each version's module is a view of a merged one (cudart/_views.py), whose gates mypy
# cannot follow: `cudart-bindgen views` writes the package with every view read back
# from the merged modules as a file of its own, and mypy checks those.
TYPECHECK_TREE := build/typecheck
typecheck:
	$(BIN)/python -m generator views --package $(TYPECHECK_TREE)
	cd $(TYPECHECK_TREE) && $(abspath $(BIN))/python -m mypy --strict \
		--config-file $(CURDIR)/pyproject.toml --cache-dir $(CURDIR)/.mypy_cache/typecheck \
		cudart/sys_*.py cudart/checked_*.py cudart/nvrtc_*.py cudart/driver_*.py \
		cudart/nvjitlink_*.py \
		$(CURDIR)/tests/generator/typing_user_script.py $(CURDIR)/tests/generator/typing_raw_script.py

# The site (docs/maintainers/docs.rst): the API reference rendered from every version's
# model into docs/reference/, then Sphinx, offline, every warning an error.
DOCS_JOBS ?= auto
docs:
	$(BIN)/python -m generator docs
	$(BIN)/python -m sphinx -W --keep-going -q -j $(DOCS_JOBS) -b html docs docs/_build/html

clean:
	rm -rf docs/_build docs/reference
	rm -rf $(VENV) $(FT_VENV) $(PY314_VENV) build *.egg-info cudart/_fast_*.so cudart/kernels/_fastlaunch*.so

# `make bench BENCH_ARGS='--only cpu ...'` passes options through (see bench/README.md).
.PHONY: bench
bench:
	$(BIN)/python -m bench $(BENCH_ARGS)
