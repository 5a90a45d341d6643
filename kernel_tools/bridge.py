"""The bridge the gateway drives inside a scratch kernel (DESIGN 3.3).

Bootstrap (silent cell)::

    import kernel_tools.bridge as __resolve_bridge
    __resolve_bridge.install(session_dir="<abs>", server_root="<abs>")

Each builtin call (``python`` excepted, which runs as a plain cell)::

    __resolve_bridge.call('{"name": "read_file", "arguments": {...}, "timeout": 60}')

``call`` never raises and publishes exactly one display_data with the MIME type
``application/vnd.resolve.result+json``: ``{"ok": bool, "output": str, "mime": object|null}``.
Imports stay light: the tools are loaded on the first call.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

from .paths import Workspace
from .result import RESULT_MIME, Result, error

_workspace: Workspace | None = None


def install(session_dir: str, server_root: str) -> None:
    """Remember the session workspace and server root; make ``work/`` the cwd."""
    global _workspace
    session = os.path.abspath(session_dir)
    work = os.path.join(session, "work")
    if not os.path.isdir(work):
        raise ValueError(f"install: {work!r} is not a directory")
    _workspace = Workspace(session, os.path.abspath(server_root))
    if os.path.realpath(os.getcwd()) != os.path.realpath(work):
        os.chdir(work)
    tune_kernel()


def tune_kernel() -> None:
    """Cut what each execution sends and waits on in the kernel, keeping what the gateway reads.

    Only the gateway reads a scratch kernel's IOPub, and it ends a call at the ``idle`` status,
    which IOPub sends after every output of the call. So: no ``busy`` status and no
    ``execute_input`` message (a round trip to the IOPub thread and a message to the gateway
    each, per call, that nobody reads); no half-millisecond sleep before each ``execute_reply``
    (kept by ipykernel for clients that read the reply before the outputs); and a flush of
    stdout/stderr with nothing buffered (six per execution, most of them) returns at once instead
    of waiting on a round trip to the IOPub thread: whatever was written before is already queued
    there ahead of the next message. Outside ipykernel, or in one that differs: nothing changes.
    """
    ipython = _ipython()
    kernel = getattr(ipython, "kernel", None)
    _drop_unread_formats(ipython)
    if kernel is not None:
        if isinstance(getattr(kernel, "_execute_sleep", None), float):
            kernel._execute_sleep = 0.0
        _drop_busy_and_input(kernel)
    for stream in (sys.stdout, sys.stderr):
        _skip_empty_flushes(stream)


# What a result is never formatted as here: the gateway keeps other MIME types only
# (tools/kernel.py), so these reprs of every result were made and sent for nothing.
UNREAD_FORMATS = ("application/pdf", "text/latex", "application/javascript")


def _drop_unread_formats(ipython: Any) -> None:
    formatters = getattr(getattr(ipython, "display_formatter", None), "formatters", None)
    if isinstance(formatters, dict):
        for mime in UNREAD_FORMATS:
            if hasattr(formatters.get(mime), "enabled"):
                formatters[mime].enabled = False


def _drop_busy_and_input(kernel: Any) -> None:
    publish_status = getattr(kernel, "_publish_status", None)
    publish_input = getattr(kernel, "_publish_execute_input", None)
    if not callable(publish_status) or not callable(publish_input):
        return
    if getattr(publish_status, "drops_busy", False):
        return  # installed again (a second install in the same kernel)

    def publish_status_but_busy(status: str, *args: Any, **kwargs: Any) -> None:
        if status != "busy":
            publish_status(status, *args, **kwargs)

    def publish_no_input(*args: Any, **kwargs: Any) -> None:
        return None

    publish_status_but_busy.drops_busy = True  # type: ignore[attr-defined]
    kernel._publish_status = publish_status_but_busy
    kernel._publish_execute_input = publish_no_input


def _ipython() -> Any:
    """The running IPython shell, without importing IPython where it is not loaded."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def _skip_empty_flushes(stream: Any) -> None:
    """Make ``stream.flush`` return at once when an ipykernel OutStream has nothing buffered."""
    buffers = getattr(stream, "_buffers", None)
    if not isinstance(buffers, dict) or getattr(stream, "echo", None) is not None:
        return  # not an ipykernel OutStream as this knows it: leave it be
    flush = stream.flush
    if getattr(flush, "skips_empty", False):
        return  # installed again (a second install in the same kernel)

    def lean_flush() -> None:
        if stream._buffers:
            flush()

    lean_flush.skips_empty = True  # type: ignore[attr-defined]
    stream.flush = lean_flush


