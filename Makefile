# Two commands matter: `make demo` and `make test` (README quick start). Both create .venv if missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP_CORE := $(VENV)/.installed-core
STAMP_TEST := $(VENV)/.installed-test
STAMP_TEST_CORE := $(VENV)/.installed-test-core

.PHONY: demo test test-fast test-lowest docs figures venv install install-test bench reproduce lint typecheck clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_CORE): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[all]"
	touch $@

$(STAMP_TEST): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@ $(STAMP_TEST_CORE) $(STAMP_CORE)

# The test tools without Spark (pyspark is ~400 MB and wants a JVM): enough for the fast suite.
$(STAMP_TEST_CORE): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test-core]"
	touch $@ $(STAMP_CORE)

venv: $(BIN)/python
install: $(STAMP_CORE)
install-test: $(STAMP_TEST)

# The in-memory demo, then the collection flow on 127.0.0.1 ending with a design report and a release report
# (build/demo/design.html, build/demo/release.html; their paths are printed last).
demo: $(STAMP_CORE)
	$(BIN)/sufficientdp demo
	$(BIN)/sufficientdp demo --collector --seed 1 --report-dir build/demo

test: $(STAMP_TEST)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m pytest src tests README.md

# The fast suite: no statistical/end-to-end (slow), Spark or service tests (issue 11: a contributor's loop, under a
# minute), on every core (pytest-xdist).
test-fast: $(STAMP_TEST_CORE)
	$(BIN)/python -m pytest src tests -m "not slow and not spark and not service" -q -n auto

# The lowest declared dependency versions (issue 11): the runtime dependencies (numpy, scipy) and the two extras the
# core tests touch (pandas for to_pandas(), cli for progress) pinned at pyproject's lower bounds by
# scripts/lowest_pins.py in a separate venv; the core tests of the fast suite run there against the source tree. A
# lower bound the code has outgrown fails here instead of at a user's install. The test tools are not pinned.
LOWEST_VENV ?= build/venv-lowest
CORE_TESTS  := tests/accounting tests/aggregation tests/calibration tests/census tests/estimation \
               tests/randomization tests/ratio tests/semantics tests/test_parameters.py
test-lowest:
	rm -rf $(LOWEST_VENV)
	$(PYTHON) -m venv $(LOWEST_VENV)
	$(PYTHON) scripts/lowest_pins.py --extra pandas --extra cli > $(LOWEST_VENV)/pins.txt
	$(LOWEST_VENV)/bin/python -m pip install --quiet -r $(LOWEST_VENV)/pins.txt -c $(LOWEST_VENV)/pins.txt \
	    "pytest>=7.4" "hypothesis>=6.90" "mpmath>=1.3" "dp-accounting>=0.4"
	$(LOWEST_VENV)/bin/python -m pip check
	$(LOWEST_VENV)/bin/python -c "import numpy, scipy; print('lowest: numpy', numpy.__version__, 'scipy', scipy.__version__)"
	PYTHONPATH=src $(LOWEST_VENV)/bin/python -m pytest $(CORE_TESTS) -m "not slow and not spark and not service" \
	    -q -p no:cacheprovider

# The API reference and guides (mkdocs + mkdocstrings, from the docstrings) into site/.
docs: $(STAMP_TEST)
	$(BIN)/mkdocs build --site-dir site

bench: $(STAMP_TEST)
	$(BIN)/python benchmarks/run_all.py

# Seed 001's figures regenerated with sufficientdp.plot (PNG + SVG + README.md) into docs/figures/ (a few minutes).
figures: $(STAMP_CORE)
	$(BIN)/python scripts/make_figures.py --output docs/figures

reproduce: $(STAMP_TEST)
	$(BIN)/python scripts/reproduce_001.py --output docs/reproduction.md

lint: $(STAMP_TEST)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/mypy
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache
