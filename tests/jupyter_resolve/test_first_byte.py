"""Nothing that can wait goes before a run's first byte (issue 47).

A run's index row and its audit events wait until the run's first output has reached its
clients; rows reach the index's writer thread together, not with a wake of the thread per row
(which handed it the GIL in the middle of other runs' starts); the audit reads the whole answer
only when its records carry content; and a request asks the Authorizer each question once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import pytest
from jupyter_events import EventLogger
from jupyter_server.auth.authorizer import Authorizer

from jupyter_resolve.audit import RUN, Audit
from jupyter_resolve.audit.records import RunTrail
from jupyter_resolve.config import Resolve
from jupyter_resolve.contracts.bodies import ChatRequest
from jupyter_resolve.contracts.run_rows import RunQuery, started_row
from jupyter_resolve.gateway import Gateway
from jupyter_resolve.runs import index as index_module
from jupyter_resolve.runs import listing
from jupyter_resolve.runs.index import RunIndex, SessionInfo
from jupyter_resolve.runs.run import Run
from jupyter_resolve.runs.stream import EventStream
from tests.conftest import Server

LOG = logging.getLogger("test_first_byte")


async def test_work_after_the_next_batch_runs_once_every_sink_has_it() -> None:
    stream = EventStream(None)
    seen: list[str] = []
    stream.after_next_batch(lambda: seen.append("work"))
    stream.subscribe(lambda events: seen.append(f"client {events[0].seq}") or True)
    stream.append("text.delta", {"text": "a"})
    assert seen == ["client 1"]  # not inside the append: the client's write comes first
    await asyncio.sleep(0)
    assert seen == ["client 1", "work"]
    stream.append("text.delta", {"text": "b"})
    await asyncio.sleep(0)
    assert seen == ["client 1", "work", "client 2"]  # once


async def test_rows_put_on_the_loop_reach_the_writer_in_one_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "SEND_DELAY", 0.0)
    index = RunIndex(tmp_path / "runs.sqlite", tmp_path / "runs", LOG)
    holding, release = threading.Event(), threading.Event()

    def hold(db: object) -> None:
        holding.set()
        release.wait(30)

    index.submit(hold)  # the writer is busy meanwhile
    assert holding.wait(30)
    rows = [started_row(f"run-{n}", {"session_id": "s"}, time.time() + n) for n in range(20)]
    try:
        for row in rows:
            index.put(row)
        assert set(index.pending()) == {row.run_id for row in rows}  # readers see them at once
        assert index._jobs.qsize() == 0  # no wake of the writer per row
        for _ in range(3):  # the send is due on the loop's next turn (SEND_DELAY 0)
            await asyncio.sleep(0)
        assert index._jobs.qsize() == 1  # one batch
    finally:
        release.set()
    assert index.flush(30)
    written = index.rows(RunQuery(limit=50))
    assert {row.run_id for row in written} == {row.run_id for row in rows}
    assert index.pending() == {}
    index.close()


class WrittenWhileRead(RunIndex):
    """An index whose writer commits the queued rows (and drops them from ``pending``) just
    after a listing read the database: the moment a batch lands between a listing's two reads."""

    def session_rows(self, session_id: str) -> list[Any]:
        found = super().session_rows(session_id)
        assert self.flush(30)
        return found

    def sessions(self, *args: Any, **kw: Any) -> list[SessionInfo]:
        found = super().sessions(*args, **kw)
        assert self.flush(30)
        return found


async def test_a_batch_written_between_a_listings_two_reads_is_still_listed(
    tmp_path: Path,
) -> None:
    """A 200-turn session's transcript once ended at turn 187 in CI: the last batch of rows
    (a quarter second's runs) was committed between the listing's read of the database and its
    read of the rows not written yet, so it was in neither."""
    index = WrittenWhileRead(tmp_path / "runs.sqlite", tmp_path / "runs", LOG)
    rows = [started_row(f"run-{n}", {"session_id": "s"}, time.time() + n) for n in range(13)]
    for row in rows:
        index.put(row)  # on the loop: held for the next batch
    try:
        listed = listing.session_rows(index, [], "s")
        assert [r.run_id for r in listed] == [r.run_id for r in rows]
        index.put(started_row("run-new", {"session_id": "t"}, time.time() + 99))
        page = listing.sessions(index, [], None, 10)
        assert "t" in [s.session_id for s in page.sessions]
    finally:
        index.close()


