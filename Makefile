# podbook — set-up, tests and the quickstart.
#
#   make quickstart   install what is needed, run notebooks/quickstart.ipynb headless
#   make test         install what is needed, run ruff, pytest (incl. browser) and the JS tests
#   make test-fast    pytest without the browser and slow tests, in parallel (the edit loop)
#   make test-explore the Hypothesis tests with fresh randomness (every other target is seeded)
#   make lint         ruff check + ruff format --check
#   make bench        run the benchmarks in bench/ (REST, queue, streaming, load, pod runtime,
#                     work on a pod, serverless, scale, first magic); figures
#   make conformance  schemathesis against the emulator (scripts/conformance.py)
#   make test-live    opt-in check of the real service with RUNPOD_API_KEY (never in make test)
#   make operations-table  write docs/operations.md (scripts/operations_table.py)
#   make docs         build the documentation site into site/ (mkdocs build --strict)
#   make clean        remove test outputs and caches (distclean also removes .venv, node_modules)
#
# Set-up is stamped: a second run only redoes a step whose inputs changed.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CHROMIUM := /usr/lib/chromium/chromium
PY_STAMP := $(VENV)/.podbook-installed
DOCS_STAMP := $(VENV)/.podbook-docs-installed
JS_DIR := js
JS_STAMP := $(JS_DIR)/node_modules/.podbook-installed
PYTEST_ARGS ?=
# No package's install-time analytics (js/package.json says so too).
export SCARF_ANALYTICS := false
# Bytecode caches on, even where the environment turns them off: the tests start hundreds of
# Python processes (emulators, workers, kernels), each of which would compile podbook from
# source, and pytest would rewrite every test module again in each of its workers.
unexport PYTHONDONTWRITEBYTECODE

# The JS project lands separately; skip its stages until it has a package.json.
HAVE_JS := $(wildcard $(JS_DIR)/package.json)


.PHONY: help setup setup-python setup-docs setup-browser setup-js setup-ssh setup-sandbox quickstart test test-ruff test-python test-python-main test-python-fallback \
        test-browser test-js test-live test-explore lint format bench conformance operations-table docs \
        refresh-reference clean distclean

help:
	@echo "make quickstart   run notebooks/quickstart.ipynb end to end against the local emulator"
	@echo "make test         run every test: ruff, pytest (unit, notebooks, browser), JS tests"
	@echo "make test-fast    the edit-test loop: pytest without browser and slow tests, in parallel"
	@echo "make test-explore the Hypothesis tests with fresh randomness (the others are deterministic)"
	@echo "make lint         ruff check and ruff format --check"
	@echo "make bench        run bench/rest.py, jobqueue.py, stream.py, load.py, podruntime.py, remote.py,"
	@echo "                  serverless.py, scale.py, firstmagic.py"
	@echo "make conformance  schemathesis: REST reference + queue document against the emulator"
	@echo "make test-live    check the real service with RUNPOD_API_KEY (PODBOOK_LIVE_SPEND=1: one CPU pod)"
	@echo "make operations-table  write docs/operations.md from the reference, client, magics, emulator"
	@echo "make docs         build the documentation site into site/ (mkdocs build --strict)"
	@echo "make format       ruff format (rewrites files)"
	@echo "make clean        remove artifacts and caches;  make distclean also removes .venv"

# ---------------------------------------------------------------- set-up

setup: setup-python setup-browser setup-js setup-ssh setup-sandbox

setup-python: $(PY_STAMP)

$(PY_STAMP): pyproject.toml
	scripts/ensure_venv.sh "$(PYTHON)" "$(VENV)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
	touch $@

# The docs extra (mkdocs, Material, mkdocstrings) on top of the test set-up; only `make docs`
# needs it.
setup-docs: $(DOCS_STAMP)

