# ccwire developer entry points. `make test` and `make demo` do all set-up on a fresh machine:
# `make demo` only what the demo needs (ccwire with rich; the pinned CLI alone), `make test`
# everything (the dev extra; the Node development tools of package.json's devDependencies).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
CLAUDE := node_modules/.bin/claude
DEVTOOLS := node_modules/.devtools-installed
CLI_VERSION := 2.1.330

.PHONY: all venv demo-venv cli devtools ts-sdk test test-pythons lint typecheck unit demo bench bench-sessions bench-batch bench-mcp bench-schema conformance clean ref-venv
.PHONY: phoenix-venv
.PHONY: cli-matrix e2e-matrix
.PHONY: docs

all: test

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Everything the test suite, the linters and the benchmarks use (the dev extra).
$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

venv: $(VENV)/.installed

# What `ccwire demo` needs: ccwire and rich (its live display), nothing else.
$(VENV)/.demo-installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[cli]'
	touch $@

demo-venv: $(VENV)/.demo-installed

# The pinned Claude Code CLI alone: package.json's dependencies, from the lock file
# (`npm ci` never writes package.json or package-lock.json).
$(CLAUDE): package.json package-lock.json
	npm ci --omit=dev --no-audit --no-fund --loglevel=error
	@# npm may skip install scripts; the package's own postinstall puts the native binary in place.
	@$(CLAUDE) --version 2>/dev/null | grep -q '$(CLI_VERSION)' || node node_modules/@anthropic-ai/claude-code/install.cjs
	@$(CLAUDE) --version | grep -q '$(CLI_VERSION)' || (echo "expected Claude Code $(CLI_VERSION)"; exit 1)
	touch $@

cli: $(CLAUDE)

# Anthropic's TypeScript Agent SDK, the version whose bundled Claude Code is the pinned CLI:
# tests/compat reads its type declarations for the comparison in docs/migration.md. Pinned
# by tests/compat/ts-sdk's package.json and lock, installed in a prefix of its own without
# its optional native CLI binary and its peer dependencies (only its .d.ts files are read).
TS_SDK_PIN := tests/compat/ts-sdk
TS_SDK := .cache/ts-sdk/.installed

$(TS_SDK): $(TS_SDK_PIN)/package.json $(TS_SDK_PIN)/package-lock.json
	rm -rf .cache/ts-sdk
	mkdir -p .cache/ts-sdk
	cp $^ .cache/ts-sdk/
	npm ci --prefix .cache/ts-sdk --omit=optional --legacy-peer-deps --no-audit --no-fund --loglevel=error
	touch $@

ts-sdk: $(TS_SDK)

# The Node development tools, package.json's devDependencies (the MCP Inspector CLI, the
# MCP conformance suite, and the Node 22 it needs), beside the CLI: for the test suite.
$(DEVTOOLS): package.json package-lock.json
	npm ci --include=dev --no-audit --no-fund --loglevel=error
	@$(CLAUDE) --version 2>/dev/null | grep -q '$(CLI_VERSION)' || node node_modules/@anthropic-ai/claude-code/install.cjs
	@$(CLAUDE) --version | grep -q '$(CLI_VERSION)' || (echo "expected Claude Code $(CLI_VERSION)"; exit 1)
	touch $(CLAUDE) $@

devtools: $(DEVTOOLS)

lint: venv
	$(BIN)/ruff check src tests examples
	$(BIN)/ruff format --check src tests examples
	$(BIN)/lint-imports

typecheck: venv
	$(BIN)/mypy

unit: venv
	$(BIN)/pytest -m "not e2e"

# Branch coverage of the main run is printed, and checked against the floor in
# pyproject.toml ([tool.coverage.report] fail_under), which may only rise.

# tests/compat compares ccwire with claude-agent-sdk, which lives in its own venv (ref-venv)
# The main run goes on two workers (pytest-xdist `-n 2`: CI's machine has two cores), and
# pytest-cov combines their coverage. `--dist loadgroup` hands the tests out one at a
# time (no test carries an `xdist_group` mark: with pytest 9, xdist 3.8 could not apply
# one), so the run ends with its last test, not a worker's backlog. Each worker makes
# its own module fixtures (the docs site, the wheel). The Ray cluster's fault tests
# (tests/batch/test_batch_ray.py) kill actors and nodes at chosen moments: they run
# after, in one process with the machine to themselves, and their coverage is added
# to the main run's before the floor is checked.
TEST_ENV = CCWIRE_CLI_PATH=$(abspath $(CLAUDE)) CCWIRE_REF_PYTHON=$(abspath $(REF_PY)) \
  CCWIRE_REQUIRE_REF=1 CCWIRE_PHOENIX_PYTHON=$(abspath $(PHOENIX_PY)) CCWIRE_REQUIRE_PHOENIX=1 \
  CCWIRE_REQUIRE_TS_SDK=1
