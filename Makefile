# Quick start: `make demo` (set up, run the main job on the built-in demo set) and
# `make test` (set up, run the tests). Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.streamrag-installed

.PHONY: demo test test-all lint docs setup browser clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,docs,dense,ner,live,dask,fast,bench,livekit,pipecat,speech,learn,otel]'
	touch $(STAMP)

setup: $(STAMP) browser

# The report's browser tests drive Debian's Chromium (tests/_browser.py). Installed when
# absent and we are root with apt (CI: a fresh machine); otherwise those tests skip.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else \
	    echo "no chromium: the report's browser tests will skip (as root on Debian: apt-get install chromium chromium-driver)"; \
	  fi; }

demo: $(STAMP)
	$(BIN)/streamrag demo

test: $(STAMP) browser
	$(BIN)/python -m pytest -n 2

# The default run leaves out tests marked slow; this runs them too.
test-all: $(STAMP) browser
	$(BIN)/python -m pytest -n 2 -m ''

# The documentation site: the reference pages and benchmarks/RESULTS.md regenerated from the
# code and the result records, then built strictly (a warning, a broken link or anchor fails) into
# site/. Not --quiet: it hides the warnings that strict mode counts, and the build would pass.
docs: $(STAMP)
	$(BIN)/python scripts/docs_reference.py
	$(BIN)/python scripts/bench_results.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) streamrag-demo site .pytest_cache .hypothesis

lint: $(STAMP)
	$(BIN)/ruff check streamrag tests benchmarks scripts examples
	$(BIN)/ruff format --check streamrag tests benchmarks scripts examples
	$(BIN)/mypy
