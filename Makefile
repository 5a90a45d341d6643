# The two commands people use: `make lab` and `make test`. Everything else supports them.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.setup-stamp
PYTHON ?= python3
APT_PACKAGES := build-essential cmake curl bubblewrap clang libclang-rt-14-dev chromium
# the release builds: static agent-httpd linking musl for x86_64 and aarch64 (Debian's cross
# compiler with arm64's musl-dev, multiarch), tested under qemu
APT_PACKAGES += musl-tools gcc-aarch64-linux-gnu musl-dev:arm64 qemu-user
# tests/hub: the hub service's usage database on a real Postgres (a cluster the tests start)
APT_PACKAGES += postgresql
# The JupyterLab panel: sources in labextension/, built into jupyter_resolve/labextension/ and
# linked into the venv's share/jupyter/labextensions/ (a wheel ships it there as shared data).
LABEXT_NAME := jupyter-resolve
LABEXT_OUT := jupyter_resolve/labextension/package.json
LABEXT_LINK := $(VENV)/share/jupyter/labextensions/$(LABEXT_NAME)
# How `jupyter labextension list` names the panel's installer, "(python, jupyter_resolve)": the
# build does not write it, so it is copied beside the build (a wheel gets it from hatch_build.py).
LABEXT_INSTALL := jupyter_resolve/labextension/install.json
LABEXT_SRC := $(shell find labextension/src labextension/style labextension/schema -type f 2>/dev/null) \
	labextension/package.json labextension/package-lock.json labextension/tsconfig.json
# Where `make lab` serves; the scripted model needs no network and no key. `make lab
# MODEL=local` runs it on the local llama.cpp model instead (c.Resolve.provider = "local").
LAB_PORT ?= 8888
MODEL ?=
# llama-cpp-python (the local extra) builds from source once; pip caches the wheel. No
# -march=native: the cached wheel runs on any x86-64 CPU with AVX2 and FMA, not only this one.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF
# configurable-http-proxy for the JupyterHub tests (tests/hub), from the npm registry, kept
# under the venv (no global install); tests/hub finds it there.
HUB_PROXY := $(VENV)/hub-node/node_modules/.bin/configurable-http-proxy
# MCP servers and clients nobody here wrote, for tests/jupyter_resolve/mcp: the reference
# server-everything and the MCP Inspector (its --cli), from the npm registry, under the venv.
# Inspector 0.17 is the last line with --header in its CLI that runs on Node 20.
MCP_NODE := $(VENV)/mcp-node/node_modules/.bin/mcp-server-everything
# An open-source ACP agent for tests/jupyter_resolve/acp (issue 36): OpenCode from the npm registry
# (its platform binary comes as a registry package), under the venv; the test gives it a local
# fake model, so it runs offline.
ACP_NODE := $(VENV)/acp-node/node_modules/.bin/opencode
# Code nobody here wrote, each in a venv of its own under the venv, made once (the stamp): the
# official A2A SDK in its 0.3 and 1.x lines (they cannot share a venv), for
# tests/jupyter_resolve/clients; the LiteLLM proxy (real server code with mock responses) for
# tests/jupyter_resolve/litellm, with litellm and langchain-openai as clients of the facade
# (their pins clash with the lab's packages).
CLIENT_VENVS := $(VENV)/a2a-03/.stamp $(VENV)/a2a-1/.stamp $(VENV)/litellm/.stamp \
	$(VENV)/dist-tools/.stamp
