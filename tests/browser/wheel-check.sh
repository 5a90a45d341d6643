#!/usr/bin/env bash
# `pip install` of the wheel puts the prebuilt panel in share/jupyter/labextensions, and
# `jupyter labextension list` shows it enabled and OK. The wheel is built without isolation
# (the panel is already built by `make setup`) and installed --no-deps into a scratch venv that
# borrows the dev venv's site-packages for its dependencies.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
py="$repo/.venv/bin/python"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$py" -m pip wheel -q --no-index --no-deps --no-build-isolation -w "$work/dist" "$repo"
"$py" -m venv --without-pip "$work/venv"
site="$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > "$site/zz_dev_venv.pth"
"$py" -m pip --python "$work/venv/bin/python" install -q --no-index --no-deps "$work"/dist/*.whl
cd "$work"
listing="$("$work/venv/bin/python" -c \
  'from jupyterlab.labextensions import LabExtensionApp; LabExtensionApp.launch_instance(["list"])' 2>&1)"
echo "$listing"
echo "$listing" | grep -E 'jupyter-resolve v[0-9.]+ .*enabled.*OK' >/dev/null
echo "wheel: jupyter-resolve enabled and OK"
