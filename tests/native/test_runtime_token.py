"""The launch token stays out of what other processes of the same user can read of agent-httpd
under /proc (issue 14 item 4): it arrives over an inherited pipe, never the environment, and
the runtime makes itself non-dumpable, so its memory, environ and maps are root-only."""

from __future__ import annotations

import os
import secrets
import sys

import pytest

from tests.native.procfs import look_for
from tests.native.runtime import running

# Root may read any process; run the runtime and the reader as one ordinary user instead.
SAME_USER = 65534 if os.geteuid() == 0 else None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl are Linux")
def test_a_same_user_process_cannot_read_the_token() -> None:
    token = secrets.token_urlsafe(32)
    with running(token, user=SAME_USER) as runtime:
        status, body = runtime.get("/healthz")
        assert status == 200 and body["ok"] is True
        report = look_for(runtime.proc.pid, token, user=SAME_USER)
        assert runtime.get("/healthz")[0] == 200  # still serving
    assert report["found"] == []
    assert "status" in report["opened"]  # the reader did look: public files stay readable
    for private in ("environ", "maps", "auxv", "smaps"):
        assert private not in report["opened"], f"/proc/<runtime>/{private} is readable"
    assert report["mem"] is False
