"""notebook_read: a notebook under the server root, rendered as text with images listed."""

from __future__ import annotations

import re
import warnings
from typing import Any

from .paths import PathError, Workspace
from .result import Result, error, ok, truncate

PIECE_LIMIT = 2_000
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/svg+xml")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _cut(text: str) -> str:
    text = text.rstrip("\n")
    if len(text) <= PIECE_LIMIT:
        return text
    return f"{text[:PIECE_LIMIT]}\n[cut: {PIECE_LIMIT} of {len(text)} characters shown]"


def _output(cell_no: int, out_no: int, output: dict[str, Any]) -> list[str]:
    kind = output.get("output_type", "")
    head = f"[output {out_no}] {kind}"
    if kind == "stream":
        return [f"{head} {output.get('name', '')}", _cut(_text(output.get("text", "")))]
    if kind == "error":
        trace = ANSI.sub("", "\n".join(output.get("traceback", [])))
        return [head, _cut(trace or f"{output.get('ename')}: {output.get('evalue')}")]
    data: dict[str, Any] = output.get("data", {}) or {}
    lines = [head]
    if "text/plain" in data:
        lines.append(_cut(_text(data["text/plain"])))
    lines.extend(
        f"[{mime} in cell {cell_no} output {out_no}]" for mime in IMAGE_TYPES if mime in data
    )
    others = [m for m in data if m != "text/plain" and m not in IMAGE_TYPES]
    if others:
        lines.append(f"[also: {', '.join(sorted(others))}]")
    return lines


def render(nb: Any, path: str) -> str:
    cells = nb.get("cells", [])
    kernel = nb.get("metadata", {}).get("kernelspec", {}).get("name", "unknown")
    lines = [f"[notebook {path!r}: {len(cells)} cells, kernel {kernel}; cells numbered from 1]"]
    for number, cell in enumerate(cells, 1):
        kind = cell.get("cell_type", "?")
        head = f"[cell {number}] {kind}"
        if kind == "code":
            count = cell.get("execution_count")
            head += f" (execution_count {count if count is not None else 'none'})"
        lines.extend(["", head, _cut(_text(cell.get("source", "")))])
        for out_no, output in enumerate(cell.get("outputs", []) or [], 1):
            lines.extend(_output(number, out_no, output))
    return "\n".join(lines)


def notebook_read(ws: Workspace, path: str) -> Result:
    try:
        real = ws.resolve_notebook(path)
    except PathError as exc:
        return error(f"notebook_read: {exc}")
    import nbformat  # imported here: it is slow to import and rarely needed

    try:
        with open(real, encoding="utf-8") as handle, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. missing cell ids: still readable
            nb = nbformat.read(handle, as_version=4)  # type: ignore[no-untyped-call]
    except FileNotFoundError:
        return error(f"notebook_read: {path!r} does not exist under the server root")
    except IsADirectoryError:
        return error(f"notebook_read: {path!r} is a directory, not a notebook")
    except Exception as exc:  # NotJSONError, ValidationError, UnicodeDecodeError, ...
        # Only the kind of failure: the parser's message quotes the file's first bytes.
        return error(f"notebook_read: {path!r} is not a valid notebook ({type(exc).__name__})")
    return ok(truncate(render(nb, path)))
