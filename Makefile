# Two commands matter: `make demo` and `make test` (README quick start). Both create .venv if missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP_CORE := $(VENV)/.installed-core
STAMP_TEST := $(VENV)/.installed-test

.PHONY: demo test test-fast docs figures venv install install-test bench reproduce lint typecheck clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_CORE): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[all]"
	touch $@

$(STAMP_TEST): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
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

# The fast suite: no statistical/end-to-end (slow), Spark or service tests (issue 11: a contributor's loop).
test-fast: $(STAMP_TEST)
	$(BIN)/python -m pytest src tests -m "not slow and not spark and not service" -q

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
