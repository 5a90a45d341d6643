"""The silent cells that give a scratch kernel on a gateway its workspace and its context files
over the kernel protocol (remote.py): no shared disk (DESIGN 7).

Each cell runs its code in a namespace of its own (the agent's namespace gains nothing), and
every value goes in as a Python literal (``repr``), never as code. A file travels in chunks of
``CHUNK_BYTES`` (base64 in the cell), is written beside its target, checked against the
sha256 the gateway recorded, then made 0400 and moved into place; a session sends at most
``SYNC_LIMIT_BYTES`` at a time, and what is over is named to the model instead.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .workspace import CONTEXT_INDEX, Workspace, context_index_bytes, sha256_file

CHUNK_BYTES = 512 * 1024
SYNC_LIMIT_BYTES = 64 * 1024 * 1024
FOLDER_MARK = "resolve-workspace:"

_WORKSPACE = """
def _make():
    import atexit, os, shutil, tempfile
    folder = tempfile.mkdtemp(prefix="resolve-scratch-")
    for name in ("work", "context", "home", "tmp"):
        os.mkdir(os.path.join(folder, name), 0o700)
    atexit.register(shutil.rmtree, folder, True)  # the kernel's exit takes it along
    print(MARK + folder)
_make()
"""

_RECEIVE = """
def _receive(target, data, first, last, digest):
    import base64, hashlib, os
    from kernel_tools.bridge import workspace
    context = workspace().context
    path = os.path.normpath(os.path.join(context, target))
    if not path.startswith(context + os.sep):
        raise ValueError(f"context/{target}: not inside context/")
    partial = path + ".receiving"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(partial, "wb" if first else "ab") as out:
        out.write(base64.b64decode(data))
    if last:
        with open(partial, "rb") as done:
            found = hashlib.sha256(done.read()).hexdigest()
        if found != digest:
            os.remove(partial)
            raise ValueError(f"context/{target}: sha256 {found} arrived, {digest} was sent")
        os.chmod(partial, 0o400)
        os.replace(partial, path)
"""


def workspace_cell() -> str:
    """Make the workspace (a temporary folder) in the kernel and print its path."""
    return _isolated(_WORKSPACE.replace("MARK", repr(FOLDER_MARK)))


def folder_from(stdout: str) -> str | None:
    for line in stdout.splitlines():
        if line.startswith(FOLDER_MARK):
            return line[len(FOLDER_MARK) :]
    return None


def _isolated(code: str) -> str:
    return (
        f"exec(compile({code!r}, '<resolve workspace>', 'exec'), {{'__name__': '__resolve__'}})\n"
    )


def chunk_cells(target: str, data: bytes, digest: str) -> Iterator[str]:
    """The cells that write ``data`` to ``context/<target>`` in the kernel."""
    pieces = [data[i : i + CHUNK_BYTES] for i in range(0, len(data), CHUNK_BYTES)] or [b""]
    for index, piece in enumerate(pieces):
        encoded = base64.b64encode(piece).decode("ascii")
        call = (
            f"_receive({target!r}, {encoded!r}, {index == 0!r}, "
            f"{index == len(pieces) - 1!r}, {digest!r})\n"
        )
        yield _isolated(_RECEIVE + call)


@dataclass
class SyncPlan:
    """What to send: ``(target, sha256, cells)`` per file; notes on what is not sent."""

    sends: list[tuple[str, str, list[str]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def plan(workspace: Workspace, sent: dict[str, str]) -> SyncPlan:
    """The files of ``context/`` (as the gateway recorded them) that the kernel does not have
    as ``sent`` says it has them, with the context index last."""
    record = workspace.record()
    result, budget = SyncPlan(), SYNC_LIMIT_BYTES
    for target, digest in sorted(record.items()):
        if sent.get(target) == digest:
            continue
        source = workspace.context / target
        try:
            size = source.stat().st_size
            if size > budget:
                result.notes.append(
                    f"[context/{target} ({size} bytes) was not sent to the scratch kernel on the "
                    f"gateway: over the {SYNC_LIMIT_BYTES // 2**20} MiB sent at a time]"
                )
                continue
            if sha256_file(source) != digest:  # changed on disk: not what was recorded
                result.notes.append(f"[context/{target} changed since it was attached; not sent]")
                continue
            data = source.read_bytes()
        except OSError as exc:
            result.notes.append(f"[context/{target} could not be read: {exc.strerror}]")
            continue
        budget -= size
        result.sends.append((target, digest, list(chunk_cells(target, data, digest))))
    if record and result.sends:
        index = context_index_bytes(record)
        digest = _sha256(index)
        result.sends.append(
            (CONTEXT_INDEX, digest, list(chunk_cells(CONTEXT_INDEX, index, digest)))
        )
    return result


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def drain(client: Any) -> None:
    """Drop the shell replies nobody reads (a call ends on IOPub), so the queue stays short."""
    queue = getattr(client, "_shell_channel", None)
    while queue is not None and not queue.empty():
        queue.get_nowait()


_SEND_BACK = """
def _send_back(path, offset, chunk, limit):
    import base64, json, os
    from kernel_tools.bridge import workspace
    from kernel_tools.paths import PathError, confine
    ws = workspace()
    try:
        real = confine(ws.work, ws.session_dir, path, "the session folder")
        if not os.path.isfile(real):
            raise PathError(f"{path!r} is not a file in work/")
        size = os.path.getsize(real)
        if size > limit:
            raise PathError(f"{path!r} has {size} bytes, over the {limit} that can be promoted")
        with open(real, "rb") as source:
            source.seek(offset)
            data = source.read(chunk)
    except (OSError, PathError) as exc:
        print(MARK + json.dumps({"error": str(exc)}))
        return
    print(MARK + json.dumps({"size": size, "data": base64.b64encode(data).decode("ascii")}))
"""


def send_back_cell(path: str, offset: int, limit: int) -> str:
    """A cell printing ``CHUNK_BYTES`` of ``work/<path>`` from ``offset``, as one JSON line
    after ``FOLDER_MARK``: ``{"size", "data"}`` (base64) or ``{"error"}``."""
    call = f"_send_back({path!r}, {offset!r}, {CHUNK_BYTES!r}, {limit!r})\n"
    return _isolated(_SEND_BACK.replace("MARK", repr(FOLDER_MARK)) + call)


def answer_from(stdout: str) -> dict[str, Any] | None:
    """The JSON line a :func:`send_back_cell` printed."""
    for line in stdout.splitlines():
        if line.startswith(FOLDER_MARK):
            try:
                found = json.loads(line[len(FOLDER_MARK) :])
            except ValueError:
                return None
            return found if isinstance(found, dict) else None
    return None
