"""The ``%resolve`` IPython magics (loaded with ``%load_ext jupyter_resolve``).

Files by layer: ``client.py`` (HTTP + SSE to the gateway), ``view_model.py`` (events → what a
view shows, pure), ``run_markdown.py`` (a run as one Markdown document), ``widgets.py`` (the
live ipywidgets view), ``render.py`` (plain Markdown for terminals), ``markdown.py`` (sanitized
Markdown output and tables), ``line.py`` (the magic line's options, ``{name}`` interpolation,
questions ending in ``?``), ``mentions.py`` and ``proposal_view.py`` (the user's notebook),
``completion.py`` (``--model`` completion), ``magics.py`` (the magics). httpx and ipywidgets
are imported on first use, so loading the extension stays fast.
"""

from __future__ import annotations

from typing import Any


def load_magics(ipython: Any) -> None:
    """Register the magics on ``ipython``."""
    from .completion import register_completion
    from .line import keep_question_marks, questions_read_as_help
    from .magics import ResolveMagics

    magics = ResolveMagics(ipython)
    ipython.register_magics(magics)
    register_completion(ipython, magics.client)  # %resolve --model <TAB>
    cleanup = ipython.input_transformers_cleanup
    if keep_question_marks in cleanup:  # loading twice registers it once
        return
    cleanup.append(keep_question_marks)
    unasked = questions_read_as_help(ipython)
    if unasked:
        print(
            f"IPython read {unasked[0]!r} in this cell as a help request (for the word before "
            "the '?'), before jupyter_resolve was loaded, so the agent was not asked. The "
            "extension is loaded now: run the cell again, or keep %load_ext jupyter_resolve "
            "in a cell of its own."
        )
