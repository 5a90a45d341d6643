"""The CycloneDX SBOM of a release wheel, and its validation (issue 50.5).

    sbom.py write --arch ARCH --version V --python PYTHON --out FILE
    sbom.py extract WHEEL...      # dist/<wheel>.cdx.json beside each wheel, validated
    sbom.py validate FILE...      # an SBOM file, or the one inside a wheel

Runs in the dist-tools venv (`make setup`), which holds the CycloneDX tools; hatch_build.py runs
``write`` for each release wheel and ships the result in the wheel's ``.dist-info/sboms/`` (PEP
770). What the SBOM holds, each part from the tool that knows it:

- the Python requirements as resolved: ``cyclonedx-py environment`` reads the environment that
  builds the wheel (PYTHON), and only what the wheel's ``dependencies`` reach through its graph
  is kept (not the dev extras installed beside them);
- the npm packages bundled into the panel: ``cyclonedx-npm`` reads ``labextension/``, and only
  those the built panel's ``third-party-licenses.json`` names (the webpack build bundles them;
  JupyterLab's own packages are shared from the host, not shipped) are kept, nested under the
  panel;
- the C toolchain and what it linked into agent-httpd: ``native/build/dist/ARCH/toolchain.json``,
  written by native/scripts/toolchain.py from the compiler and dpkg; musl and GCC's runtime are
  nested under agent-httpd, the compiler is listed with scope ``excluded`` (used, not shipped).

The result is checked with cyclonedx-python-lib's strict JSON validator before it is written.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import tomllib
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parent.parent
SPEC = "1.6"
TOOLS = Path(sys.executable).parent  # the dist-tools venv's bin/
CYCLONEDX_NPM = TOOLS.parent / "node" / "node_modules" / ".bin" / "cyclonedx-npm"
BUNDLED = REPO / "jupyter_resolve" / "labextension" / "static" / "third-party-licenses.json"
SBOM_NAME = "jupyter-resolve.cdx.json"
CACHE = REPO / "native" / "build" / "sbom"
INSTALLED = (
    "import importlib.metadata as m; "
    "print(sorted(f'{d.metadata[\"Name\"]}=={d.version}' for d in m.distributions()))"
)
OUR_LICENSE = [{"license": {"id": "BSD-3-Clause", "acknowledgement": "declared"}}]
Json = dict[str, Any]


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def tool_bom(argv: list[str], cwd: Path) -> Json:
    """The JSON SBOM a CycloneDX tool prints on stdout."""
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr}")
    bom: Json = json.loads(done.stdout)
    return bom


# Run by the environment's own Python (which builds the wheel, so hatchling's `packaging` is
# there): the distributions the requirements reach, markers evaluated there with the extras
# each requirement asks for (a test extra's pytest is not reached), and each one's License field.
CLOSURE = """
import json, re, sys
from importlib.metadata import PackageNotFoundError, distribution
from packaging.requirements import Requirement
norm = lambda name: re.sub(r"[-_.]+", "-", name).lower()
todo, found = [(Requirement(r), "") for r in json.loads(sys.argv[1])], {}
while todo:
    req, extra = todo.pop()
    if req.marker is not None and not req.marker.evaluate({"extra": extra}):
        continue
    name = norm(req.name)
    asked = found.setdefault(name, {"extras": [], "license": None})
    new = [e for e in ["", *sorted(req.extras)] if e not in asked["extras"]]
    if not new:
        continue
    asked["extras"] += new
    dist = distribution(req.name)
    asked["license"] = dist.metadata.get("License")
    for line in dist.requires or []:
        todo += [(Requirement(line), e) for e in new]
