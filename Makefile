# ccwire developer entry points. `make test` and `make demo` do all set-up on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
CLAUDE := node_modules/.bin/claude
CLI_VERSION := 2.1.330

.PHONY: all venv cli test lint typecheck unit demo bench clean

all: test

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

venv: $(VENV)/.installed

$(CLAUDE): package.json
	npm install --no-audit --no-fund --loglevel=error
	@# npm may skip install scripts; the package's own postinstall puts the native binary in place.
	@$(CLAUDE) --version 2>/dev/null | grep -q '$(CLI_VERSION)' || node node_modules/@anthropic-ai/claude-code/install.cjs
	@$(CLAUDE) --version | grep -q '$(CLI_VERSION)' || (echo "expected Claude Code $(CLI_VERSION)"; exit 1)
	touch $@

cli: $(CLAUDE)

lint: venv
	$(BIN)/ruff check src tests examples
	$(BIN)/ruff format --check src tests examples

typecheck: venv
	$(BIN)/mypy

unit: venv
	$(BIN)/pytest -m "not e2e"

test: venv cli lint typecheck
	CCWIRE_CLI_PATH=$(abspath $(CLAUDE)) $(BIN)/pytest

demo: venv cli
	CCWIRE_CLI_PATH=$(abspath $(CLAUDE)) $(BIN)/python -m ccwire demo

clean:
	rm -rf $(VENV) node_modules .mypy_cache .ruff_cache .pytest_cache
