"""The inspector that runs in the user's kernel: names, types and shapes of its variables, a
bounded description of one, a snapshot of one as bytes read back in chunks.

It is self-contained (the standard library, and pandas, polars or numpy only when the value is
one of theirs, so already imported): the gateway sends this module's source to the notebook's
kernel and calls :func:`main` there (see ``kernels.py``); ``%resolve`` imports it and calls
:func:`describe` on its own namespace. Code the user wrote (a ``__repr__``, a property) runs
only under a time limit: an interval timer in the kernel's main thread, and the gateway
interrupts the kernel should that not stop it.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib.util
import io
import json
import pickle
import secrets
import signal
import sys
import threading
import time
import types
from collections.abc import Iterator
from typing import Any

IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
MAX_VARIABLES = 500
SUMMARY_CHARS = 80
DESCRIPTION_CHARS = 8000
REPR_CHARS = 2000
HEAD_ROWS = 5
FEW_VALUES = 10
EXTENSIONS = {"parquet": "parquet", "npy": "npy", "pickle": "pkl"}
SCALARS = (bool, int, float, complex, str, bytes, type(None))
STASH_MODULE = "_resolve_inspector_snapshots"
STASH_SECONDS = 600.0  # a kept copy no gateway read for this long is dropped at the next one
CHUNK_BYTES = 512 * 1024  # its base64 stays under the gateway's answer limit (kernels.py)


class TimeLimit(Exception):
    """User code ran past the inspector's time limit."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`TimeLimit` in the main thread after ``seconds`` (elsewhere: no limit;
    the gateway's interrupt is the limit then)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_signum: int, _frame: Any) -> None:
        raise TimeLimit(f"took longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def type_name(value: Any) -> str:
    """``int``, ``pandas.DataFrame``, ``numpy.ndarray``: the class with its top package."""
    kind = type(value)
    module = (kind.__module__ or "").split(".")[0]
    return kind.__qualname__ if module in ("builtins", "") else f"{module}.{kind.__qualname__}"


def family(value: Any) -> str:
    """``frame``, ``series``, ``array`` or ``other``, from the class alone (no import)."""
    kind = type(value)
    module = (kind.__module__ or "").split(".")[0]
    if module in ("pandas", "polars") and kind.__name__ in ("DataFrame", "LazyFrame"):
        return "frame" if kind.__name__ == "DataFrame" else "other"
    if module in ("pandas", "polars") and kind.__name__ == "Series":
        return "series"
    if module == "numpy" and kind.__name__ == "ndarray":
        return "array"
    return "other"


def shape_of(value: Any) -> list[int] | None:
    if family(value) == "other":
        return None
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        return list(shape)
    return None


def listed(name: str, value: Any) -> bool:
    """A user's variable: not private, not IPython's, not a module, function or class."""
    if name.startswith("_") or name in IPYTHON_NAMES:
        return False
    skipped = (
        types.ModuleType,
        types.FunctionType,
        types.BuiltinFunctionType,
        types.MethodType,
        type,
    )
    return not isinstance(value, skipped)


def summary(value: Any) -> str:
    """A short line that calls no user code (no ``__repr__`` of user classes)."""
    kind = family(value)
    shape = shape_of(value)
    if kind == "frame" and shape is not None and len(shape) == 2:
        columns = [str(c) for c in list(value.columns)[:8]]
        more = ", …" if len(value.columns) > 8 else ""
        return cut(
            f"{shape[0]} rows × {shape[1]} columns: {', '.join(columns)}{more}", SUMMARY_CHARS
        )
    if kind in ("series", "array") and shape is not None:
        return cut(f"{value.dtype} {tuple(shape)}", SUMMARY_CHARS)
    if isinstance(value, SCALARS):
        return cut(repr(value), SUMMARY_CHARS)
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        return f"{type(value).__name__} of {len(value)}"
    return type_name(value)


def variables(namespace: dict[str, Any]) -> list[dict[str, Any]]:
    """Name, type, shape and summary of the user's variables, by name (at most 500)."""
    found: list[dict[str, Any]] = []
    for name in sorted(namespace):
        value = namespace[name]
        if not listed(name, value):
            continue
        entry: dict[str, Any] = {"name": name, "type": type_name(value)}
        try:
            shape = shape_of(value)
            if shape is not None:
                entry["shape"] = shape
            entry["summary"] = summary(value)
        except Exception as exc:  # a broken object is listed, not fatal
            entry["summary"] = f"({type(exc).__name__})"
        found.append(entry)
        if len(found) >= MAX_VARIABLES:
            break
    return found


def _frame_text(value: Any, kind: str) -> list[str]:
    module = type(value).__module__.split(".")[0]
    lines: list[str] = []
    if kind == "frame" and module == "pandas":
        lines.append("columns (dtype):")
        lines += [f"  {c}: {t}" for c, t in list(value.dtypes.items())[:50]]
        lines.append(f"head({HEAD_ROWS}):")
        lines.append(value.head(HEAD_ROWS).to_string(max_cols=20, max_colwidth=40))
        lines.append("describe():")
        lines.append(value.describe(include="all").to_string(max_cols=20, max_colwidth=30))
    elif kind == "frame":  # polars
        lines.append("columns (dtype):")
        lines += [f"  {c}: {t}" for c, t in list(value.schema.items())[:50]]
        lines.append(f"head({HEAD_ROWS}):\n{value.head(HEAD_ROWS)}")
        lines.append(f"describe():\n{value.describe()}")
    elif module == "pandas":  # a Series
        lines.append(f"name: {value.name!s}, dtype: {value.dtype}")
        lines.append(f"head({HEAD_ROWS}):\n{value.head(HEAD_ROWS).to_string()}")
        lines.append(f"describe():\n{value.describe().to_string()}")
    else:  # a polars Series
        lines.append(f"name: {value.name!s}, dtype: {value.dtype}")
        lines.append(f"head({HEAD_ROWS}):\n{value.head(HEAD_ROWS)}")
        lines.append(f"describe():\n{value.describe()}")
    return lines


def _array_text(value: Any) -> list[str]:
    numpy = sys.modules["numpy"]
    flat = value.reshape(-1)[:FEW_VALUES]
    text = numpy.array2string(flat, threshold=FEW_VALUES, max_line_width=120)
    more = f" (first {FEW_VALUES} of {value.size})" if value.size > FEW_VALUES else ""
    return [f"dtype: {value.dtype}", f"values{more}: {text}"]


def describe(namespace: dict[str, Any], name: str, seconds: float = 5.0) -> str:
    """A bounded description of ``namespace[name]`` (KeyError when there is none)."""
    value = namespace[name]
    kind = family(value)
    shape = shape_of(value)
    head = f"{name}: {type_name(value)}" + (f", shape {tuple(shape)}" if shape is not None else "")
    lines = [head]
    try:
        with time_limit(seconds):
            if kind in ("frame", "series"):
                lines += _frame_text(value, kind)
            elif kind == "array":
                lines += _array_text(value)
            else:
                with contextlib.suppress(Exception):
                    lines.append(f"len: {len(value)}")
                lines.append(f"repr: {cut(repr(value), REPR_CHARS)}")
    except TimeLimit as exc:
        lines.append(f"[cut: describing it {exc}]")
    except Exception as exc:  # the value's own code failed: say so, keep what was found
        lines.append(f"[cut: {type(exc).__name__}: {cut(str(exc), 200)}]")
    return cut("\n".join(lines), DESCRIPTION_CHARS)


class TooLarge(Exception):
    """A snapshot grew past its byte limit."""


class BoundedBuffer(io.BytesIO):
    """Bytes in memory that refuse to grow past ``limit``."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def write(self, data: Any) -> int:
        if self.tell() + memoryview(data).nbytes > self.limit:
            raise TooLarge(f"takes more than {self.limit} bytes (c.Resolve.snapshot_max_bytes)")
        return super().write(data)


def _stash() -> dict[str, tuple[float, bytes]]:
    """Copies waiting to be read, by id: in a module of ``sys.modules``, since each request
    runs this source in a fresh namespace."""
    holder = sys.modules.get(STASH_MODULE)
    if holder is None:
        holder = sys.modules[STASH_MODULE] = types.ModuleType(STASH_MODULE)
    copies: dict[str, tuple[float, bytes]] = holder.__dict__.setdefault("copies", {})
    return copies


def snapshot(
    namespace: dict[str, Any], name: str, max_bytes: int, seconds: float = 60.0
) -> dict[str, Any]:
    """Serialize ``namespace[name]`` in memory — Parquet for a frame when pyarrow is
    importable, ``.npy`` for a (non-object) array, pickle otherwise — and keep the bytes until
    the gateway has read them in chunks (:func:`chunk`) and dropped them; they travel over the
    kernel protocol, so a kernel on another machine can send them too."""
    value = namespace[name]
    kind = family(value)
    module = type(value).__module__.split(".")[0]
    fmt = "pickle"
    if kind in ("frame", "series"):
        fmt = "parquet" if importlib.util.find_spec("pyarrow") is not None else "pickle"
    elif kind == "array" and value.dtype != object:
        fmt = "npy"
    out = BoundedBuffer(max_bytes)
    with time_limit(seconds):
        if fmt == "parquet" and module == "pandas":
            (value.to_frame() if kind == "series" else value).to_parquet(out)
        elif fmt == "parquet":
            (value.to_frame() if kind == "series" else value).write_parquet(out)
        elif fmt == "npy":
            sys.modules["numpy"].save(out, value, allow_pickle=False)
        else:
            pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
    data = out.getvalue()
    copies = _stash()
    for old in [k for k, (made, _) in copies.items() if time.monotonic() - made > STASH_SECONDS]:
        del copies[old]  # left by a gateway that stopped reading
    copy_id = secrets.token_hex(8)
    copies[copy_id] = (time.monotonic(), data)
    return {
        "id": copy_id,
        "file": f"{name}.{EXTENSIONS[fmt]}",
        "format": fmt,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def chunk(request: dict[str, Any]) -> dict[str, Any]:
    """Up to ``CHUNK_BYTES`` of a kept copy from ``offset``, base64-encoded; ``drop``: forget
    the copy."""
    copies = _stash()
    copy_id = str(request.get("id", ""))
    if request.get("drop"):
        copies.pop(copy_id, None)
        return {}
    if copy_id not in copies:
        raise KeyError(f"no snapshot {copy_id!r} is kept")
    offset = int(request.get("offset", 0))
    data = copies[copy_id][1][offset : offset + CHUNK_BYTES]
    return {"data": base64.b64encode(data).decode("ascii")}


def main(request: dict[str, Any], namespace: dict[str, Any]) -> str:
    """One request from the gateway, answered as JSON text: ``{"ok": true, ...}`` or
    ``{"ok": false, "error": ...}``."""
    op = request.get("op")
    name = str(request.get("name", ""))
    seconds = float(request.get("seconds", 5.0))
    try:
        if op == "variables":
            answer: dict[str, Any] = {"variables": variables(namespace)}
        elif op == "chunk":
            answer = chunk(request)
        elif name not in namespace or not listed(name, namespace[name]):
            return json.dumps({"ok": False, "error": f"no variable named '{name}' in the kernel"})
        elif op == "describe":
            answer = {"description": describe(namespace, name, seconds)}
        elif op == "snapshot":
            answer = snapshot(namespace, name, int(request["max_bytes"]), seconds)
        else:
            return json.dumps({"ok": False, "error": f"unknown request {op!r}"})
    except (TimeLimit, TooLarge) as exc:
        return json.dumps({"ok": False, "error": f"{op}: {exc}"})
    except Exception as exc:
        return json.dumps(
            {"ok": False, "error": f"{op}: {type(exc).__name__}: {cut(str(exc), 500)}"}
        )
    return json.dumps({"ok": True, **answer})
