#!/usr/bin/env python3
"""Fail when a C file of agent-httpd is over 600 lines or a C function over 80 (issue 15).

A function is counted from the first line of its signature to its closing brace. The code's
layout makes that easy to find: a definition's opening line starts in column 0 and ends with
"{", its body ends with "}" alone in column 0. Prints every offender and exits 1, else prints
"sizes: N files, M functions, all within limits" and exits 0.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

FILE_MAX = 600
FUNCTION_MAX = 80
ROOT = Path(__file__).resolve().parent.parent / "agent-httpd"
NOT_A_FUNCTION = re.compile(r"^(typedef|struct|enum|union)\b|=")


def functions(lines: list[str]) -> list[tuple[str, int, int]]:
    """(name, first line, line count) of every function definition."""
    found = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line[:1].strip() and line.rstrip().endswith("{") and not NOT_A_FUNCTION.search(line):
            start = i
            while start > 0:  # a signature spread over lines: back to its first line
                prev = lines[start - 1].rstrip()
                if not prev or prev.endswith((";", "}", "*/")) or prev.startswith("#"):
                    break
                start -= 1
            end = i + 1
            while end < len(lines) and not lines[end].startswith("}"):
                end += 1
            name = re.search(r"(\w+)\s*\(", "".join(lines[start : i + 1]))
            found.append((name.group(1) if name else "?", start + 1, end - start + 1))
            i = end
        i += 1
    return found


def main() -> int:
    bad = []
    files = sorted(p for p in ROOT.rglob("*") if p.suffix in (".c", ".h"))
    count = 0
    for path in files:
        lines = path.read_text().splitlines()
        rel = path.relative_to(ROOT.parent)
        if len(lines) > FILE_MAX:
            bad.append(f"{rel}: {len(lines)} lines (at most {FILE_MAX})")
        for name, first, length in functions(lines):
            count += 1
            if length > FUNCTION_MAX:
                bad.append(f"{rel}:{first}: {name}() is {length} lines (at most {FUNCTION_MAX})")
    for line in bad:
        print(f"sizes: {line}")
    if bad:
        return 1
    print(f"sizes: {len(files)} files, {count} functions, all within limits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
