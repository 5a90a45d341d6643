#!/usr/bin/env bash
# jupyter_server's own tests for the installed version (its sdist, from the package index) and
# the pytest plugins its test extra adds beyond ours, under $VENV/peer-suite/. Made once per
# version; `make setup` runs it, tests/peer_suite/run.py uses it.
set -euo pipefail
VENV=${1:-.venv}
version=$("$VENV/bin/python" -c 'import jupyter_server; print(jupyter_server.__version__)')
dest="$VENV/peer-suite"
tree="$dest/jupyter_server-$version"
[[ -f "$tree/.complete" ]] && exit 0
mkdir -p "$dest/downloads"
"$VENV/bin/pip" download -q --no-deps --no-binary :all: "jupyter_server==$version" \
	-d "$dest/downloads"
rm -rf "$tree"
# Only its tests and its pytest settings: its package stays the installed one.
tar -xzf "$dest/downloads/jupyter_server-$version.tar.gz" -C "$dest" \
	"jupyter_server-$version/tests" "jupyter_server-$version/pyproject.toml"
# Its test extra, less what the venv has (pytest, pytest-jupyter, pytest-timeout, ipykernel,
# requests) and pre-commit; apart, so our own suite does not load them.
"$VENV/bin/pip" install -q --no-deps --upgrade --target "$dest/plugins" \
	'pytest-console-scripts==1.4.1' 'flaky==3.8.1'
touch "$tree/.complete"
