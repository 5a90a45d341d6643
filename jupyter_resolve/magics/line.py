"""The ``%%resolve`` line: its ``--options`` and ``{name}`` interpolation of the prompt."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError

NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
PLACEHOLDER = re.compile(r"\{\{(" + NAME + r")\}\}|\{(" + NAME + r")\}")


@dataclass
class Options:
    soul: str | None = None
    session: str | None = None
    new: bool = False
    model: str | None = None
    agent: str | None = None  # an external agent (c.Resolve.acp_agents) answers instead
    task: bool = False
    interpolate: bool = True
    steer: bool = False  # the text goes to the session's live run (magics/steer.py)


def parse_options(line: str) -> tuple[Options, str]:
    """Leading ``--options`` of a magic line, and the rest of the line (the prompt) untouched."""
    options = Options()
    rest = line.strip()
    takes_value = {
        "--soul": "soul",
        "--session": "session",
        "--model": "model",
        "--agent": "agent",
    }
    flags = {"--new": "new", "--task": "task", "--steer": "steer"}
    while rest.startswith("--"):
        word, _, after = rest.partition(" ")
        name, eq, inline = word.partition("=")
        if name in takes_value:
            if eq:
                value, rest = inline, after.strip()
            else:
                value, _, rest = after.strip().partition(" ")
                rest = rest.strip()
            if not value:
                raise UsageError(f"{name} needs a value, e.g. {name} NAME")
            setattr(options, takes_value[name], value)
        elif name in flags and not eq:
            setattr(options, flags[name], True)
            rest = after.strip()
        elif name == "--no-interpolate" and not eq:
            options.interpolate = False
            rest = after.strip()
        else:
            raise UsageError(
                f"unknown option {name}; %%resolve takes --soul NAME, --agent NAME, --session ID, "
                "--new, --model M, --task, --steer and --no-interpolate"
            )
    if options.agent and (options.soul or options.task):
        raise UsageError("--agent NAME asks an external agent: it takes no --soul and no --task")
    started = [o for o in ("new", "task", "soul", "agent", "model") if getattr(options, o)]
    if options.steer and started:
        raise UsageError(
            f"--steer TEXT goes to the run working now: it takes no --{started[0]} "
            "(only --session ID)"
        )
    return options, rest


def interpolate(prompt: str, namespace: dict[str, Any]) -> str:
    """Replace ``{name}`` (and ``{name.attr}``) by its value when ``name`` is defined;
    ``{{name}}`` gives a literal ``{name}``; anything else is left as written."""

    def replace(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return "{" + match.group(1) + "}"
        path = match.group(2).split(".")
        if path[0] not in namespace:
            return match.group(0)
        value = namespace[path[0]]
        try:
            for attr in path[1:]:
                value = getattr(value, attr)
        except AttributeError:
            return match.group(0)
        return str(value)

    return PLACEHOLDER.sub(replace, prompt)


QUESTION_LINE = re.compile(r"^([ \t]*)%resolve([ \t].*\?)[ \t]*(\r?\n)?$")


def keep_question_marks(lines: list[str]) -> list[str]:
    """An IPython input transformer: ``%resolve what is x?`` is a question for the agent, but
    IPython reads a line ending in ``?`` as a help request (``pinfo x``) before any magic runs.
    Such lines become the magic call they mean; ``%resolve?`` alone stays IPython's help."""
    out = []
    for line in lines:
        match = QUESTION_LINE.match(line)
        if match is None:
            out.append(line)
            continue
        indent, prompt, end = match.group(1), match.group(2).strip(), match.group(3) or ""
        out.append(f"{indent}get_ipython().run_line_magic('resolve', {prompt!r}){end}")
    return out


LOAD_LINE = re.compile(r"^[ \t]*%(re)?load_ext[ \t]+jupyter_resolve[ \t]*$")


def questions_read_as_help(ipython: Any) -> list[str]:
    """The ``%resolve …?`` lines after ``%load_ext jupyter_resolve`` in the cell running now.
    IPython transforms a whole cell before running it, so in the cell that loads the extension
    such lines already became help requests (:func:`keep_question_marks` was not there yet)."""
    history = getattr(ipython, "history_manager", None)
    cells = getattr(history, "input_hist_raw", None) or [""]
    lines = str(cells[-1]).splitlines()
    loads = [i for i, line in enumerate(lines) if LOAD_LINE.match(line)]
    if not loads:
        return []
    return [line.strip() for line in lines[loads[0] + 1 :] if QUESTION_LINE.match(line)]
