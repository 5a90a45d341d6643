"""Steering a run while it works (issue 50, DESIGN 3.6): a person's message, delivered at the
run's next round boundary as a user turn.

agent-httpd keeps a run's conversation (the gateway sends it once; each round's inference
request is that conversation as it grew), so the message is delivered there: it is posted to
the runtime (``POST /runs/{id}/messages``), which adds it before the next round, after the calls
in progress, and sends a ``message`` frame at that point; the gateway logs it as ``run.message``
(contracts/frames.py), so the run log, replay and the session's transcript
(contracts/transcript.py) have it where it took effect. Added by the gateway to one inference
request instead, it would be gone from the next round's (the runtime would not send it again),
and the gateway sees an inference request before the frames of the round before it reach the
log.

The gateway checks the message (contracts/steering.py), counts it as waiting on the run's
translator until its frame comes, and names those never delivered in ``run.completed``. A
message posted before the runtime has the run (its first frame not read yet: a compaction step
first, a busy start) is held and posted once it has, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from typing import Any
from weakref import WeakKeyDictionary

from ..contracts.errors import Conflict, ResolveError, TooManyRequests, Unavailable
from ..contracts.steering import RETRY_AFTER, check_message
from .manager import RunManager
from .run import Run

# One post at a time per run, so its messages reach the runtime in the order they came.
_posting: WeakKeyDictionary[Run, asyncio.Lock] = WeakKeyDictionary()


def ended(run: Run) -> Conflict:
    return Conflict(
        f"run '{run.run_id}' has ended: it takes no more messages; send yours as a new chat",
        code="run_ended",
    )


async def steer(runs: RunManager, run: Run, text: str) -> dict[str, Any]:
    """Queue ``text`` for ``run`` (its owner checked by the caller): ``{id, run_id, status:
    "queued"}``. 409 for a run that ended (or is ending) or one no model drives, 400/413/429 as
    :func:`~..contracts.steering.check_message` says."""
    translator = run.translator
    if run.completed or translator.completed or run.cancel_requested:
        raise ended(run)
    if run.model == "none":  # an external agent's or the gateway's own: no rounds to join
        raise Conflict(
            f"run '{run.run_id}' is not driven by the gateway's model: it takes no messages",
            code="not_steerable",
        )
    text = check_message(text, len(translator.waiting_messages))
    message_id = f"msg-{secrets.token_hex(6)}"
    translator.message_posted(message_id)
    if translator.attached and not run.held_messages:
        try:
            await _post(runs, run, message_id, text)
        except ResolveError:
            translator.message_withdrawn(message_id)
            raise
    else:
        run.held_messages.append((message_id, text))
        if not translator.attached:  # else the release under way takes it too
            run.on_attached = lambda: _release_soon(runs, run)
    return {"id": message_id, "run_id": run.run_id, "status": "queued"}


async def _post(runs: RunManager, run: Run, message_id: str, text: str) -> None:
    client = runs.supervisor.client
    if client is None:
        raise Unavailable("the agent runtime is not running; try again in a moment")
    async with _posting.setdefault(run, asyncio.Lock()):
        status = await client.message(run.run_id, message_id, text)
    if status == 200:
        return
    if status in (404, 409):  # the runtime's loop has ended, or starts no more rounds
        raise ended(run)
    if status == 429:
        raise TooManyRequests(
            "the run has as many messages waiting as it takes",
            retry_after=RETRY_AFTER,
            code="too_many_messages",
        )
    raise Unavailable(f"the agent runtime refused the message ({status})")


def _release_soon(runs: RunManager, run: Run) -> None:
    task = asyncio.ensure_future(_release(runs, run))
    run.background.add(task)
    task.add_done_callback(run.background.discard)


async def _release(runs: RunManager, run: Run) -> None:
    """Post the messages held until the runtime had the run, oldest first. One it refuses (the
    run ended meanwhile) stays waiting: its ``run.completed`` names it as not delivered."""
    while run.held_messages:
        message_id, text = run.held_messages[0]
        with contextlib.suppress(ResolveError, OSError):
            await _post(runs, run, message_id, text)
        run.held_messages.pop(0)
