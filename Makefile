# Two commands do all set-up on a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench browser install clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch is pinned exactly: pip takes the CPU build from local disk on these machines.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/neuraldbg demo

lint: $(STAMP)
	$(BIN)/ruff check neuraldbg causal tests benchmarks
	$(BIN)/mypy

test: $(STAMP) lint
	# pytest, not python -m pytest: the latter puts this folder on sys.path, where datasets/
	# (no __init__.py) imports as a namespace package that transformers takes for Hugging
	# Face's datasets library (its Trainer then fails)
	$(BIN)/pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/overhead.py

# headless Chromium for the report screenshots (benchmarks/report_screenshot.py and the tests
# marked `browser`, which skip without it): Debian's package, installed when missing
browser:
	@command -v chromium >/dev/null || (apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium)

clean:
	rm -rf $(VENV) neuraldbg_runs .pytest_cache .mypy_cache .ruff_cache