print(json.dumps(found))
"""


def environment_bom(python: str) -> Json:
    """``cyclonedx-py environment`` of ``python``; kept while its distributions stay the same,
    so the second wheel of `make dist` does not scan the same environment again."""
    listing = subprocess.run(
        [python, "-c", INSTALLED], capture_output=True, text=True, check=True
    ).stdout
    pyproject = (REPO / "pyproject.toml").read_text()
    key = hashlib.sha256(f"{python}\n{listing}\n{pyproject}".encode()).hexdigest()[:16]
    cached = CACHE / f"python-{key}.cdx.json"
    if cached.exists():
        bom: Json = json.loads(cached.read_text())
        return bom
    bom = tool_bom(
        [str(TOOLS / "cyclonedx-py"), "environment", "--pyproject", "pyproject.toml",
         "--mc-type", "library", "--sv", SPEC, "--output-reproducible", "-o", "-", python],
        REPO,
    )  # fmt: skip
    CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(bom))
    return bom


def python_part(python: str) -> tuple[list[Json], list[Json], list[str], list[Json]]:
    """Components, dependencies, the root's direct refs and the tools, of the wheel's Python
    requirements as resolved in ``python``'s environment."""
    bom = environment_bom(python)
    requirements = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    reached = json.loads(
        subprocess.run(
            [python, "-c", CLOSURE, json.dumps(requirements)],
            capture_output=True, text=True, check=True,
        ).stdout
    )  # fmt: skip
    by_name = {normalize(c["name"]): c for c in bom["components"]}
    missing = reached.keys() - by_name.keys()
    if missing:
        raise SystemExit(f"cyclonedx-py did not list {sorted(missing)} of {python}")
    components = [by_name[name] for name in sorted(reached)]
    for component in components:  # a bare License field the tool leaves out
        declared = reached[normalize(component["name"])]["license"]
        if not component.get("licenses") and declared:
            component["licenses"] = [{"license": {"name": declared, "acknowledgement": "declared"}}]
    kept = {c["bom-ref"] for c in components}
    graph = {d["ref"]: d.get("dependsOn", []) for d in bom["dependencies"]}
    dependencies = [
        {"ref": ref, "dependsOn": sorted(set(graph.get(ref, [])) & kept)} for ref in sorted(kept)
    ]
    direct = sorted(by_name[normalize(Requirement(r).name)]["bom-ref"] for r in requirements)
    return components, dependencies, direct, bom["metadata"]["tools"]["components"]


def panel_part() -> tuple[Json, list[Json], list[Json]]:
    """The panel as a component with the npm packages bundled into it nested, and the tools."""
    bom = tool_bom(
        [str(CYCLONEDX_NPM), "--flatten-components", "--sv", SPEC, "--output-reproducible",
         "--output-file", "-", "package.json"],
        REPO / "labextension",
    )  # fmt: skip
    bundled = {(p["name"], p["versionInfo"]) for p in json.loads(BUNDLED.read_text())["packages"]}
    nested = [c for c in bom["components"] if (c["name"], c.get("version")) in bundled]
    found = {(c["name"], c["version"]) for c in nested}
    if found != bundled:
        raise SystemExit(f"cyclonedx-npm does not list the bundled {sorted(bundled - found)}")
    root = bom["metadata"]["component"]
    panel = {
        "type": "library",
        "bom-ref": "panel",
        "name": root["name"],
        "version": root["version"],
        "description": "the JupyterLab panel, as built into share/jupyter/labextensions/",
        "licenses": OUR_LICENSE,
        "purl": root.get("purl", f"pkg:npm/{root['name']}@{root['version']}"),
        "components": nested,
    }
    dependencies = [{"ref": "panel", "dependsOn": sorted(c["bom-ref"] for c in nested)}]
    dependencies += [{"ref": c["bom-ref"], "dependsOn": []} for c in nested]
    return panel, dependencies, bom["metadata"]["tools"]["components"]


def deb_purl(package: Json, distro: str) -> str:
    return (
        f"pkg:deb/debian/{package['name']}@{package['version']}"
        f"?arch={package['arch']}&distro={distro}"
    )


