"""Paths clients send (a notebook, an attachment, a file to promote), checked as text (pure).

What reaches the file system must be a name it can take: no NUL (Python raises ``ValueError``
on it), no other control character, valid UTF-8, at most ``PATH_MAX`` bytes and every part at
most ``NAME_MAX`` bytes (else ``ENAMETOOLONG``). Whether the path stays inside its root is the
caller's check, on the resolved path.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

MAX_PATH_BYTES = 4096  # Linux PATH_MAX
MAX_NAME_BYTES = 255  # NAME_MAX of the common file systems
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_path_text(value: str) -> str:
    """``value`` when a file system can take it as a name, else ``ValueError`` saying why."""
    if not value:
        raise ValueError("must not be empty")
    if _CONTROL.search(value):
        raise ValueError("must not hold a control character (NUL, CR, LF, ...)")
    try:
        encoded = value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid UTF-8 text (it holds a lone surrogate)") from None
    if len(encoded) > MAX_PATH_BYTES:
        raise ValueError(f"is {len(encoded)} bytes long, over {MAX_PATH_BYTES}")
    longest = max(len(part) for part in re.split(rb"[/\\]", encoded))
    if longest > MAX_NAME_BYTES:
        raise ValueError(f"has a name of {longest} bytes, over {MAX_NAME_BYTES}")
    return value


PathArg = Annotated[str, AfterValidator(check_path_text)]
"""A path as a client sends it: a str the file system can take (see :func:`check_path_text`)."""
