"""A completion request a newer one for its cell replaced is routine (issue 46.6): its 409 is
logged at debug, not as a WARNING (jupyter_server logs every other 4xx so)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from tests.conftest import Server
from tests.fakes._server import Reply, Request
from tests.fakes.openai_server import FakeOpenAI
from tests.jupyter_resolve.test_completion import URL, Person, completions, fakes, provider

__all__ = ["fakes"]  # the fixture, used by name


async def test_a_replaced_request_is_no_warning(
    server: Server, gateway: Any, fakes: list[FakeOpenAI], caplog: pytest.LogCaptureFixture
) -> None:
    def hang_first(request: Request) -> Reply:
        if len(fake.requests) == 1:
            return Reply(hang=True)
        return completions("newer")(request)

    fake = await provider(gateway, fakes, hang_first)
    gateway.config.completion_style = "suffix"
    body = {"prefix": "a = ", "cell_id": "cell-1"}
    person = Person(server)
    await person.usage()  # the login cookie first: both requests are then the same person's
    caplog.set_level(logging.DEBUG)
    older = asyncio.ensure_future(person.post(body))
    while not fake.requests:
        await asyncio.sleep(0.02)
    await person.post({**body, "prefix": "a = b"})
    assert (await older).status_code == 409
    lines = [(r.levelno, r.getMessage()) for r in caplog.records if URL in r.getMessage()]
    replaced = [level for level, text in lines if text.startswith("409 ")]
    assert replaced == [logging.DEBUG], lines
    assert not [text for level, text in lines if level >= logging.WARNING], lines
    # any other 4xx of the endpoint is still a warning
    caplog.clear()
    bad = await person.post({"prefix": 3})
    assert bad.status_code == 400
    assert any(
        r.levelno == logging.WARNING and r.getMessage().startswith("400 ") for r in caplog.records
    ), [r.getMessage() for r in caplog.records]