def runtime_part(arch: str, version: str) -> tuple[list[Json], list[Json]]:
    """agent-httpd with what is linked into it nested, and the compiler that built it."""
    build = REPO / "native" / "build" / "dist" / arch
    facts = json.loads((build / "toolchain.json").read_text())
    linked = [
        {
            "type": "library",
            "bom-ref": f"linked:{item['name']}",
            "name": item["name"],
            "version": item["version"],
            "description": item["description"],
            "licenses": [{"expression": item["license"]}]
            if " " in item["license"]
            else [{"license": {"id": item["license"]}}],
            "purl": deb_purl(item["package"], facts["distro"]),
        }
        for item in facts["linked"]
    ]
    binary = (build / "agent-httpd").read_bytes()
    runtime = {
        "type": "application",
        "bom-ref": "agent-httpd",
        "name": "agent-httpd",
        "version": version,
        "description": f"the agent runtime, a static {arch} executable "
        "(jupyter_resolve/bin/agent-httpd; its notices in agent-httpd.NOTICE beside it)",
        "licenses": OUR_LICENSE,
        "hashes": [{"alg": "SHA-256", "content": hashlib.sha256(binary).hexdigest()}],
        "components": linked,
    }
    cc = facts["compiler"]
    compiler = {
        "type": "application",
        "bom-ref": "build:gcc",
        "name": cc["name"],
        "version": cc["version"],
        "scope": "excluded",
        "description": f"the C compiler that built agent-httpd ({cc['command']}), not shipped",
        "licenses": [{"expression": "GPL-3.0-or-later"}],
        "purl": deb_purl(cc["package"], facts["distro"]),
    }
    dependencies = [{"ref": "agent-httpd", "dependsOn": sorted(c["bom-ref"] for c in linked)}]
    dependencies += [{"ref": c["bom-ref"], "dependsOn": []} for c in [*linked, compiler]]
    return [runtime, compiler], dependencies


def build_sbom(arch: str, version: str, python: str) -> Json:
    py_components, py_deps, direct, py_tools = python_part(python)
    panel, panel_deps, npm_tools = panel_part()
    native, native_deps = runtime_part(arch, version)
    python_version = subprocess.run(
        [python, "-c", "import platform; print(platform.python_version())"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    root = {
        "type": "library",
        "bom-ref": "jupyter-resolve",
        "name": "jupyter-resolve",
        "version": version,
        "description": f"the jupyter-resolve wheel for Linux {arch}",
        "licenses": OUR_LICENSE,
        "purl": f"pkg:pypi/jupyter-resolve@{version}",
    }
    return {
        "$schema": f"http://cyclonedx.org/schema/bom-{SPEC}.schema.json",
        "bomFormat": "CycloneDX",
        "specVersion": SPEC,
        "version": 1,
        "metadata": {
            "timestamp": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
            "tools": {"components": [*py_tools, *npm_tools]},
            "component": root,
            "properties": [
                {
                    "name": "jupyter-resolve:python-requirements",
                    "value": f"as resolved for Python {python_version} where the wheel was "
                    "built; installed beside the package, not inside the wheel",
                }
            ],
        },
        "components": [*native, panel, *py_components],
        "dependencies": [
            {"ref": "jupyter-resolve", "dependsOn": ["agent-httpd", "panel", *direct]},
            *native_deps,
            *panel_deps,
            *py_deps,
        ],
    }


def problems(text: str) -> str | None:
    """What cyclonedx-python-lib's strict validator finds wrong with an SBOM, else None."""
    error = JsonStrictValidator(SchemaVersion.from_version(SPEC)).validate_str(text)
    return None if error is None else str(error)


def read_sbom(path: Path) -> str:
    """An SBOM file's text, or that of the SBOM in a wheel's ``.dist-info/sboms/``."""
    if path.suffix != ".whl":
        return path.read_text()
    with zipfile.ZipFile(path) as whl:
        name = next(n for n in whl.namelist() if n.endswith(f".dist-info/sboms/{SBOM_NAME}"))
        return whl.read(name).decode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    write = commands.add_parser("write", help="the SBOM of a release wheel being built")
    write.add_argument("--arch", required=True, choices=["x86_64", "aarch64"])
    write.add_argument("--version", required=True)
    write.add_argument("--python", required=True, help="the environment that builds the wheel")
    write.add_argument("--out", required=True, type=Path)
    for name in ("extract", "validate"):
        sub = commands.add_parser(name)
        sub.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args()
    if args.command == "write":
        text = json.dumps(build_sbom(args.arch, args.version, args.python), indent=2) + "\n"
        sbom = {args.out: text}
    else:
        sbom = {path.with_suffix(".cdx.json"): read_sbom(path) for path in args.paths}
    failed = {path: found for path, text in sbom.items() if (found := problems(text))}
    for path, found in failed.items():
        print(f"{path}: not a valid CycloneDX {SPEC} SBOM: {found}", file=sys.stderr)
    if args.command != "validate" and not failed:
        for path, text in sbom.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"SBOM: {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
