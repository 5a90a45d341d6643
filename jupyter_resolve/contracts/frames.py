"""Frame translation (pure): the runtime's ``{"t","d"}`` dialect → normalized events.

One :class:`FrameTranslator` per run. It never raises on bad input: a malformed frame becomes a
``run.error`` event and the stream goes on. It guarantees that a run's events end with exactly
one ``run.completed`` (``abort`` closes a stream that broke before ``done``), and folds what it
saw into the empty-run summary when there was no text.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .bodies import EventType, RuntimeFrame
from .sse import SSEDecoder
from .summary import empty_run_summary

Emitted = tuple[EventType, dict[str, Any]]

FRAME_START = b"data: "


class FrameReader:
    """The runtime's byte stream → the payloads of its ``data:`` frames.

    agent-httpd writes every frame as ``data: {JSON}\\n\\n`` (native/agent-httpd/src/frames.c),
    so a read is split on blank lines, not parsed line by line; a block of any other shape
    goes through the general SSE decoder, so nothing is lost should that change.
    """

    def __init__(self) -> None:
        self._rest = b""

    def feed(self, piece: bytes) -> list[bytes]:
        data = self._rest + piece if self._rest else piece
        end = data.rfind(b"\n\n")
        if end < 0:
            self._rest = data
            return []
        self._rest = data[end + 2 :]
        return self._payloads(data[:end].split(b"\n\n"))

    def close(self) -> list[bytes]:
        rest, self._rest = self._rest, b""
        return self._payloads([rest]) if rest.strip() else []

    @staticmethod
    def _payloads(blocks: list[bytes]) -> list[bytes]:
        out: list[bytes] = []
        for block in blocks:
            if block.startswith(FRAME_START) and b"\n" not in block:
                out.append(block[len(FRAME_START) :])
                continue
            decoder = SSEDecoder()
            events = [*decoder.feed(block + b"\n\n"), *decoder.close()]
            out.extend(event.data.encode() for event in events)
        return out


class _Data(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Round(_Data):
    n: int


class _Text(_Data):
    text: str


class _ToolProgress(_Data):
    index: int = Field(ge=0)
    call_id: str | None = None
    name: str
    pieces: int = Field(default=0, ge=0)
    bytes: int = Field(default=0, ge=0)

    def writing(self) -> dict[str, Any]:
        """``tool.writing``: about how many tokens of arguments so far. A streamed fragment is
        about one token (llama.cpp, OpenAI); fewer, larger fragments count four bytes a token."""
        tokens = max(self.pieces, -(-self.bytes // 4))
        return {"index": self.index, "call_id": self.call_id, "name": self.name, "tokens": tokens}


class _ToolCall(_Data):
    call_id: str
    name: str
    arguments: dict[str, Any] | str


class _ToolResult(_Data):
    call_id: str
    name: str
    ok: bool
    output: str
    mime: dict[str, Any] | None = None
    truncated: bool = False
    ms: int = 0


class _Usage(_Data):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _Message(_Data):
    id: str
    text: str


class _ErrorData(_Data):
    code: str = "runtime_error"
    message: str
    status: int | None = None


class _Done(_Data):
    reason: Literal["stop", "budget", "cancelled", "error"]
    rounds: int = 0


class FrameTranslator:
    """Translate one run's runtime frames into normalized ``(type, data)`` events."""

    def __init__(self, *, budget: int) -> None:
        self.budget = budget
        self.rounds = 0
        self.text_chars = 0
        self.tool_names: list[str] = []
        self.last_error: str | None = None
        self.completed = False
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._gateway_completed: set[str] = set()
        # Set when the gateway stops a run for a budget it enforces (tool calls, time,
        # tokens): the runtime then says "cancelled", but the run ended "budget".
        self.override_reason: str | None = None
        self.attached = False  # the runtime's first frame came: it knows the run
        # steering messages posted and not delivered yet, oldest first (contracts/steering.py
        # bounds them); those left when the run ends are named by its run.completed
        self.waiting_messages: list[str] = []

    def message_posted(self, message_id: str) -> None:
        """A steering message went to the runtime: it waits for its ``message`` frame."""
        self.waiting_messages.append(message_id)

    def message_withdrawn(self, message_id: str) -> None:
        """The runtime refused it: it is not waiting after all."""
        if message_id in self.waiting_messages:
            self.waiting_messages.remove(message_id)

    def note_tool_completed(self, call_id: str) -> None:
        """The gateway emitted ``tool.completed`` for this call itself; skip the runtime's copy."""
        self._gateway_completed.add(call_id)

    def note_error(self, message: str) -> None:
        """Remember an error raised outside the frame stream (for the summary)."""
        self.last_error = message

    def translate_batch(self, payloads: list[bytes]) -> list[Emitted]:
        """Translate the frames of one read: text deltas that follow each other become one
        ``text.delta`` (a client gets what was ready in one event, the log one line)."""
        out: list[Emitted] = []
        merging: list[str] | None = None  # the pieces of the text.delta at the end of out
        for payload in payloads:
            emitted = self.translate_payload(payload)
            for kind, data in emitted:
                if kind == "text.delta" and len(data) == 1 and merging is not None:
                    merging.append(data["text"])
                    continue
                if merging is not None and len(merging) > 1:
                    out[-1] = ("text.delta", {"text": "".join(merging)})
                merging = [data["text"]] if kind == "text.delta" and len(data) == 1 else None
                out.append((kind, data))
        if merging is not None and len(merging) > 1:
            out[-1] = ("text.delta", {"text": "".join(merging)})
        return out

    def translate_payload(self, payload: str | bytes) -> list[Emitted]:
        """Translate the payload of one ``data:`` line."""
        try:
            raw = json.loads(payload)
            fast = self._fast_delta(raw)
            if fast is not None:
                return fast
            frame = RuntimeFrame.model_validate(raw)
        except (ValueError, ValidationError) as exc:
            return self._protocol_error(f"malformed runtime frame: {_short(exc)}")
        return self.translate(frame)

    def _fast_delta(self, raw: Any) -> list[Emitted] | None:
        """The hot path: a well-formed text delta, without model validation."""
        if self.completed or not isinstance(raw, dict) or raw.get("t") != "delta":
            return None
        d = raw.get("d")
        text = d.get("text") if isinstance(d, dict) else None
        if not isinstance(text, str) or len(raw) != 2:
            return None
        if not text:
            return []
        self.text_chars += len(text)
        return [("text.delta", {"text": text})]

    def translate(self, frame: RuntimeFrame) -> list[Emitted]:
        """Translate one frame; frames after ``done`` are ignored."""
        if self.completed:
            return []
        try:
            return self._translate(frame)
        except ValidationError as exc:
            return self._protocol_error(f"malformed '{frame.t}' frame: {_short(exc)}")

    def abort(self, code: str, message: str) -> list[Emitted]:
        """Close a run whose frame stream ended without ``done``."""
        if self.completed:
            return []
        self.last_error = message
        return [("run.error", {"code": code, "message": message}), self._completed("error")]

    def finish(self, reason: Literal["cancelled", "interrupted", "error"]) -> list[Emitted]:
        """Close a run from the gateway's side (no runtime ``done`` will come)."""
        if self.completed:
            return []
        return [self._completed(reason)]

    def _translate(self, frame: RuntimeFrame) -> list[Emitted]:
        d = frame.d
        if frame.t == "run":
            self.attached = True
            return []
        if frame.t == "round":
            self.rounds = max(self.rounds, _Round.model_validate(d).n)
            return []
        if frame.t in ("delta", "reasoning"):
            text = _Text.model_validate(d).text
            if not text:
                return []
            if frame.t == "delta":
                self.text_chars += len(text)
                return [("text.delta", {"text": text})]
            return [("reasoning.delta", {"text": text})]
        if frame.t == "tool_progress":
            return [("tool.writing", _ToolProgress.model_validate(d).writing())]
        if frame.t == "tool_call":
            call = _ToolCall.model_validate(d)
            self.tool_names.append(call.name)
            return [("tool.requested", call.model_dump())]
        if frame.t == "tool_result":
            result = _ToolResult.model_validate(d)
            if not result.ok:
                self.last_error = f"{result.name}: {result.output[:300]}"
            if result.call_id in self._gateway_completed:
                return []
            return [("tool.completed", result.model_dump())]
        if frame.t == "usage":
            usage = _Usage.model_validate(d)
            self.prompt_tokens += usage.prompt_tokens
            self.completion_tokens += usage.completion_tokens
            return [("usage", usage.model_dump())]
        if frame.t == "message":
            message = _Message.model_validate(d)
            self.message_withdrawn(message.id)  # delivered: no longer waiting
            return [("run.message", {"id": message.id, "text": message.text})]
        if frame.t == "error":
            error = _ErrorData.model_validate(d)
            self.last_error = error.message
            return [("run.error", {"code": error.code, "message": error.message})]
        done = _Done.model_validate(d)
        self.rounds = max(self.rounds, done.rounds)
        return [self._completed(done.reason)]

    def _completed(self, reason: str) -> Emitted:
        if self.override_reason and reason in ("cancelled", "stop", "error"):
            reason = self.override_reason
        self.completed = True
        data: dict[str, Any] = {"reason": reason, "rounds": self.rounds}
        if self.waiting_messages:  # the run ended before a round boundary came for them
            data["undelivered_messages"] = list(self.waiting_messages)
        if self.text_chars == 0:
            data["summary"] = empty_run_summary(
                reason=reason,
                tool_names=self.tool_names,
                rounds=self.rounds,
                budget=self.budget,
                last_error=self.last_error,
            )
        return ("run.completed", data)

    def _protocol_error(self, message: str) -> list[Emitted]:
        if self.completed:
            return []
        self.last_error = message
        return [("run.error", {"code": "runtime_protocol", "message": message})]


def _short(exc: Exception) -> str:
    text = str(exc).replace("\n", " ")
    return text[:300]