CLIENT_PINS_a2a-03 := 'a2a-sdk==0.3.26'
CLIENT_PINS_a2a-1 := 'a2a-sdk>=1.3,<2'
CLIENT_PINS_litellm := 'litellm[proxy]>=1.60' 'langchain-openai>=0.3'
# jupyter-collaboration (issue 40) in a venv of its own, never in the main one: installed, its
# server extension turns itself on and makes every open notebook a shared room, which would change
# what every other test sees. The venv sees the main venv's packages through a .pth that adds
# its site-packages as a site dir (so its own .pth files, the editable install's, apply too;
# nothing is installed twice) and the lab's assets, extensions and server config through links;
# tests/jupyter_resolve/collab runs in it. The version the issue was reported against.
COLLAB_VENV := $(VENV)/collab
COLLAB_PINS := 'jupyter-collaboration==5.0.4'
PURELIB := -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'
# `make dist` checks its files with twine and auditwheel (tests/packaging too)
CLIENT_PINS_dist-tools := 'twine>=5' 'auditwheel>=6'
# and writes each wheel's CycloneDX SBOM (hatch_build.py runs scripts/sbom.py) with the CycloneDX
# tools: cyclonedx-py and cyclonedx-python-lib's validator in the dist-tools venv, cyclonedx-npm
# from the npm registry under it (its own stamp, so a venv made before gets them too)
SBOM_TOOLS := $(VENV)/dist-tools/.sbom-stamp
SBOM_PINS := 'cyclonedx-bom>=7,<8' 'cyclonedx-python-lib[json-validation]>=11,<12'
SBOM_NPM := @cyclonedx/cyclonedx-npm@6
# The release wheels, one per architecture, each with a static agent-httpd (hatch_build.py)
DIST_ARCHES := x86_64 aarch64
# The oldest and newest Python the py3-none wheel claims (tests/packaging installs it into a fresh
# venv of each): pyenv's builds where the machine has them (this one does; Debian 12 has 3.11
# only). Each venv holds just the package's dependencies, from the registry.
OTHER_PYTHONS := 3.10 3.13
PYENV_ROOT ?= $(HOME)/.pyenv
other_python = $(firstword $(wildcard $(PYENV_ROOT)/versions/$(1).*/bin/python$(1) /usr/bin/python$(1)))
DEPS_VENVS := $(foreach v,$(OTHER_PYTHONS),$(VENV)/deps-py$(v)/.stamp)

.PHONY: setup labextension lab test docs test-panel test-browser test-python test-native fuzz fuzz-smoke fuzz-long lint check bench clean \
	bench-compare test-bench \
	peer-suite-sources test-peer-suite dist test-arm64 test-dist

# The venv first; then what only needs it, side by side (pip and npm mostly wait on downloads).
setup: $(STAMP)
	@$(MAKE) --no-print-directory -j4 labextension $(HUB_PROXY) $(MCP_NODE) $(ACP_NODE) $(CLIENT_VENVS) \
		$(COLLAB_VENV)/.stamp $(DEPS_VENVS) $(SBOM_TOOLS) \
		peer-suite-sources

$(STAMP): pyproject.toml hatch_build.py $(shell find native -name '*.[ch]' -o -name Makefile 2>/dev/null)
	@./scripts/ensure-apt.sh $(APT_PACKAGES)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) install -q -e '.[test,lab,docs,local,hub]'
	$(MAKE) -C native
	@touch $(STAMP)

$(HUB_PROXY): | $(STAMP)
	@command -v npm >/dev/null || { echo "the hub tests need Node.js and npm" >&2; exit 1; }
	npm install --prefix $(VENV)/hub-node --no-audit --no-fund --loglevel=error configurable-http-proxy@4
	@touch $(HUB_PROXY)

$(MCP_NODE): | $(STAMP)
	@command -v npm >/dev/null || { echo "the MCP tests need Node.js and npm" >&2; exit 1; }
	npm install --prefix $(VENV)/mcp-node --no-audit --no-fund --loglevel=error \
		@modelcontextprotocol/server-everything@2026 @modelcontextprotocol/inspector@0.17
	@touch $(MCP_NODE)

$(ACP_NODE): | $(STAMP)
	@command -v npm >/dev/null || { echo "the ACP tests need Node.js and npm" >&2; exit 1; }
	npm install --prefix $(VENV)/acp-node --no-audit --no-fund --loglevel=error opencode-ai@1.18.33
	@touch $(ACP_NODE)

$(VENV)/%/.stamp: | $(STAMP)
	@test -x $(VENV)/$*/bin/python || $(PYTHON) -m venv $(VENV)/$*
	$(VENV)/$*/bin/pip install -q --upgrade pip
	$(VENV)/$*/bin/pip install -q $(CLIENT_PINS_$*)
	@touch $@

