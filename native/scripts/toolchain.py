#!/usr/bin/env python3
"""Write what a static agent-httpd carries: ``NOTICE`` and ``toolchain.json`` beside it.

    toolchain.py --arch aarch64 --out build/dist/aarch64 -- CC [ARGS...]

A static binary links parts of its C library and of the compiler's runtime into itself, so the
wheel that ships it must carry their notices (musl's MIT text) and the SBOM must name them
(``scripts/sbom.py`` reads ``toolchain.json``). Every fact is asked of the compiler that built
the binary and of dpkg, which installed it (``make setup``: musl-tools, gcc-aarch64-linux-gnu,
musl-dev:arm64); the license texts come from the installed packages' copyright files, so they
match the versions linked. Debian only, as the release builds are: anything missing stops the
build with what to install.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

DEB_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}
MUSL_COPYRIGHT = Path("/usr/share/doc/musl-dev/copyright")
GCC_EXCEPTION = "GPL-3.0-or-later WITH GCC-exception-3.1"


class Missing(RuntimeError):
    """A fact this script cannot find here; the message says what to install."""


def run(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise Missing(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return done.stdout + done.stderr


def deb_package(path: str | Path) -> dict[str, str]:
    """The Debian package that installed ``path``: name, version, architecture."""
    # "musl-dev:arm64: /usr/lib/aarch64-linux-musl/libc.a": the owner keeps its architecture
    owner = run(["dpkg-query", "-S", str(Path(path).resolve())]).split(": ")[0].split(", ")[0]
    fields = "${Package}\t${Version}\t${Architecture}"
    name, version, arch = run(["dpkg-query", "-W", f"-f={fields}", owner]).split("\t")
    return {"name": name, "version": version, "arch": arch}


def upstream(version: str) -> str:
    """A Debian version without epoch and revision: 1:1.2.3-1 → 1.2.3."""
    return version.split(":", 1)[-1].rsplit("-", 1)[0]


def distro() -> str:
    """The Debian release the packages come from (``bookworm``), for their package URLs."""
    for line in Path("/etc/os-release").read_text().splitlines():
        if line.startswith("VERSION_CODENAME="):
            return line.partition("=")[2].strip('"')
    raise Missing("/etc/os-release names no VERSION_CODENAME: release builds run on Debian")


def compiler_facts(cc: list[str]) -> dict[str, Any]:
    """The compiler's driver (through musl-gcc's wrapper), its version and its package."""
    verbose = run([*cc, "-v"])
    match = re.search(r"^COLLECT_GCC=(\S+)$", verbose, re.MULTILINE)
    driver = shutil.which(match.group(1)) if match else shutil.which(cc[0])
    if driver is None:
        raise Missing(f"cannot find the compiler behind {cc[0]}")
    return {
        "name": "gcc",
        "version": run([*cc, "-dumpfullversion"]).strip(),
        "command": " ".join(cc),
        "package": deb_package(driver),
    }


def linked_facts(cc: list[str], arch: str, gcc_version: str) -> list[dict[str, Any]]:
    """What the static link takes from outside our sources: musl and GCC's runtime."""
    musl_lib = Path(f"/usr/lib/{arch}-linux-musl/libc.a")
    if not musl_lib.exists():
        raise Missing(f"{musl_lib} is missing: apt-get install musl-dev:{DEB_ARCH[arch]}")
    musl = deb_package(musl_lib)
    libgcc = deb_package(run([*cc, "-print-libgcc-file-name"]).strip())
    return [
        {
            "name": "musl",
            "version": upstream(musl["version"]),
            "license": "MIT",
            "description": "the C library, linked statically (libc.a and its start files)",
            "package": musl,
        },
        {
            "name": "libgcc",
            "version": gcc_version,
            "license": GCC_EXCEPTION,
            "description": "GCC's runtime (crtbeginS.o, crtendS.o, libgcc.a), linked statically",
            "package": libgcc,
        },
    ]


def notice(arch: str, compiler: dict[str, Any], linked: list[dict[str, Any]]) -> str:
    """The text shipped beside the binary: what it carries, under which terms, musl's text."""
    musl, libgcc = linked
    musl_pkg, gcc_pkg, cc_pkg = musl["package"], libgcc["package"], compiler["package"]
    if not MUSL_COPYRIGHT.is_file():
        raise Missing(f"{MUSL_COPYRIGHT} is missing: apt-get install --reinstall musl-dev")
    paragraphs = [
        "agent-httpd, the agent runtime of jupyter-resolve, is the jupyter-resolve developers' "
        "own code, under the package's BSD 3-Clause License (LICENSE, in the package's "
        f".dist-info/licenses/). This build for {arch} is a static executable: it carries, "
        "linked into it:",
        f"- musl libc {musl['version']} (Debian's {musl_pkg['name']} {musl_pkg['version']}, "
        f"{musl_pkg['arch']}), under the MIT license. Its copyright notices and license texts "
        f"follow, as Debian ships them ({MUSL_COPYRIGHT}).",
        f"- GCC {libgcc['version']}'s runtime: crtbeginS.o, crtendS.o and parts of libgcc.a "
        f"(Debian's {gcc_pkg['name']} {gcc_pkg['version']}), under the GNU GPL version 3 with "
        "the GCC Runtime Library Exception 3.1, which lets a program compiled with GCC carry "
        "them under the program's own license; named here for completeness.",
        f"Built with gcc {compiler['version']} (Debian's {cc_pkg['name']} {cc_pkg['version']}) "
        f"as `{compiler['command']} -static`; `make -C native dist-{arch}` in the sdist "
        "rebuilds it.",
    ]
    title = f"agent-httpd ({arch}): notices of what is linked into it"
    rule = "-" * 72
    body = "\n\n".join(
        textwrap.fill(p, 72, subsequent_indent="  " * p.startswith("-"), break_on_hyphens=False)
        for p in paragraphs
    )
    return (
        f"{title}\n{'=' * len(title)}\n\n{body}\n\n{rule}\n"
        f"musl {musl['version']}: copyright and license\n{rule}\n\n{MUSL_COPYRIGHT.read_text()}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", required=True, choices=sorted(DEB_ARCH))
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("cc", nargs="+", help="the compiler command that built the binary")
    args = parser.parse_args()
    try:
        compiler = compiler_facts(args.cc)
        linked = linked_facts(args.cc, args.arch, str(compiler["version"]))
        text = notice(args.arch, compiler, linked)
    except Missing as exc:
        print(f"agent-httpd for {args.arch}: {exc}", file=sys.stderr)
        return 1
    facts = {"arch": args.arch, "distro": distro(), "compiler": compiler, "linked": linked}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "NOTICE").write_text(text)
    (args.out / "toolchain.json").write_text(json.dumps(facts, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
