# The two commands people use: `make lab` and `make test`. Everything else supports them.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.setup-stamp
PYTHON ?= python3
APT_PACKAGES := build-essential curl clang libclang-rt-14-dev
# Where `make lab` serves; the scripted model needs no network and no key.
LAB_PORT ?= 8888

.PHONY: setup lab test test-python test-native fuzz fuzz-smoke fuzz-long lint check bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml hatch_build.py $(shell find native -name '*.[ch]' -o -name Makefile 2>/dev/null)
	@./scripts/ensure-apt.sh $(APT_PACKAGES)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[test,lab]'
	$(MAKE) -C native
	@touch $(STAMP)

lab: setup
	$(VENV)/bin/jupyter lab --allow-root --no-browser --port=$(LAB_PORT) --ServerApp.ip=127.0.0.1

test: setup lint test-native fuzz-smoke check test-python

test-native:
	$(MAKE) -C native test

fuzz-smoke:
	$(MAKE) -C native fuzz-smoke

fuzz:
	$(MAKE) -C native fuzz

fuzz-long:
	$(MAKE) -C native fuzz-long

lint: setup
	$(VENV)/bin/ruff check jupyter_resolve kernel_tools tests bench hatch_build.py
	$(VENV)/bin/ruff format --check jupyter_resolve kernel_tools tests bench hatch_build.py
	$(VENV)/bin/mypy

check: setup
	$(VENV)/bin/jupyter resolve check

test-python: setup
	$(VENV)/bin/pytest -q -p no:cacheprovider

bench: setup
	$(PY) -m bench

clean:
	$(MAKE) -C native clean
	rm -rf $(VENV) jupyter_resolve/bin .resolve
