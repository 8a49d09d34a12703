# Two commands do all set-up on a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench install clean

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
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/overhead.py

clean:
	rm -rf $(VENV) neuraldbg_runs .pytest_cache .mypy_cache .ruff_cache