def _gateway(tmp_path: Path) -> Gateway:
    script = tmp_path / "script.jsonl"
    script.write_text('{"content": "ok"}\n')
    config = Resolve(provider="scripted", script=str(script), state_dir=str(tmp_path / ".resolve"))
    return Gateway(config, root_dir=tmp_path, log=LOG)


async def test_a_runs_row_waits_for_its_first_output(tmp_path: Path) -> None:
    gateway = _gateway(tmp_path)
    run = gateway.start_chat(ChatRequest.model_validate({"messages": [{"role": "user"}]}))
    assert run.task is not None
    run.task.cancel()  # before its first step: the runtime is never asked, the run stays live
    await asyncio.sleep(0)
    assert run.run_id not in gateway.runs.index.pending()
    listed = gateway.runs.page(RunQuery(limit=10)).runs
    assert [r.run_id for r in listed] == [run.run_id]  # listed from memory meanwhile
    run.emit("text.delta", {"text": "first words"})
    assert run.run_id not in gateway.runs.index.pending()  # not inside the append either
    await asyncio.sleep(0)
    assert gateway.runs.index.pending()[run.run_id].status == "running"
    gateway.runs.index.close()


class Captured(logging.Handler):
    """What jupyter_events emitted: each event's capsule."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.msg, dict):
            self.events.append(record.msg)


async def test_the_audit_emits_after_the_runs_clients_and_its_start_after_its_output() -> None:
    captured = Captured()
    audit = Audit(EventLogger(handlers=[captured]), user="alice", content=lambda: False, log=LOG)
    run = Run(run_id="run-1", session_id="s1", soul=None, model="m", budget=1, log=None)
    audit.watch(run)
    run.emit("run.started", {"session_id": "s1", "prompt": "p", "model": "m", "tools": []})
    order: list[str] = []
    run.subscribe(lambda events: order.append(events[0].type) or True)  # the run's client
    await asyncio.sleep(0)
    assert captured.events == []  # the start waits for the run's first output
    run.emit("text.delta", {"text": "hello"})
    assert captured.events == []  # not inside the append, before the client's write
    await asyncio.sleep(0)
    assert [e.get("action") for e in captured.events] == ["started"]
    run.emit("run.completed", {"reason": "stop", "rounds": 1})
    await asyncio.sleep(0)
    assert order == ["text.delta", "run.completed"]
    started, ended = captured.events
    assert started["__schema__"] == ended["__schema__"] == RUN
    assert ended["action"] == "ended" and ended["answer_chars"] == len("hello")


def test_the_audit_watches_no_run_while_nobody_listens() -> None:
    logger = EventLogger()
    audit = Audit(logger, user="alice", content=lambda: False, log=LOG)
    assert audit.listening() is False
    logger.add_listener(schema_id=RUN, listener=_ignore)
    assert audit.listening() is True


async def _ignore(logger: EventLogger, schema_id: str, data: dict[str, Any]) -> None:
    return None


def test_the_audit_reads_the_whole_answer_only_for_content() -> None:
    def unread() -> str:
        raise AssertionError("the answer was read without audit_content")

    trail = RunTrail("run-1", "alice", content=False)
    trail.take("run.started", {"session_id": "s1", "model": "m"}, unread, lambda r, k: None)
    for text in ("twelve ", "chars"):
        trail.take("text.delta", {"text": text}, unread, lambda r, k: None)
    record = trail.take("run.completed", {"reason": "stop"}, unread, lambda r, k: None)
    assert record is not None and record[1]["answer_chars"] == len("twelve chars")


class Counting(Authorizer):
    """Allows everything, and counts each question per request (handler)."""

    asked: ClassVar[list[tuple[int, str, str]]] = []

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        self.asked.append((id(handler), action, resource))
        return True


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    server_app = {**jp_server_config["ServerApp"], "authorizer_class": Counting}
    return {**jp_server_config, "ServerApp": server_app}


async def test_a_chat_asks_the_authorizer_each_question_once(
    server: Server, jp_root_dir: Path
) -> None:
    (jp_root_dir / "notes.txt").write_text("some notes\n")
    Counting.asked.clear()
    stream = await server.chat("read my notes", attachments=["notes.txt"])
    assert stream.of("run.completed"), stream.types()
    per_request = Counter(Counting.asked)
    assert ("read", "contents") in {(action, resource) for _, action, resource in per_request}
    assert max(per_request.values()) == 1, per_request
