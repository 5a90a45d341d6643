"""``%resolve promote Out[n] | VAR | --last | --file PATH [--title T] [--note N]``.

Explicit promotion from the user's kernel (DESIGN 3.7): a value's MIME bundle (DataFrames with
their HTML and CSV), or a file under the server root, sent to ``POST /resolve/api/artifacts``.
"""

from __future__ import annotations

import base64
import os
import re
import shlex
from typing import Any

from IPython.core.error import UsageError

USAGE = "%resolve promote Out[n] | VAR | --last | --file PATH [--title T] [--note N]"
OUT = re.compile(r"^Out\[(\d+)\]$|^_(\d+)$")


def parse_promote(line: str) -> tuple[str, str | None, dict[str, str]]:
    """(kind, target, options) from the text after ``promote``; kind: out | var | last | file."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"{USAGE}: {exc}") from None
    options: dict[str, str] = {}
    target: tuple[str, str | None] | None = None
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("--title", "--note", "--file"):
            if i + 1 >= len(words):
                raise UsageError(f"{USAGE}: {word} needs a value")
            if word == "--file":
                target = ("file", words[i + 1])
            else:
                options[word[2:]] = words[i + 1]
            i += 2
            continue
        if word == "--last":
            target = ("last", None)
        elif target is None and not word.startswith("--"):
            target = ("out", word) if OUT.match(word) else ("var", word)
        else:
            raise UsageError(f"{USAGE}: unexpected {word!r}")
        i += 1
    if target is None:
        raise UsageError(f"{USAGE}: what should be promoted?")
    return target[0], target[1], options


def value_bundle(shell: Any, value: Any) -> dict[str, Any]:
    """The value's MIME bundle as the notebook would show it, plus CSV for DataFrames."""
    data, _ = shell.display_formatter.format(value)
    bundle = {k: v for k, v in data.items() if isinstance(v, (str, dict, list))}
    to_csv = getattr(value, "to_csv", None)
    if callable(to_csv):
        try:
            bundle["text/csv"] = to_csv()
        except Exception:  # a to_csv that needs arguments is not a DataFrame's
            pass
    if isinstance(value, (bytes, bytearray)):
        bundle["application/octet-stream"] = base64.b64encode(bytes(value)).decode()
    return bundle


def promote_body(shell: Any, line: str) -> dict[str, Any]:
    """The request body for ``line`` (everything after ``promote``)."""
    kind, target, options = parse_promote(line)
    namespace = shell.user_ns
    if kind == "file":
        return {"file": target, **options}
    if kind == "last":
        label, value = "_", namespace.get("_")
        if value is None or value == "":
            raise UsageError("%resolve promote --last: no output yet in this kernel")
    elif kind == "out":
        assert target is not None
        match = OUT.match(target)
        assert match is not None
        number = int(match.group(1) or match.group(2))
        outputs = namespace.get("Out", {})
        if number not in outputs:
            raise UsageError(f"%resolve promote: Out[{number}] does not exist in this kernel")
        label, value = f"Out[{number}]", outputs[number]
        options.setdefault("execution_count", str(number))
    else:
        assert target is not None
        if target not in namespace:
            raise UsageError(f"%resolve promote: no variable {target!r} in this kernel")
        label, value = target, namespace[target]
    body: dict[str, Any] = {"bundle": value_bundle(shell, value), "label": label}
    for key in ("title", "note"):
        if key in options:
            body[key] = options[key]
    if "execution_count" in options:
        body["execution_count"] = int(options["execution_count"])
    notebook = os.environ.get("JPY_SESSION_NAME")
    if notebook and not os.path.isabs(notebook):
        body["notebook"] = notebook
    return body