RAY_FAULTS := tests/batch/test_batch_ray.py
test: venv devtools ref-venv phoenix-venv ts-sdk lint typecheck docs
	$(TEST_ENV) $(BIN)/pytest -n 2 --dist loadgroup --ignore=$(RAY_FAULTS) \
	  --cov=ccwire --cov-report= --cov-fail-under=0
	$(TEST_ENV) $(BIN)/pytest $(RAY_FAULTS) --cov=ccwire --cov-append \
	  --cov-report=term:skip-covered
	@$(MAKE) --no-print-directory test-pythons

# The suite again on the oldest and the newest supported Python (the main run above uses
# the default python3), each in its own venv (.venv-3.10, ...). The interpreter comes
# from pyenv's versions or PATH; one this machine lacks is reported and skipped.
# These runs look for what differs between Pythons, so they leave out what the main run
# has already checked once and for all: the end-to-end tier (the real CLI: the same bytes
# on every Python), the project's own checks (docs, wheel, bench smoke: tests/project)
# and the property-based fuzzing (tests/fuzz). The two run side by side, each in a
# process of its own, and print their output when they end (`--output-sync`).
PYTHONS := 3.10 3.13
OTHER_PYTHONS_SKIP := -m "not e2e" --ignore=tests/project --ignore=tests/fuzz
PYENV_ROOT ?= $(HOME)/.pyenv
find_python = $(firstword $(wildcard $(PYENV_ROOT)/versions/$(1).*/bin/python$(1)) \
  $(shell python$(1) -c 'import sys; print(sys.executable)' 2>/dev/null))
FOUND_PYTHONS := $(foreach v,$(PYTHONS),$(if $(call find_python,$(v)),$(v)))

# --no-cache-dir: these venvs repeat the main one's packages; a second copy of every
# wheel in pip's cache would only cost disk. `df` shows the room left, for CI logs.
.venv-%/.installed: pyproject.toml
	@echo "== a venv for Python $*"; df -h . | tail -1
	$(call find_python,$*) -m venv .venv-$*
	.venv-$*/bin/python -m pip install --quiet --no-cache-dir --upgrade pip
	.venv-$*/bin/python -m pip install --quiet --no-cache-dir -e '.[dev]'
	touch $@

test-pythons: devtools ref-venv ts-sdk
	@$(foreach v,$(filter-out $(FOUND_PYTHONS),$(PYTHONS)),echo "Python $(v) not found: its run is skipped";)
	@$(MAKE) --no-print-directory -j2 --output-sync=target $(addprefix test-python-,$(FOUND_PYTHONS))

# each Python's venv is made in its own branch of the -j2 make above, side by side too
# (kept: make would delete a file it made only on the way to a pattern rule's target)
.PRECIOUS: .venv-%/.installed
test-python-%: .venv-%/.installed
	@echo "== the test suite on Python $* (not the end-to-end tier, tests/project, tests/fuzz)"
	CCWIRE_CLI_PATH=$(abspath $(CLAUDE)) CCWIRE_REF_PYTHON=$(abspath $(REF_PY)) CCWIRE_REQUIRE_REF=1 \
	  CCWIRE_REQUIRE_TS_SDK=1 .venv-$*/bin/pytest -q -p no:cacheprovider $(OTHER_PYTHONS_SKIP)

demo: demo-venv cli
	CCWIRE_CLI_PATH=$(abspath $(CLAUDE)) $(BIN)/python -m ccwire demo

# The documentation site (mkdocs-material, mkdocstrings); builds offline in seconds.
$(VENV)/.docs-installed: $(VENV)/.installed pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $@

docs: $(VENV)/.docs-installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) .venv-3.* .venv-phoenix node_modules .cache .mypy_cache .ruff_cache .pytest_cache bench/.venv-ref bench/.ref-src

# --- benchmarks: ccwire vs Anthropic's claude-agent-sdk vs a hand-written floor,
# all driven by the same fake CLI (bench/fake_cli.py); results in bench/RESULTS.md.
REF_SDK := claude-agent-sdk==0.2.187
REF_PY := bench/.venv-ref/bin/python

$(REF_PY):
	$(PY) -m venv bench/.venv-ref
	$(REF_PY) -m pip install --quiet --upgrade pip
	$(REF_PY) -m pip install --quiet '$(REF_SDK)'

