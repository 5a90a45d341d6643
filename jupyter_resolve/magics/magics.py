"""``%resolve`` and ``%%resolve``: ask the agent from a notebook cell and watch the run live.

::

    %resolve [--new] PROMPT
    %%resolve [--soul NAME | --agent NAME] [--session ID] [--new] [--model M] [--task]
              [--no-interpolate]
    PROMPT (the cell body; {name} is replaced by the value of ``name`` in the namespace;
    @name describes that variable to the model)
    %resolve [--session ID] --steer TEXT  (to the session's run working now: magics/steer.py)

    %resolve tools | souls | runs [--before CURSOR] | status | cancel [RUN] | replay RUN
    %resolve history | forget | usage

Consecutive calls continue one session (the server keeps its conversation; its scratch kernel
keeps its variables). ``--new`` starts a fresh session and asks in it; following calls continue
the new one. ``history`` shows this kernel's session transcript; ``forget`` starts a new session
from the next call on (the old one stays on the server, under the id it names). Interrupting
the cell cancels the run on the gateway and says so in one line. The result is stored as
``_resolve`` (not returned: a cell ending in ``%resolve`` shows the run, not an ``Out[n]``).
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Iterator
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from ..contracts.errors import ClientError
from .client import Connection, ResolveClient
from .line import Options, interpolate, parse_options
from .markdown import show_markdown, table
from .mentions import accepted_code, decider, mentions, show_mentions
from .render import MarkdownStream
from .runs_list import show_runs, wants_listing
from .safe_html import code_span, escape_markdown
from .steer import steer_live_run, steerer
from .view_model import ResolveResult, RunView
from .watch import RunInterrupted, Ticking, cancel_and_drain, interrupted_note

SUBCOMMANDS = ("tools", "souls", "runs", "status", "cancel", "replay", "history", "forget", "usage")


@magics_class
class ResolveMagics(Magics):
    """The magics, with this kernel's session and last run."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.session_id: str | None = None
        self.last_run_id: str | None = None
        self._client: ResolveClient | None = None
        self._remote_images: dict[Connection, bool] = {}

    @property
    def namespace(self) -> dict[str, Any]:
        assert self.shell is not None
        user_ns: dict[str, Any] = self.shell.user_ns
        return user_ns

    # -- connection ---------------------------------------------------------------------------

    def client(self) -> ResolveClient:
        """The client for the current environment (re-read, so ``%env`` changes apply)."""
        try:
            connection = Connection.from_env()
        except ClientError as exc:
            raise UsageError(exc.message) from None
        if self._client is None or self._client.connection != connection:
            if self._client is not None:
                self._client.close()
            self._client = ResolveClient(connection)
        return self._client

    def allow_remote_images(self, client: ResolveClient) -> bool:
        """``c.Resolve.allow_remote_images`` of the server, asked once per connection; off
        when the server does not say (an older server) or cannot be asked."""
        known = self._remote_images.get(client.connection)
        if known is None:
            try:
                health = client.get_json("resolve/api/health")
            except (ClientError, ValueError):
                return False
            known = self._remote_images[client.connection] = (
                isinstance(health, dict) and health.get("allow_remote_images") is True
            )
        return known

    def widgets_available(self) -> bool:
        """Widgets render in a kernel with a frontend; terminals get Markdown."""
        if getattr(self.shell, "kernel", None) is None:
            return False
        try:
            import ipywidgets  # type: ignore[import-untyped]  # noqa: F401
        except ImportError:
            return False
        return True

    # -- the magic ------------------------------------------------------------------------------

    @no_var_expand
    @line_cell_magic
    def resolve(self, line: str, cell: str | None = None) -> None:
        """Ask jupyter-resolve: ``%resolve [--new] PROMPT`` or ``%%resolve [options]`` + body;
        ``%resolve tools | souls | runs | status | cancel [RUN] | replay RUN | history | forget``
        (``history``: this session's transcript; ``forget``: a new session from the next call).
        The run's result is stored as ``_resolve``."""
        try:
            self._resolve(line, cell)
        except RunInterrupted:
            raise
        except KeyboardInterrupt:  # outside a run's view: nothing to cancel, nothing to trace
            raise RunInterrupted("Interrupted.") from None

    def _resolve(self, line: str, cell: str | None) -> None:
        words = line.split()
        if cell is None and words and words[0] == "promote":
            self._promote(line.split(None, 1)[1] if len(words) > 1 else "")
            return
        if cell is None and words and words[0] in SUBCOMMANDS:
            words = [interpolate(word, self.namespace) for word in words]
            if self._subcommand(words):
                return
        options, rest = parse_options(line)
        prompt = cell if cell is not None else rest
        if cell is not None and rest:
            raise UsageError(f"%%resolve takes options on its first line, not text: {rest!r}")
        if options.interpolate:
            prompt = interpolate(prompt, self.namespace)
        if options.steer:
            steer_live_run(self.client(), options.session or self.session_id, prompt)
            return
        if not prompt.strip():
            raise UsageError(
                "%resolve needs a prompt: %resolve [--new] QUESTION, or %%resolve + a body; "
                "or one of: " + " | ".join(SUBCOMMANDS) + " | promote"
            )
        self.ask(prompt, options)

    def ask(self, prompt: str, options: Options) -> ResolveResult:
        """Start a run (or a task) and show it until it ends."""
        client = self.client()
        if options.new:
            self.session_id = None
        session = options.session or self.session_id
        try:
            if options.task:
                events = self._task_events(client, prompt, session)
            else:
                body: dict[str, Any] = {"messages": [{"role": "user", "content": prompt}]}
                for key, value in (
                    ("model", options.model),
                    ("soul", options.soul),
                    ("agent", options.agent),
                    ("session_id", session),
                ):
                    if value:
                        body[key] = value
                described = mentions(prompt, self.namespace)
                if described:
                    body["mentions"] = described
                    show_mentions(described)
                events = client.chat(body)
            return self.show(client, events, live=True)
        except ClientError as exc:
            raise UsageError(exc.message) from None

    def _task_events(
        self, client: ResolveClient, goal: str, session: str | None
    ) -> Iterator[dict[str, Any]]:
        """The task's one event stream: its child runs (planner → … → tool agent), tagged."""
        body: dict[str, Any] = {"goal": goal, **({"session_id": session} if session else {})}

        def events() -> Iterator[dict[str, Any]]:
            try:
                yield from client.stream("POST", "resolve/api/tasks", body)
            except ClientError as exc:
                if exc.status in (404, 405):
                    raise ClientError(
                        "this server does not run tasks (POST /resolve/api/tasks answered "
                        f"{exc.status}); drop --task to ask a single agent"
                    ) from None
                raise

        return events()

    def show(
        self, client: ResolveClient, events: Iterator[dict[str, Any]], *, live: bool
    ) -> ResolveResult:
        """Fold events into a view as they arrive; on interrupt, cancel the run and end the cell
        with :class:`RunInterrupted` (one line, no traceback)."""
        view = RunView()
        decided: set[str] = set()  # proposals decided from this cell

        decide = decider(client, view, decided)

        ui: Any
        if self.widgets_available():
            from .widgets import WidgetView

            steer = steerer(client, view) if live else None  # a replay has nothing to steer
            remote = self.allow_remote_images(client)
            ui = WidgetView(decide, allow_remote_images=remote, steer=steer)
        else:
            ui = MarkdownStream(decide=decide, ask=builtins.input)
        started = time.monotonic()
        shown = False
        interrupted = False
        stream = Ticking(events)
        try:
            for event in stream:
                if event is None:  # a quiet spell
                    if shown:
                        ui.tick(view)
                    continue
                if not shown:  # not before the first event: a refused request shows no view
                    ui.start()
                    shown = True
                part, key = view.apply(event)
                ui.update(view, part, key)
        except KeyboardInterrupt:
            interrupted = True
            stream.close()
            if live:
                cancel_and_drain(client, view, ui)
        except Exception as exc:
            if shown:  # the stream broke: what came still becomes static, with why it stopped
                view.errors.append(str(getattr(exc, "message", None) or exc))
                ui.finish(view, time.monotonic() - started if live else None)
            raise
        finally:
            stream.close()  # an error here leaves no reader behind
            result = ResolveResult.of(view)
            self.namespace["_resolve"] = result
            if view.session_id:
                self.session_id = view.session_id
            if view.run_id:
                self.last_run_id = view.run_id
        if not shown:
            ui.start()
        if self.shell is not None and accepted_code(view, decided):
            self.shell.set_next_input(accepted_code(view, decided), replace=False)
        ui.finish(view, time.monotonic() - started if live else None)
        if interrupted:
            raise RunInterrupted(interrupted_note(view, live=live)) from None
        return result

    # -- subcommands ----------------------------------------------------------------------------

    def _subcommand(self, words: list[str]) -> bool:
        """Run ``words`` as a subcommand; False when they are a prompt instead."""
        name, args = words[0], words[1:]
        if name in ("tools", "souls", "status", "history", "forget", "usage") and args:
            return False
        if name == "runs" and not wants_listing(args):
            return False
        if name == "cancel" and len(args) > 1:
            return False
        if name == "replay" and len(args) != 1:
            if args:
                return False
            raise UsageError("%resolve replay RUN: which run? (%resolve runs lists them)")
        client = self.client()
        try:
            if name == "replay":
                self.last_run_id = args[0]
                self.show(client, client.events(args[0], after=0), live=False)
            else:
                getattr(self, f"_{name}")(client, *args)
        except ClientError as exc:
            raise UsageError(exc.message) from None
        return True

    def _promote(self, rest: str) -> None:
        from .promote import promote_body

        body = promote_body(self.shell, rest)
        try:
            manifest = self.client().post_json("resolve/api/artifacts", body)
        except ClientError as exc:
            raise UsageError(f"%resolve promote: {exc.message}") from None
        self.namespace["_resolve_artifact"] = manifest
        title = str(manifest.get("title") or body.get("label") or body.get("file"))
        media = str(manifest.get("media_type"))
        sha = str(manifest.get("sha256", ""))[:12] + "…"
        show_markdown(
            f"Promoted **{escape_markdown(title)}** as artifact "
            f"{code_span(str(manifest.get('id')))} ({escape_markdown(media)}, "
            f"{escape_markdown(str(manifest.get('size')))} bytes, sha256 {code_span(sha)}).",
            f"Promoted {title} as artifact {manifest.get('id')} ({media}, "
            f"{manifest.get('size')} bytes, sha256 {sha}).",
        )

    def _tools(self, client: ResolveClient) -> None:
        tools = client.get_json("resolve/api/tools").get("tools", [])
        rows = []
        for tool in tools:
            function = tool.get("function", tool)
            description = str(function.get("description", ""))
            first = description.split(". ", 1)[0].rstrip(".")
            rows.append([str(function.get("name", "")), first + "."])
        markdown, plain = table(rows, ["tool", "what"], code=1)
        intro = f"{len(rows)} tools the agent can use\n\n"
        show_markdown(f"**{intro.strip()}**\n\n{markdown}", intro + plain)

    def _souls(self, client: ResolveClient) -> None:
        try:
            answer = client.get_json("resolve/api/souls")
        except ClientError as exc:
            if exc.status == 404:
                show_markdown("This server does not serve souls yet (`/resolve/api/souls`: 404).")
                return
            raise
        souls = answer.get("souls", answer) if isinstance(answer, dict) else answer
        listed = souls if isinstance(souls, list) else []
        keys = ("name", "role", "description")
        rows = [[str(s.get(k, "")) for k in keys] for s in listed if isinstance(s, dict)]
        show_markdown(*table(rows, ["soul", "role", "description"], code=1))

    def _runs(self, client: ResolveClient, *args: str) -> None:
        show_runs(client, self.session_id, args[1] if args else None)

    def _status(self, client: ResolveClient) -> None:
        from .status_view import show_status

        show_status(client, self.session_id, self.last_run_id)

    def _usage(self, client: ResolveClient) -> None:
        from .usage import show_usage

        self.namespace["_resolve_usage"] = show_usage(client)

    def _history(self, client: ResolveClient) -> None:
        from .history import show_transcript

        if not self.session_id:
            show_markdown("No session yet in this kernel: `%resolve QUESTION` starts one.")
            return
        answer = client.get_json(f"resolve/api/sessions/{self.session_id}/transcript")
        self.namespace["_resolve_transcript"] = answer
        show_transcript(answer, allow_remote_images=self.allow_remote_images(client))

    def _forget(self, client: ResolveClient) -> None:
        old, self.session_id = self.session_id, None
        if old is None:
            show_markdown("No session yet in this kernel; the next `%resolve` starts one.")
            return
        again = f"%resolve --session {old}"
        show_markdown(
            f"The next `%resolve` starts a new session; {code_span(old)} stays on the server "
            f"({code_span(again)} continues it).",
            f"The next %resolve starts a new session; {old} stays on the server ({again} "
            "continues it).",
        )

    def _cancel(self, client: ResolveClient, run_id: str | None = None) -> None:
        run_id = run_id or self.last_run_id
        if not run_id:
            raise UsageError("%resolve cancel RUN: no run yet in this kernel; name one")
        answer = client.cancel(run_id)
        run = answer.get("run", {}) if isinstance(answer, dict) else {}
        status, reason = str(run.get("status", "?")), str(run.get("reason"))
        show_markdown(
            f"Cancel sent for {code_span(run_id)} (now {escape_markdown(status)}, "
            f"{escape_markdown(reason)}).",
            f"Cancel sent for {run_id} (now {status}, {reason}).",
        )
