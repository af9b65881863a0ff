# Quick start: `make demo` (set up, run the main job on the built-in demo set) and
# `make test` (set up, run the tests). Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.streamrag-installed

.PHONY: demo test test-all lint setup browser clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,dense,ner,live,dask,fast,bench,livekit,pipecat,speech,learn,otel]'
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

clean:
	rm -rf $(VENV) streamrag-demo .pytest_cache .hypothesis

lint: $(STAMP)
	$(BIN)/ruff check streamrag tests benchmarks scripts examples
	$(BIN)/ruff format --check streamrag tests benchmarks scripts examples
	$(BIN)/mypy
