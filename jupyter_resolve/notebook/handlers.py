"""The user's notebook over the public API (DESIGN 9.2): its kernel's variables (the panel's
``@name`` completion) and a person's decision on a proposal.

Both reach the user's notebook and kernel: besides ``resolve`` they need ``contents`` read and
``kernels`` execute (DESIGN 9.4).
"""

from __future__ import annotations

from typing import Any, cast

from tornado import web

from ..contracts.errors import BadRequest
from ..contracts.ids import check_id
from ..contracts.notebook import ProposalDecisionRequest
from ..handlers.base import ResolveHandler, authorized
from .tools import NotebookHost, decide_proposal, proposal_view, variables_listing


class NotebookHandler(ResolveHandler):
    """Base: the services the notebook tools use."""

    @property
    def notebook(self) -> NotebookHost:
        return cast("NotebookHost", self.service("notebook"))

    async def check_run_owner(self, run_id: str, deciding: bool) -> None:
        """A proposal is its run's: its owner's to see and decide (DESIGN 10.2)."""
        owner = self.notebook.runs.get(run_id).owner
        (await self.viewer(deciding)).check(owner, f"run '{run_id}'", deciding)


class NotebookVariablesHandler(NotebookHandler):
    """``GET /resolve/api/notebook/variables?path=NB``."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        await self.require("read", "contents")
        await self.require("execute", "kernels")
        path = self.get_query_argument("path", None)
        if not path:
            raise BadRequest("path: the notebook's path is needed (?path=...)")
        self.answer(await variables_listing(self.notebook, path))


class ProposalDecisionHandler(NotebookHandler):
    """``POST /resolve/api/runs/{run_id}/proposals/{proposal_id}``
    ``{decision: accept|reject, run?, cells?, reason?, seen?: {cell_id, sha256}}``; ``GET``
    the proposal with its target's current source."""

    @web.authenticated
    @authorized("read")
    async def get(self, run_id: str, proposal_id: str) -> None:
        check_id("run_id", run_id)
        check_id("proposal_id", proposal_id)
        await self.require("read", "contents")
        await self.check_run_owner(run_id, deciding=False)
        self.answer(await proposal_view(self.notebook, run_id, proposal_id))

    @web.authenticated
    @authorized("execute")
    async def post(self, run_id: str, proposal_id: str) -> None:
        check_id("run_id", run_id)
        check_id("proposal_id", proposal_id)
        await self.require("read", "contents")
        await self.require("execute", "kernels")
        await self.check_run_owner(run_id, deciding=True)
        body = self.parse(ProposalDecisionRequest)
        self.note_decider(run_id, proposal_id)
        outcome = await decide_proposal(
            self.notebook, run_id, proposal_id, body, by=self.current_user
        )
        self.answer(outcome.answer())


routes: list[tuple[str, Any]] = [
    (r"/resolve/api/notebook/variables", NotebookVariablesHandler),
    (
        r"/resolve/api/runs/(?P<run_id>[^/]+)/proposals/(?P<proposal_id>[^/]+)",
        ProposalDecisionHandler,
    ),
]