def workspace() -> Workspace | None:
    return _workspace


def _publish(payload: dict[str, Any]) -> None:
    from IPython.display import display

    display({RESULT_MIME: payload}, raw=True)  # type: ignore[no-untyped-call]


publish: Callable[[dict[str, Any]], None] = _publish


def run(request: str | dict[str, Any]) -> Result:
    """Parse, validate and run one request; never raises (bar KeyboardInterrupt/SystemExit)."""
    try:
        data = json.loads(request) if isinstance(request, str) else request
    except ValueError as exc:
        return error(f"bridge: the request is not valid JSON ({exc})")
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return error('bridge: the request must be an object {"name": str, "arguments": object}')
    name: str = data["name"]
    arguments = data.get("arguments", {})
    if arguments is None:
        arguments = {}
    timeout = data.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))):
        return error(f"bridge: 'timeout' must be a number of seconds, not {timeout!r}")
    from . import schemas
    from .registry import KERNEL_EXECUTED, REGISTRY

    schema = schemas.get_tool(name)
    if name in KERNEL_EXECUTED:
        return error(f"{name}: runs as a kernel cell, not through the bridge")
    if schema is None or schema.get("runs_in") != "kernel" or name not in REGISTRY:
        if schema is not None:
            return error(f"{name}: is not a kernel tool (it runs in the {schema['runs_in']})")
        known = ", ".join(n for n in schemas.kernel_tool_names() if n in REGISTRY)
        return error(f"unknown tool {name!r}; the kernel tools are: {known}")
    problems = schemas.validate(schema["parameters"], arguments)
    if problems:
        return error(f"{name}: invalid arguments: {'; '.join(problems)}")
    if _workspace is None:
        return error(f"{name}: the tool bridge is not installed in this kernel")
    try:
        return REGISTRY[name](_workspace, arguments, float(timeout) if timeout else None)
    except KeyboardInterrupt:
        return error(f"{name}: interrupted (the call's time limit passed)")
    except Exception as exc:
        return error(f"{name}: failed unexpectedly: {type(exc).__name__}: {exc}")


def _print_live(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()  # now: the call's output is shown while it runs


def call(request: str) -> None:
    """Run one request and publish its result as one display_data; never raises. What a tool
    prints as it runs (the shell tool's output) goes to stdout meanwhile."""
    from .shell import LIVE

    live = LIVE.set(_print_live)
    try:
        result = run(request)
    except KeyboardInterrupt:
        result = error("bridge: interrupted (the call's time limit passed)")
    except Exception as exc:  # a bug in the bridge itself: still exactly one result
        result = error(f"bridge: failed unexpectedly: {type(exc).__name__}: {exc}")
    finally:
        LIVE.reset(live)
    try:
        publish(result.to_json())
    except Exception:  # no display machinery (not in a kernel): print the bundle instead
        print(json.dumps({RESULT_MIME: result.to_json()}))


def open_direct(bind: str) -> str:
    """Open the direct channel (direct.py) at ``bind``; its address, or "" when it cannot."""
    from .direct import open_channel

    return open_channel(bind)


def bind(folder: str | None) -> None:
    """Bind the kernel to a notebook's folder, its files read-only (notebook_folder.py), or
    with None back to ``work/``."""
    from .notebook_folder import bind as bind_folder

    if _workspace is None:
        raise ValueError("bind: the tool bridge is not installed in this kernel")
    bind_folder(_workspace.session_dir, _workspace.server_root, folder)


def load_snapshots(files: dict[str, str]) -> None:
    """Put each snapshot (``{variable name: file in context/snapshots/}``) into the agent's
    namespace under its name; a value that does not load is named on stdout (a note for the
    model), the others load."""
    from .notebook_folder import load_snapshot

    if _workspace is None:
        raise ValueError("load_snapshots: the tool bridge is not installed in this kernel")
    namespace = getattr(_ipython(), "user_ns", None)
    if namespace is None:
        return
    folder = os.path.join(_workspace.context, "snapshots")
    for name, file in files.items():
        try:
            namespace[name] = load_snapshot(os.path.join(folder, os.path.basename(file)))
        except Exception as exc:
            print(f"[@{name} is not in your namespace: {type(exc).__name__}: {exc}]")
