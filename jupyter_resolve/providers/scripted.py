"""The offline default: a deterministic model that replays a script or runs a small demo.

A script is JSONL, one model turn a line::

    {"content": "Let me look.", "reasoning": "...", "tool_calls": [{"name": "python",
     "arguments": {"code": "1+1"}}], "soul": "planner"}

Each inference call of a run takes the run's next turn (a run_id of None is one sequence of its
own). A turn naming a ``soul`` applies only to requests whose system message declares it with a
line ``soul: NAME``. Without a script, the demo runs fenced Python through the ``python`` tool,
draws a plot, proposes a notebook cell or promotes the plot when asked to (:mod:`.demo`),
runs a short loop that prints its progress when asked about progress (its lines stream live as
``tool.output``), reports what it printed, or sketches a three-step plan. Every turn is
streamed the way a real server streams it: content a few words a chunk, tool-call arguments
across several chunks.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ..contracts.bodies import text_of
from ..contracts.compaction import extractive_summary, is_summary_request
from ..contracts.errors import ProviderError
from ..contracts.sse import format_data
from .base import Chunk, Provider
from .chunks import ChunkBuilder, estimate_tokens, new_call_id, wants_usage
from .demo import showcase_turn
from .turns import OFFLINE, QUOTE_LIMIT, ToolCall, Turn, tool_names

SOUL_LINE = re.compile(r"^soul: (\S+)$", re.MULTILINE)
FENCED_PYTHON = re.compile(r"```(?:python3?|py)[ \t]*\r?\n(.*?)```", re.DOTALL)
CONFIGURE = (
    "To use a real model, set c.Resolve.provider (openai or anthropic) with c.Resolve.model, "
    "c.Resolve.base_url and c.Resolve.api_key_env."
)
MAX_RUNS = 1024
PROGRESS = re.compile(r"\bprogress\b", re.IGNORECASE)
# Five lines 0.3 s apart: enough to watch them come one by one, short enough for a demo.
PROGRESS_CODE = (
    "import time\n"
    "for step in range(1, 6):\n"
    "    print(f'step {step} of 5', flush=True)\n"
    "    time.sleep(0.3)\n"
    "print('done')\n"
)


def parse_turn(obj: Any) -> Turn:
    """A script line's JSON as a Turn; ``ValueError`` says what is wrong with it."""
    if not isinstance(obj, dict):
        raise ValueError("a turn must be a JSON object")
    unknown = set(obj) - {"content", "reasoning", "tool_calls", "soul"}
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(sorted(unknown))}")
    content = obj.get("content", "")
    reasoning = obj.get("reasoning", "")
    soul = obj.get("soul")
    if not isinstance(content, str):
        raise ValueError("'content' must be a string")
    if not isinstance(reasoning, str):
        raise ValueError("'reasoning' must be a string")
    if soul is not None and not isinstance(soul, str):
        raise ValueError("'soul' must be a string")
    raw_calls = obj.get("tool_calls", [])
    if not isinstance(raw_calls, list):
        raise ValueError("'tool_calls' must be a list")
    calls: list[ToolCall] = []
    for i, call in enumerate(raw_calls):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
            raise ValueError(f"tool_calls[{i}] needs a string 'name'")
        arguments = call.get("arguments", {})
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        calls.append(ToolCall(call["name"], text))
    return Turn(content, reasoning, tuple(calls), soul or None)


def load_script(path: Path) -> list[Turn]:
    """Read a JSONL script; a missing file or a bad line is a ProviderError naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise script_error(f"cannot read the script {path}: {exc}") from exc
    turns: list[Turn] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            turns.append(parse_turn(json.loads(line)))
        except ValueError as exc:
            raise script_error(f"the script {path}, line {number}: {exc}") from exc
    return turns


def script_error(message: str) -> ProviderError:
    return ProviderError(
        message,
        status=500,
        code="script_invalid",
        hint="fix the JSONL file named by c.Resolve.script: one JSON turn a line",
    )


def declared_soul(messages: list[dict[str, Any]]) -> str | None:
    """The soul named by a ``soul: NAME`` line in the first system message."""
    for message in messages:
        if message.get("role") == "system":
            found = SOUL_LINE.search(text_of(message.get("content")))
            return found.group(1) if found else None
    return None


def demo_turn(body: dict[str, Any]) -> Turn:
    """The built-in demo's answer to a request."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    question = text_of(messages[last_user].get("content")) if last_user >= 0 else ""
    after = messages[last_user + 1 :]
    fenced = FENCED_PYTHON.search(question)
    if not fenced:
        showcase = showcase_turn(body, question, last_user)
        if showcase is not None:
            return showcase
    results = [m for m in after if m.get("role") == "tool"]
    if results:
        output = text_of(results[-1].get("content")).strip()
        if len(output) > QUOTE_LIMIT:
            output = output[:QUOTE_LIMIT] + " [...]"
        quoted = "\n".join(f"> {line}" for line in output.splitlines()) or "> (no output)"
        return Turn(
            f"{OFFLINE} The code ran. Its output:\n\n{quoted}\n\n"
            f"That is all this offline demo does. {CONFIGURE}"
        )
    if not fenced and PROGRESS.search(question) and "python" in tool_names(body):
        return Turn(
            f"{OFFLINE} I will run a loop that prints its progress; watch the lines arrive.",
            tool_calls=(ToolCall("python", json.dumps({"code": PROGRESS_CODE})),),
        )
    if fenced and "python" in tool_names(body):
        code = fenced.group(1)
        return Turn(
            f"{OFFLINE} I will run your code with the python tool. "
            "(Set c.Resolve.provider to use a real model.)",
            tool_calls=(ToolCall("python", json.dumps({"code": code})),),
        )
    topic = " ".join(question.split())[:120] or "your request"
    return Turn(
        f"{OFFLINE} Here is how I would approach: {topic}\n\n"
        "1. Restate the question and gather the data or files it needs.\n"
        "2. Work through it step by step in the scratch kernel, checking each result.\n"
        "3. Summarize the findings and keep what is worth keeping.\n\n"
        "Put Python in a ```python fenced block and I will run it. " + CONFIGURE
    )


