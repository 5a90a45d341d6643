"""Project instructions: ``AGENTS.md`` and ``.resolve/instructions.md`` under the server root,
and in the notebook's folder for a chat naming a notebook; each capped (DESIGN 9.1)."""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from pathlib import Path, PurePosixPath

from ..contracts.context import Instruction

NAMES = ("AGENTS.md", ".resolve/instructions.md")
CAP = 16 * 1024  # bytes of one file that reach the prompt


def _read(root: Path, relative: PurePosixPath, log: logging.Logger) -> Instruction | None:
    path = root / relative
    if not os.path.lexists(path):
        return None  # the common case, one stat at every run start
    try:
        real = path.resolve(strict=True)
        if not real.is_relative_to(root.resolve()):
            return None  # a link out of the server root
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            with os.fdopen(fd, "rb", closefd=False) as handle:
                data = handle.read(CAP + 1)
        finally:
            os.close(fd)
    except OSError:
        return None
    cut = len(data) > CAP
    text = data[:CAP].decode("utf-8", errors="ignore")
    if cut:
        text += f"\n[instructions cut: only the first {CAP} bytes of {relative} are used]"
    if not text.strip():
        return None
    digest = hashlib.sha256(data[:CAP]).hexdigest()
    log.debug("project instructions from %s (%d bytes%s)", relative, len(data), ", cut" * cut)
    return Instruction(path=str(relative), text=text, sha256=digest, cut=cut)


def project_instructions(
    root: Path, notebook: str | None = None, log: logging.Logger | None = None
) -> list[Instruction]:
    """The instruction files that exist, the server root's first, then the notebook folder's."""
    log = log or logging.getLogger(__name__)
    folders = [PurePosixPath()]
    if notebook:
        parent = PurePosixPath(notebook).parent
        if str(parent) not in ("", ".") and ".." not in parent.parts:
            folders.append(parent)
    found: list[Instruction] = []
    for folder in folders:
        for name in NAMES:
            item = _read(root, folder / name, log)
            if item is not None:
                found.append(item)
    return found