$(DOCS_STAMP): $(PY_STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[test,docs]"
	touch $@

setup-browser: $(CHROMIUM)

$(CHROMIUM):
	scripts/ensure_chromium.sh

# The OpenSSH client (ssh, scp, sftp, ssh-keygen): the quickstart SSHes into its pod, and the
# pod SSH tests.
setup-ssh:
	scripts/ensure_openssh.sh

# bubblewrap (bwrap): the pod sandbox (podbook emulator --sandbox bwrap) and its tests.
setup-sandbox:
	scripts/ensure_bubblewrap.sh

ifneq ($(HAVE_JS),)
setup-js: $(JS_STAMP)

$(JS_STAMP): $(JS_DIR)/package.json $(wildcard $(JS_DIR)/package-lock.json)
	@command -v npm >/dev/null || { echo "error: npm not found; the JS tests need node >= 20.19 with npm (https://nodejs.org)" >&2; exit 1; }
	cd $(JS_DIR) && npm ci --no-audit --no-fund
	touch $@
else
setup-js:
	@echo "js/package.json not found: skipping the JS set-up"
endif

# ---------------------------------------------------------------- main job

quickstart: setup-python setup-ssh
	$(BIN)/python scripts/run_quickstart.py

# ---------------------------------------------------------------- tests

# pytest exits 5 when a stage collected no tests; that is success for a stage
# that may still be empty. Any other non-zero code fails the run.
# Usage: $(call pytest_stage,STAGE NAME,PYTEST ARGS)
define pytest_stage
	$(BIN)/pytest $(2) $(PYTEST_ARGS) || { rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "$(1): no tests collected (ok)"; \
	  else exit $$rc; fi; }
endef

# Every stage runs (-k) even when an earlier one failed; the run fails if any stage did.
# The pytest and browser stages run side by side (-j2; each stage's output is printed whole
# when it ends), then ruff and the JS tests. The machine's cores are the limit: running the
# process-runtime rerun beside the main pytest run made both slower and the run longer.
test: setup
	$(MAKE) -k -j2 --output-sync=target --no-print-directory test-python test-browser test-ruff test-js

test-ruff: setup-python
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Six pytest-xdist workers on two cores: most tests wait on emulator processes, workers and
# kernels. --dist loadfile keeps a module's tests (and its module-scoped emulator) on one
# worker; the longest modules go first (tests/conftest.py LONGEST).
# tests/browser is not even collected, nor the Playwright plugin loaded: their imports alone cost
# every worker seconds.
XDIST := -n 6 --dist loadfile -p no:playwright
# Pods run in the sandbox where bubblewrap works (the default, --sandbox auto); the tests whose
# pods run scripts, notebooks, SSH and the guard run again in the process runtime, the
# fallback where it does not (tests/runtime names its mode per test).
FALLBACK_TESTS := tests/test_notebooks.py tests/notebook/test_guard_magics.py \
	tests/notebook/test_remote_magics.py tests/guard tests/remote
test-python: test-python-main
	$(MAKE) --no-print-directory test-python-fallback

test-python-main: setup-python setup-js setup-ssh setup-sandbox
	$(call pytest_stage,test-python,-m "not browser" --ignore=tests/browser $(XDIST) --durations=20)

test-python-fallback: setup-python setup-ssh setup-sandbox
	PODBOOK_SANDBOX=none $(call pytest_stage,test-python (process runtime),-m "not browser" $(FALLBACK_TESTS) $(XDIST))

# The edit-test loop: no browser, no slow test (tests/conftest.py SLOW).
test-fast: setup-python setup-ssh setup-sandbox
	$(call pytest_stage,test-fast,-m "not browser and not slow" --ignore=tests/browser $(XDIST) -q)

# Every target above runs Hypothesis's "deterministic" profile (tests/conftest.py): the same
# examples on every run, so CI passes or fails on the code, never on the draw. This one runs
# every Hypothesis test (the marker its pytest plugin sets) with fresh randomness and the
# example database in .hypothesis/, to find new failing inputs; pin one with @example.
test-explore: setup-python
	$(call pytest_stage,test-explore,-m "hypothesis and not browser" --ignore=tests/browser --hypothesis-profile explore $(XDIST) -q)

test-browser: setup-python setup-browser
	$(call pytest_stage,test-browser,-m browser tests/browser)

ifneq ($(HAVE_JS),)
test-js: setup-js
	cd $(JS_DIR) && npm test
else
test-js:
	@echo "js/package.json not found: no JS tests to run"
endif

# The opt-in live check of the real service (docs/live-check.md): read-only unless
# PODBOOK_LIVE_SPEND=1. Never part of `make test` or CI. Without RUNPOD_API_KEY it says what
# to set and exits 2 without sending anything.
test-live: setup-python
	$(BIN)/python -m podbook live-check

lint: setup-python
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: setup-python
	$(BIN)/ruff format .

# ---------------------------------------------------------------- benchmarks

bench: setup-python setup-ssh
	$(BIN)/python bench/rest.py
	$(BIN)/python bench/jobqueue.py
	$(BIN)/python bench/stream.py
	$(BIN)/python bench/load.py
	$(BIN)/python bench/podruntime.py
	$(BIN)/python bench/remote.py
	$(BIN)/python bench/serverless.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/podlist.py
	$(BIN)/python bench/firstmagic.py

# ---------------------------------------------------------------- conformance

# schemathesis against a fresh emulator: the REST reference document and the emulator's own
# queue document (scripts/conformance.py). Longer than the bounded pass the tests run.
CONFORMANCE_ARGS ?= --max-examples 100
conformance: setup-python
	$(BIN)/python scripts/conformance.py $(CONFORMANCE_ARGS)

# ---------------------------------------------------------------- reference documents

# docs/operations.md: every reference operation with its client method, magics and emulator
# route. A test fails when the file is out of date; this target writes it again.
operations-table: setup-python
	$(BIN)/python scripts/operations_table.py

# The public documents the tests use are vendored in reference/ (see reference/README.md).
SHARED_REFERENCE ?= ../shared/reference
refresh-reference:
	@test -d "$(SHARED_REFERENCE)" || { echo "error: $(SHARED_REFERENCE) not found; set SHARED_REFERENCE=DIR" >&2; exit 1; }
	cp "$(SHARED_REFERENCE)"/*.json "$(SHARED_REFERENCE)"/*.md reference/
	@git status --short reference/ || true

# ---------------------------------------------------------------- documentation

# The site (mkdocs.yml, docs/): --strict fails on a broken link or anchor, a page missing
# from the docs folder or a docstring the API reference cannot read. Output: site/.
docs: setup-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# ---------------------------------------------------------------- cleaning

clean:
	rm -rf artifacts site test-results .pytest_cache .ruff_cache .hypothesis
	find . -path ./$(VENV) -prune -o -path ./$(JS_DIR)/node_modules -prune \
	  -o -name __pycache__ -type d -print0 | xargs -0 rm -rf

distclean: clean
	rm -rf $(VENV) $(JS_DIR)/node_modules
