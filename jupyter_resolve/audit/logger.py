"""Audit events through the server's ``EventLogger`` (jupyter_events), the host's own audit
trail: where they go is ``c.EventLogger.handlers`` (none by default: nothing is recorded).

Runs are watched from their first event (``RunManager.admitted``): each run gets one sink on
its event stream, the same stream that writes the run log, so every run, whatever started it,
is seen. Nothing that can wait goes before a run's first byte (issue 47): a record is emitted
on the loop's next turn, once the events that made it have reached the run's clients, and the
run's start once its first output has; a run that starts while nobody listens (no handler, no
listener of these schemas) is not watched at all. Promotions come from the artifact service
(``Gateway.on_promoted``). Who decided an approval or a proposal is noted by the deciding
handler just before the decision, and read when the decision's event comes.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .records import SCHEMA_FILES, Record, RunTrail, promotion_record

if TYPE_CHECKING:
    from ..artifacts.records import ArtifactManifest
    from ..contracts.bodies import Event
    from ..runs.run import Run

SCHEMAS_DIR = Path(__file__).parent / "schemas"
_LISTENERS = ("_modified_listeners", "_unmodified_listeners")  # jupyter_events' own, by schema
NOTED_DECIDERS = 256  # decisions whose decider is remembered until its event comes


class Audit:
    """Emits this project's audit events on ``event_logger``."""

    def __init__(
        self, event_logger: Any, *, user: str, content: Callable[[], bool], log: logging.Logger
    ) -> None:
        self.event_logger = event_logger
        self.user = user
        self.content = content  # c.Resolve.audit_content, read when each run starts
        self.log = log
        self._deciders: OrderedDict[tuple[str, str], str] = OrderedDict()
        for name in SCHEMA_FILES.values():
            event_logger.register_event_schema(SCHEMAS_DIR / name)

    def emit(self, schema_id: str, data: dict[str, Any]) -> None:
        """One event; a failure is logged, never raised (the run goes on)."""
        try:
            self.event_logger.emit(schema_id=schema_id, data=data)
        except Exception:
            self.log.exception("jupyter-resolve: the audit event %s failed", schema_id)

    def listening(self) -> bool:
        """Whether an event emitted now goes anywhere (jupyter_events drops it otherwise)."""
        logger = self.event_logger
        if getattr(logger, "handlers", None):
            return True
        listeners: list[dict[str, Any]] = []
        for name in _LISTENERS:
            found = getattr(logger, name, None)
            if not isinstance(found, dict):
                return True  # another jupyter_events: assume someone listens
            listeners.append(found)
        return any(found.get(schema) for found in listeners for schema in SCHEMA_FILES)

    def watch(self, run: Run) -> None:
        """Audit ``run`` from its first event to ``run.completed`` (see the module's doc)."""
        if not self.listening():
            return
        trail = RunTrail(run.run_id, self.user, content=self.content())
        held: list[Record] = []

        def sink(events: list[Event]) -> bool:
            for event in events:
                record = trail.take(event.type, event.data, run.text, self._decider)
                if record is not None:
                    held.append(record)
            if held and events[0].type != "run.started":  # the start waits for output
                asyncio.get_running_loop().call_soon(self._emit_all, held[:])
                held.clear()
            return not run.closed

        run.subscribe(sink)

    def _emit_all(self, records: list[Record]) -> None:
        for record in records:
            self.emit(*record)

    def promoted(self, manifest: ArtifactManifest, created: bool) -> None:
        self.emit(*promotion_record(manifest.to_json(), created, self.user, self.content()))

    def note_decider(self, run_id: str, key: str, user: Any) -> None:
        """``user`` (the handler's ``current_user``) decides ``key`` (a call or a proposal)."""
        name = getattr(user, "username", None) or getattr(user, "name", None) or user
        if not isinstance(name, str) or not name:
            return
        self._deciders[(run_id, key)] = name
        while len(self._deciders) > NOTED_DECIDERS:
            self._deciders.popitem(last=False)

    def _decider(self, run_id: str, key: str) -> str | None:
        return self._deciders.pop((run_id, key), None)
