"""``@name`` in a ``%resolve`` prompt, and accepted proposals as the next input.

``@name`` describes that variable of this kernel with the same inspector the gateway runs in a
notebook's kernel (``notebook/inspector.py``: same bounds, same time limit) and sends it as a
mention; the cell shows what the model is told, escaped. A proposal a person accepted in the
cell becomes the next input (IPython's ``set_next_input`` payload: the cell below), once the
run ends — the payload rides on this cell's execute reply.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

from ..contracts.errors import ClientError
from ..notebook import inspector
from .client import ResolveClient
from .view_model import RunView

MENTION = re.compile(r"(?<![\w.@])@([A-Za-z_][A-Za-z0-9_]*)")
MAX_MENTIONS = 16
MAX_DESCRIPTION = 8 * 1024
DESCRIBE_SECONDS = 10.0


def mentions(prompt: str, namespace: dict[str, Any]) -> list[dict[str, str]]:
    """The variables ``@named`` in ``prompt`` that this kernel has, described (in order, once
    each, at most 16); other ``@words`` stay plain text."""
    found: list[dict[str, str]] = []
    for name in dict.fromkeys(MENTION.findall(prompt)):
        if name in namespace and inspector.listed(name, namespace[name]):
            text = inspector.describe(namespace, name, DESCRIBE_SECONDS)
            found.append({"name": name, "description": inspector.cut(text, MAX_DESCRIPTION)})
        if len(found) == MAX_MENTIONS:
            break
    return found


def show_mentions(described: list[dict[str, str]]) -> None:
    """Show what the model is told about each mention (escaped: values are data), collapsed
    under one line naming them, as the panel does."""
    from IPython.display import display

    names = ", ".join(f"@{m['name']}" for m in described)
    plain = "\n\n".join(f"@{m['name']}:\n{m['description']}" for m in described)
    blocks = "".join(
        f"<b>@{html.escape(m['name'])}</b>"
        f'<pre style="white-space: pre-wrap; margin: 2px 0">{html.escape(m["description"])}</pre>'
        for m in described
    )
    summary = f"The model was told about {html.escape(names)}"
    bundle = {
        "text/plain": f"The model was told about {names}:\n{plain}",
        "text/html": f"<details><summary>{summary}</summary>{blocks}</details>",
    }
    display(bundle, raw=True)  # type: ignore[no-untyped-call]


def proposal_of(view: RunView, call_id: str) -> str | None:
    """The id of the proposal a ``notebook_propose`` call made, if it is one."""
    return next((p.proposal_id for p in view.proposals.values() if p.call_id == call_id), None)


def accepted_code(view: RunView, decided_here: set[str]) -> str:
    """The code of the proposals accepted from this cell, for the next input."""
    return "\n\n".join(
        p.code()
        for p in view.proposals.values()
        if p.decision == "accepted" and p.proposal_id in decided_here and p.code()
    )


def decider(
    client: ResolveClient, view: RunView, decided: set[str]
) -> Callable[[str, str], str | None]:
    """The views' decide(call_id, approve|deny): an approval, or for a ``notebook_propose``
    call its proposal's accept or reject (noted in ``decided``); an error text or None."""

    def decide(call_id: str, decision: str) -> str | None:
        try:
            proposal = proposal_of(view, call_id)
            if proposal is None:
                client.decide(view.run_id, call_id, decision)
            else:
                client.decide_proposal(view.run_id, proposal, decision == "approve")
                decided.add(proposal)
        except ClientError as exc:
            return exc.message
        return None

    return decide