# Its example programs, from its sdist (tests/compat/test_reference_examples.py runs them
# on ccwire and on the reference); unpacked here, never committed.
REF_SRC := bench/.ref-src/claude_agent_sdk-0.2.187/examples/quick_start.py

$(REF_SRC): | $(REF_PY)
	$(REF_PY) -m pip download --quiet --no-deps --no-binary :all: '$(REF_SDK)' -d bench/.ref-src
	tar xzf bench/.ref-src/claude_agent_sdk-0.2.187.tar.gz -C bench/.ref-src
	touch $@

# What its examples import besides the SDK (streaming_mode_trio.py: trio; the Redis
# session store adapter: redis). A stamp of its own, so an older venv gets them too.
REF_EXAMPLE_DEPS := bench/.venv-ref/.example-deps

$(REF_EXAMPLE_DEPS): | $(REF_PY)
	$(REF_PY) -m pip install --quiet trio redis
	touch $@

# Anthropic's claude-agent-sdk in its own venv: the bench's reference and tests/compat's
ref-venv: $(REF_PY) $(REF_SRC) $(REF_EXAMPLE_DEPS)

# Arize Phoenix's local server, in a venv of its own (its dependencies are many): the
# OpenTelemetry collector that tests/e2e/test_otel_collector_e2e.py exports to over OTLP.
PHOENIX := arize-phoenix==20.26.1
PHOENIX_PY := .venv-phoenix/bin/python

$(PHOENIX_PY):
	$(PY) -m venv .venv-phoenix
	$(PHOENIX_PY) -m pip install --quiet --no-cache-dir --upgrade pip
	$(PHOENIX_PY) -m pip install --quiet --no-cache-dir '$(PHOENIX)'

phoenix-venv: $(PHOENIX_PY)

bench: venv cli $(REF_PY)
	$(BIN)/python bench/run.py --ref-python $(REF_PY) --real-cli $(abspath $(CLAUDE)) --profile $(BENCH_ARGS)

# list_sessions on 10,000 synthetic transcripts, ccwire vs the reference (bench/SESSIONS_RESULTS.md).
bench-sessions: venv $(REF_PY)
	$(BIN)/python bench/sessions_bench.py --ref-python $(REF_PY)

# Batches: run_batch's local and Ray executors against an `xargs -P N` floor, 1,000 fake-CLI
# sessions per N and 50 on the real CLI, plus the parent's memory with 100,000 queued tasks
# (bench/BATCH_RESULTS.md).
bench-batch: venv cli
	$(BIN)/python bench/batch_bench.py --real-cli $(abspath $(CLAUDE)) $(BENCH_ARGS)

# `ccwire serve` vs the official MCP SDK's own server, same tools (a section of bench/RESULTS.md).
bench-mcp: venv
	$(BIN)/python bench/mcp_bench.py

# Tool argument validation: jsonschema-rs vs the hand-written validator it replaced
# (bench/old_validator.py): compile and per-call cost (bench/SCHEMA_RESULTS.md).
bench-schema: venv
	$(BIN)/python bench/schema_bench.py

# The official MCP conformance suite (Node 22 from package.json) against `ccwire serve --http`.
conformance: venv devtools
	$(BIN)/python -m pytest tests/mcp/test_mcp_interop.py -q -k conformance

# --- compatibility matrix: the end-to-end suite against every supported CLI version
MATRIX_OLD := 2.1.197
OLD_CLAUDE := .cli/$(MATRIX_OLD)/node_modules/.bin/claude

$(OLD_CLAUDE):
	npm install --no-audit --no-fund --loglevel=error --prefix .cli/$(MATRIX_OLD) @anthropic-ai/claude-code@$(MATRIX_OLD)
	@$(OLD_CLAUDE) --version 2>/dev/null | grep -q '$(MATRIX_OLD)' || (cd .cli/$(MATRIX_OLD)/node_modules/@anthropic-ai/claude-code && node install.cjs)
	@$(OLD_CLAUDE) --version | grep -q '$(MATRIX_OLD)' || (echo "expected Claude Code $(MATRIX_OLD)"; exit 1)
	touch $@

cli-matrix: cli $(OLD_CLAUDE)

e2e-matrix: venv cli-matrix
	@status=0; for cli in $(abspath $(CLAUDE)) $(abspath $(OLD_CLAUDE)); do \
		echo "=== e2e against $$($$cli --version)"; \
		CCWIRE_CLI_PATH=$$cli $(BIN)/pytest -q -rs tests/e2e || status=1; \
	done; exit $$status