$(SBOM_TOOLS): $(VENV)/dist-tools/.stamp
	@command -v npm >/dev/null || { echo "the SBOM of the panel needs Node.js and npm" >&2; exit 1; }
	$(VENV)/dist-tools/bin/pip install -q $(SBOM_PINS)
	npm install --prefix $(VENV)/dist-tools/node --no-audit --no-fund --loglevel=error $(SBOM_NPM)
	@touch $@

$(VENV)/deps-py%/.stamp: | $(STAMP)
	@py="$(call other_python,$*)"; if [ -z "$$py" ]; then \
		echo "no Python $* here: tests/packaging skips the wheel on it" >&2; exit 0; fi; \
	test -x $(VENV)/deps-py$*/bin/python || "$$py" -m venv $(VENV)/deps-py$*; \
	$(PY) -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))' \
		> $(VENV)/deps-py$*/requirements.txt; \
	$(VENV)/deps-py$*/bin/pip install -q --upgrade pip && \
	$(VENV)/deps-py$*/bin/pip install -q -r $(VENV)/deps-py$*/requirements.txt && touch $@

$(COLLAB_VENV)/.stamp: | $(STAMP)
	@test -x $(COLLAB_VENV)/bin/python || $(PYTHON) -m venv $(COLLAB_VENV)
	echo "import site; site.addsitedir('$$($(PY) $(PURELIB))')" > \
		"$$($(COLLAB_VENV)/bin/python $(PURELIB))/_main_venv.pth"
	$(COLLAB_VENV)/bin/pip install -q $(COLLAB_PINS)
	@mkdir -p $(COLLAB_VENV)/share/jupyter/labextensions $(COLLAB_VENV)/etc/jupyter/jupyter_server_config.d
	@ln -sfn $(abspath $(VENV))/share/jupyter/lab $(COLLAB_VENV)/share/jupyter/lab
	@for ext in $(abspath $(VENV))/share/jupyter/labextensions/*; do \
		ln -sfn $$ext $(COLLAB_VENV)/share/jupyter/labextensions/; done
	@ln -sfn $(CURDIR)/jupyter_resolve/labextension $(COLLAB_VENV)/share/jupyter/labextensions/$(LABEXT_NAME)
	@for conf in $(abspath $(VENV))/etc/jupyter/jupyter_server_config.d/*.json; do \
		test -e $(COLLAB_VENV)/etc/jupyter/jupyter_server_config.d/$$(basename $$conf) || \
		ln -s $$conf $(COLLAB_VENV)/etc/jupyter/jupyter_server_config.d/; done
	@touch $@

# jupyter_server's own tests for the installed version (its sdist, from the package index) and
# the two pytest plugins its test extra adds, under $(VENV)/peer-suite; made once per version.
peer-suite-sources: | $(STAMP)
	@tests/peer_suite/fetch.sh $(VENV)

labextension: $(LABEXT_OUT) $(LABEXT_INSTALL) $(STAMP)
	@mkdir -p $(dir $(LABEXT_LINK))
	@rm -f $(dir $(LABEXT_LINK))jupyter-resolve-labextension # its name before the plugin ids were jupyter-resolve:*
	@test "$$(readlink $(LABEXT_LINK))" = "$(CURDIR)/jupyter_resolve/labextension" || \
		{ rm -rf $(LABEXT_LINK); ln -s $(CURDIR)/jupyter_resolve/labextension $(LABEXT_LINK); }

$(LABEXT_INSTALL): install.json $(LABEXT_OUT)
	cp install.json $@

$(LABEXT_OUT): $(LABEXT_SRC)
	@command -v npm >/dev/null || { echo "the panel needs Node.js >= 20.19 and npm" >&2; exit 1; }
	@test labextension/node_modules/.package-lock.json -nt labextension/package-lock.json || \
		(cd labextension && npm ci --no-audit --no-fund --loglevel=error)
	cd labextension && npm run --silent build:prod
	@touch $(LABEXT_OUT)

lab: setup
	$(VENV)/bin/jupyter lab --allow-root --no-browser --port=$(LAB_PORT) --ServerApp.ip=127.0.0.1 \
		$(if $(MODEL),--Resolve.provider=$(MODEL))

test: setup lint test-native test-arm64 fuzz-smoke check test-python test-peer-suite test-panel test-browser docs \
	test-bench

test-native:
	$(MAKE) -C native test test-dist-$(shell uname -m)

# agent-httpd for aarch64 (the static binary the aarch64 wheel ships): its unit tests and the
# e2e test under qemu-aarch64.
test-arm64:
	$(MAKE) -C native test-dist-aarch64

# The sdist and the release wheels in dist/ (the panel rebuilt first when its sources changed),
# each wheel with its CycloneDX SBOM inside (.dist-info/sboms/) and beside it (<wheel>.cdx.json,
# validated), then twine check and auditwheel show on them.
dist: labextension $(VENV)/dist-tools/.stamp $(SBOM_TOOLS)
	rm -rf dist
	$(PY) -m hatchling build -t sdist -d dist
	for arch in $(DIST_ARCHES); do \
		JUPYTER_RESOLVE_WHEEL_ARCH=$$arch JUPYTER_RESOLVE_SBOM_TOOLS=$(abspath $(VENV))/dist-tools \
		$(PY) -m hatchling build -t wheel -d dist || exit 1; done
	$(VENV)/dist-tools/bin/python scripts/sbom.py extract dist/*.whl
	$(VENV)/dist-tools/bin/twine check --strict dist/*.whl dist/*.tar.gz
	for whl in dist/*.whl; do $(VENV)/dist-tools/bin/auditwheel show $$whl || exit 1; done

# The wheel and the sdist as a user gets them (tests/packaging): tags, the static runtime, a chat
# from a fresh venv, an sdist install without Node.js, twine and auditwheel.
test-dist: setup
	$(VENV)/bin/pytest -q -p no:cacheprovider tests/packaging

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

# A check nobody here wrote: jupyter_server's own tests (kernels, the server app, extensions),
# without and with jupyter_resolve loaded in every server they make; fails when they differ.
test-peer-suite: setup
	$(PY) tests/peer_suite/run.py

test-python: setup
	$(VENV)/bin/pytest -q -p no:cacheprovider
	$(COLLAB_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/jupyter_resolve/collab

# Only the tests under real-time collaboration (jupyter-collaboration, in its own venv).
test-collab: setup
	$(COLLAB_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/jupyter_resolve/collab

# The panel's sizes (files up to 400 lines, functions up to 80, as native/ checks the C), then
# its pure modules (event folding, the SSE parser, shape checks) under node --test.
test-panel: setup
	cd labextension && npm run --silent check:sizes && npm run --silent test:unit

# The panel in a real browser (Debian's chromium) against a real `jupyter lab`, XSRF and login on.
test-browser: setup
	$(VENV)/bin/jupyter labextension list 2>&1 | grep -E '$(LABEXT_NAME) v[0-9.]+ .*enabled.*OK'
	tests/browser/wheel-check.sh
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH node --test --test-concurrency=1 tests/browser/

bench: setup
	$(PY) -m bench

# This tree beside BASE (default: the commit bench/baseline names), measured alternately in
# quick runs; exit status 1 when a gated figure is past x1.5 of the base's (bench/README.md).
BASE ?=
BENCH_COMPARE_ARGS ?= --quick
bench-compare: setup
	$(PY) -m bench --compare $(BASE) $(BENCH_COMPARE_ARGS)

# make test's check that nothing got slower: the quick comparison with bench/baseline's commit,
# three rounds (a few minutes), failing only past x1.5 (a comparison, never an absolute time).
test-bench: setup
	$(PY) -m bench --compare --quick --rounds 3

# The documentation site (Sphinx, MyST, the PyData theme), warnings as errors; offline.
docs: setup
	$(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html

clean:
	$(MAKE) -C native clean
	rm -rf $(VENV) jupyter_resolve/bin jupyter_resolve/labextension .resolve \
		labextension/lib labextension/build labextension/tsconfig.tsbuildinfo docs/_build
