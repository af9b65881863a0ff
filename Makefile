# Quick start: `make demo` (set up, run the main job on the built-in demo set) and
# `make test` (set up, run the tests). Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.streamrag-installed

.PHONY: demo test test-all lint setup clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,dense,ner,live,dask,fast]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/streamrag demo

test: $(STAMP)
	$(BIN)/python -m pytest -n 2

# The default run leaves out tests marked slow; this runs them too.
test-all: $(STAMP)
	$(BIN)/python -m pytest -n 2 -m ''

clean:
	rm -rf $(VENV) streamrag-demo .pytest_cache .hypothesis

lint: $(STAMP)
	$(BIN)/ruff check streamrag tests benchmarks scripts
	$(BIN)/ruff format --check streamrag tests benchmarks scripts
	$(BIN)/mypy