def split_words(text: str, words: int = 3) -> list[str]:
    """``text`` in pieces of a few words each, whitespace kept, so the pieces join back."""
    tokens = re.findall(r"\S+\s*|\s+", text)
    return ["".join(tokens[i : i + words]) for i in range(0, len(tokens), words)]


def split_arguments(text: str) -> list[str]:
    """JSON argument text in at least two pieces (when it has two characters or more)."""
    if len(text) < 2:
        return [text]
    size = max(1, min(16, len(text) // 2))
    return [text[i : i + size] for i in range(0, len(text), size)]


def turn_chunks(turn: Turn, build: ChunkBuilder) -> list[Chunk]:
    """A turn as the chunks a streaming server would send (without the usage chunk)."""
    chunks = [build.delta({"role": "assistant", "content": ""})]
    for piece in split_words(turn.reasoning):
        chunks.append(build.delta({"reasoning_content": piece}))
    for piece in split_words(turn.content):
        chunks.append(build.delta({"content": piece}))
    for index, call in enumerate(turn.tool_calls):
        chunks.append(
            build.delta(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": new_call_id(),
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        for piece in split_arguments(call.arguments):
            chunks.append(
                build.delta({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    chunks.append(build.finish("tool_calls" if turn.tool_calls else "stop"))
    return chunks


class ScriptedProvider(Provider):
    """Offline and deterministic; replays ``script`` (JSONL) or, without one, the demo."""

    name = "scripted"

    def __init__(self, script: Path | None, model: str = "scripted") -> None:
        self.script = Path(script) if script is not None else None
        self.model = model or "scripted"
        self._turns: list[Turn] | None = None
        self._stamp: tuple[int, int] | None = None
        self._cursors: OrderedDict[str | None, int] = OrderedDict()

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model,
            "base_url": None,
            "script": str(self.script) if self.script else None,
        }

    def _script_turns(self, path: Path) -> list[Turn]:
        """The script, re-read when the file changes on disk."""
        try:
            stat = path.stat()
        except OSError as exc:
            raise script_error(f"cannot read the script {path}: {exc}") from exc
        stamp = (stat.st_mtime_ns, stat.st_size)
        if self._turns is None or stamp != self._stamp:
            self._turns = load_script(path)
            self._stamp = stamp
        return self._turns

    def next_turn(self, body: dict[str, Any], run_id: str | None) -> Turn:
        """The turn that answers this request (advances the run's cursor)."""
        if is_summary_request(body):  # compaction: the person's requests, in order
            return Turn(extractive_summary(body))
        if self.script is None:
            return demo_turn(body)
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        soul = declared_soul(messages)
        turns = [t for t in self._script_turns(self.script) if t.soul is None or t.soul == soul]
        cursor = self._cursors.pop(run_id, 0)
        self._cursors[run_id] = cursor + 1
        while len(self._cursors) > MAX_RUNS:
            self._cursors.popitem(last=False)
        if cursor < len(turns):
            return turns[cursor]
        return Turn(
            f"{OFFLINE} The scripted model's script ({self.script.name}) has no more turns "
            f"for this run, so it stops here."
        )

    async def relay(self, body: dict[str, Any], run_id: str | None) -> AsyncIterator[Chunk | bytes]:
        """The turn's chunks as runtime-ready frames, encoded in one go and sent as one write;
        usage as a chunk (the gateway notes it)."""
        frames: list[bytes] = []
        async for chunk in self.stream_chat(body, run_id):
            if chunk.get("usage"):
                if frames:
                    yield b"".join(frames)
                    frames = []
                yield chunk
            else:
                frames.append(format_data(chunk))
        if frames:
            yield b"".join(frames)

    async def stream_chat(self, body: dict[str, Any], run_id: str | None) -> AsyncIterator[Chunk]:
        turn = self.next_turn(body, run_id)
        build = ChunkBuilder(self.model)
        for chunk in turn_chunks(turn, build):
            yield chunk  # all at once, as a fast server's buffered stream would arrive
        if wants_usage(body):
            prompt = estimate_tokens(json.dumps(body.get("messages") or []))
            said = (
                turn.content
                + turn.reasoning
                + "".join(c.name + c.arguments for c in turn.tool_calls)
            )
            yield build.usage(prompt, estimate_tokens(said))
