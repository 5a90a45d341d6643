"""Context assembly (pure, DESIGN 9.1): the system prompt, the session's transcript and the new
message, fitted to the model's context window.

The system prompt is the soul's prompt, then the project instructions, then the client's system
text, then the tool discipline, always last. Tokens are estimated offline (characters / 4,
corrected by the ratio the provider's reported ``prompt_tokens`` bore to the estimate in the
session's previous run, bounded). Over budget, compaction step 1: old tool outputs are elided
first (the call stays, with a one-line note and the pointers found in the output: artifact ids,
file paths), then the oldest whole turns are dropped (step 2, their summary by the model, is the
run's: :mod:`.compaction`). A call and its result are never split and the new message is never
cut.

Fitting sheds in steps, so that each prompt extends the one before and a provider's prefix
cache keeps working (DESIGN 10.6): over the budget, outputs are elided down to ``LOW_WATER`` of
it (and when that is not enough, the oldest turns are dropped down to it too), and
that state (``elided_tools``: the first n tool messages are elided) is applied as it is to
every later round and turn until the budget is crossed again. The caller keeps the count (the
run and its log); nothing earlier in a prompt changes between two steps. A turn that would
overflow if it grew as much as the last one did takes its step at its start.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Message = dict[str, Any]

DEFAULT_WINDOW = 128_000
# Known model families (prefix of the lower-cased model name, window in tokens); first match.
MODEL_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5", 16_385),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("claude-", 200_000),
    ("llama", 128_000),
    ("qwen", 32_768),
    ("mistral", 32_768),
    ("gemma", 8_192),
    ("scripted", 128_000),
)
CHARS_PER_TOKEN = 4.0
MESSAGE_OVERHEAD = 4  # tokens of role and framing per message
RATIO_BOUNDS = (0.5, 2.0)
ELIDE_ABOVE = 200  # outputs shorter than this are kept (the note would be as long)
LOW_WATER = 0.45  # a step sheds down to this share of the budget: room for several more rounds
# (lower, and eliding alone cannot reach it beside a long tool list: every step summarizes)
ELIDED_MARK = "[output elided: "
MAX_POINTERS = 8
POINTER_SCAN = 500

_ARTIFACT = re.compile(r"art-[0-9a-f]{8,64}")
_PATH = re.compile(r"(?:\.{0,2}/)?(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7}")
_TOKENS = re.compile(r"[^\s'\"`,;()\[\]{}<>]{3,200}")  # candidate words, bounded: linear
_EDGES = ".:!?"


def context_window(model: str, configured: int = 0) -> int:
    """``configured`` when set (> 0), else the window of the model's family, else 128k."""
    if configured > 0:
        return configured
    name = model.lower().rsplit("/", 1)[-1]
    for prefix, window in MODEL_WINDOWS:
        if name.startswith(prefix):
            return window
    return DEFAULT_WINDOW


def answer_room(window: int) -> int:
    """Tokens kept free for the answer."""
    # a sixteenth, at least the local model's default answer (512): an eighth left the bench's
    # session (bench/prefix_cache.py) a step every fourth turn, over its goal of 8 breaks
    return min(8_192, max(512, window // 16))


def calibration(reported_prompt_tokens: int, estimated: int, previous: float = 1.0) -> float:
    """The correction for the next estimate: reported / estimated, bounded; ``previous`` when
    either is missing."""
    if reported_prompt_tokens <= 0 or estimated <= 0:
        return previous
    low, high = RATIO_BOUNDS
    return min(high, max(low, previous * reported_prompt_tokens / estimated))


def _chars(message: Message) -> int:
    content = message.get("content")
    n = len(content) if isinstance(content, str) else len(json.dumps(content)) if content else 0
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        n += len(str(function.get("name", ""))) + len(str(function.get("arguments", ""))) + 16
    return n + len(str(message.get("tool_call_id", "")))


def message_tokens(message: Message, ratio: float = 1.0) -> int:
    return MESSAGE_OVERHEAD + int(_chars(message) * ratio / CHARS_PER_TOKEN + 0.999)


def text_tokens(text: str, ratio: float = 1.0) -> int:
    return int(len(text) * ratio / CHARS_PER_TOKEN + 0.999)


def estimate(
    system: str,
    messages: Sequence[Message],
    message: str,
    tools: Sequence[dict[str, Any]] = (),
    ratio: float = 1.0,
) -> int:
    """The estimated prompt tokens of one inference request."""
    tools_chars = len(json.dumps(list(tools))) if tools else 0
    fixed = text_tokens(system, ratio) + text_tokens(message, ratio) + 2 * MESSAGE_OVERHEAD
    fixed += tools_tokens(tools_chars, ratio)
    return fixed + sum(message_tokens(m, ratio) for m in messages)


def tools_tokens(tools_chars: int, ratio: float = 1.0) -> int:
    """The estimated tokens of a tools list whose JSON is ``tools_chars`` long."""
    return int(tools_chars * ratio / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Instruction:
    """One project instructions file as the gateway read it."""

    path: str  # relative to the server root
    text: str
    sha256: str
    cut: bool = False


def system_prompt(
    soul_prompt: str,
    instructions: Sequence[Instruction],
    client_system: Sequence[str],
    discipline: str,
) -> str:
    """Soul prompt, project instructions, client system text, tool discipline (last)."""
    parts = [soul_prompt.strip()]
    for item in instructions:
        if item.text.strip():
            parts.append(f"Project instructions ({item.path}):\n{item.text.strip()}")
    parts += [s.strip() for s in client_system]
    parts.append(discipline.strip())
    return "\n\n".join(p for p in parts if p)


@dataclass
class Assembly:
    """What fitting the transcript gave: the history to send and what compaction did."""

    history: list[Message]
    before_tokens: int
    after_tokens: int
    budget: int
    elided: int = 0
    elided_tools: int = 0  # the first n tool messages of ``history`` are elided (the state)
    dropped_turns: int = 0
    dropped: list[Message] = field(default_factory=list)  # the messages of the dropped turns
    pointers: list[str] = field(default_factory=list)

    @property
    def compacted(self) -> dict[str, Any] | None:
        """The ``context.compacted`` data, when anything was elided or dropped."""
        if not self.elided and not self.dropped_turns:
            return None
        said = []
        if self.elided:
            said.append(f"elided {self.elided} old tool output{'s' * (self.elided != 1)}")
        if self.dropped_turns:
            said.append(
                f"dropped the {self.dropped_turns} oldest turn{'s' * (self.dropped_turns != 1)}"
            )
        note = "; ".join(said) + f" to fit {self.budget} tokens"
        # ``summary`` is the model's summary when the dropped turns get one (runs/compaction)
        return {
            "before_tokens": self.before_tokens,
            "after_tokens": self.after_tokens,
            "turns": self.dropped_turns,
            "elided": self.elided,
            "elided_tools": self.elided_tools,
            "note": note,
            "summary": note,
        }


def pointers(output: str) -> list[str]:
    """Artifact ids and file paths named in a tool output (at most ``MAX_POINTERS``), looked
    for in its first and last ``POINTER_SCAN`` characters (where tools name what they wrote)."""
    found: list[str] = []
    if len(output) > 2 * POINTER_SCAN:
        output = output[:POINTER_SCAN] + "\n" + output[-POINTER_SCAN:]
    for match in _TOKENS.finditer(output):
        word = match.group(0).rstrip(_EDGES)
        if len(word) > 160 or word in found or word.replace(".", "").isdigit():
            continue
        if _ARTIFACT.fullmatch(word) or ("://" not in word and _PATH.fullmatch(word)):
            found.append(word)
            if len(found) >= MAX_POINTERS:
                break
    return found


def elide(message: Message) -> Message:
    """A tool message with its output replaced by a one-line note and its pointers."""
    output = str(message.get("content") or "")
    note = f"{ELIDED_MARK}{len(output)} chars]"
    named = pointers(output)
    if named:
        note += " pointers: " + ", ".join(named)
    return {**message, "content": note}


def _elidable(message: Message) -> bool:
    content = str(message.get("content") or "")
    return (
        message.get("role") == "tool"
        and len(content) > ELIDE_ABOVE
        and not content.startswith(ELIDED_MARK)
    )


def _elide_leading(messages: list[Message], count: int) -> None:
    """Elide the outputs of the first ``count`` tool messages (in place): the state a step
    left, applied again to a later round's or turn's request."""
    seen = 0
    for i, m in enumerate(messages):
        if seen >= count:
            break
        if m.get("role") == "tool":
            seen += 1
            if _elidable(m):
                messages[i] = elide(m)


def _tools_through(messages: Sequence[Message], index: int) -> int:
    """How many tool messages are at or before ``index``."""
    return sum(1 for m in messages[: index + 1] if m.get("role") == "tool")


def _elide_oldest(
    messages: list[Message], costs: list[int], total: int, budget: int, end: int, ratio: float
) -> tuple[int, int, int]:
    """Elide tool outputs before ``end``, oldest first, until ``total`` fits ``budget``
    (``messages`` and ``costs`` change in place); the new total, how many were elided and the
    index of the last one elided (-1: none)."""
    elided, last = 0, -1
    for i in range(end):
        if total <= budget:
            break
        m = messages[i]
        if not _elidable(m):
            continue
        messages[i] = elide(m)
        cost = message_tokens(messages[i], ratio)
        total -= costs[i] - cost
        costs[i] = cost
        elided, last = elided + 1, i
    return total, elided, last


def _turn_starts(messages: Sequence[Message]) -> list[int]:
    starts = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    return starts if starts and starts[0] == 0 else [0, *starts]


def fit(
    transcript: Sequence[Message],
    *,
    system: str,
    message: str,
    tools: Sequence[dict[str, Any]] = (),
    window: int,
    ratio: float = 1.0,
    summary_room: int = 0,
    elided_tools: int = 0,
) -> Assembly:
    """Fit the transcript into ``window`` minus the answer's room (see the module doc), the
    first ``elided_tools`` tool messages elided as the session's last step left them. Turns
    are dropped down to ``LOW_WATER`` of the budget, ``summary_room`` more tokens freed for the
    summary that will stand in for them (if any), when eliding alone does not reach it."""
    budget = window - answer_room(window)
    history = list(transcript)
    _elide_leading(history, elided_tools)
    costs = [message_tokens(m, ratio) for m in history]
    fixed = estimate(system, (), message, tools, ratio)
    total = fixed + sum(costs)
    tools_in = _tools_through(history, len(history))
    assembly = Assembly(history, total, total, budget, elided_tools=min(elided_tools, tools_in))
    # a step when this turn, grown as much as the last one did, would not fit: it is taken
    # now, before the run's rounds, rather than in one of them
    last_turn = _turn_starts(transcript)[-1] if transcript else 0
    growth = sum(message_tokens(m, ratio) for m in transcript[last_turn:])
    if total <= budget - min(growth, budget // 4) or not history:
        return assembly
    # 1. A step: elide tool outputs, oldest first, down to the low-water mark.
    low = int(budget * LOW_WATER)
    total, assembly.elided, last = _elide_oldest(history, costs, total, low, len(history), ratio)
    if last >= 0:
        assembly.elided_tools = _tools_through(history, last)
    # 2. Drop the oldest whole turns (a turn: a user message and what followed it).
    if total > low:
        # down to the low-water mark too, so that the next turns fit without another step
        # (turns dropped without a summary stay out: runs/transcript.py keeps them out)
        target = low - summary_room
        starts = _turn_starts(history)
        cut = 0
        for n, start in enumerate(starts):
            if total <= target:
                break
            end = starts[n + 1] if n + 1 < len(starts) else len(history)
            total -= sum(costs[start:end])
            cut = end
            assembly.dropped_turns += 1
        assembly.dropped = history[:cut]
        history = history[cut:]
        # the state counts from the history sent
        gone = _tools_through(assembly.dropped, cut)
        assembly.elided_tools = max(0, assembly.elided_tools - gone)
    assembly.history = history
    assembly.after_tokens = total
    return assembly


def surely_fits(body_bytes: int, messages: int, *, window: int, ratio: float = 1.0) -> bool:
    """Whether a request of ``body_bytes`` bytes of JSON with ``messages`` messages fits the
    window whatever its content: :func:`fit_round` need not count it. A message's counted
    characters are at most twice its JSON's (``str`` of arguments sent as an object is
    longer than their compact JSON), so twice the body is an upper bound."""
    most = int(2 * body_bytes * ratio / CHARS_PER_TOKEN) + messages * (MESSAGE_OVERHEAD + 1)
    return most <= window - answer_room(window)


def fit_round(
    messages: Sequence[Message],
    tools: Sequence[dict[str, Any]] = (),
    *,
    window: int,
    ratio: float = 1.0,
    elided_tools: int = 0,
) -> tuple[list[Message], dict[str, Any] | None]:
    """One round of a run, as the runtime asks for it, fitted in flight: a run's own tool
    outputs grow its requests past what fitting at its start allowed for. The first
    ``elided_tools`` tool messages are elided as the run's last step left them; over budget, a
    step elides the oldest tool outputs down to ``LOW_WATER`` of it (all but the results the
    newest round answers), then leaves out the oldest whole turns before the run's own message
    (the next run summarizes them). Returns the messages and the ``context.compacted`` data
    (None: no step was needed), whose ``elided_tools`` is the new state.
    """
    budget = window - answer_room(window)
    fitted = list(messages)
    _elide_leading(fitted, elided_tools)
    costs = [message_tokens(m, ratio) for m in fitted]
    tools_tokens = int(len(json.dumps(list(tools))) * ratio / CHARS_PER_TOKEN) if tools else 0
    total = before = tools_tokens + sum(costs)
    if total <= budget:
        return fitted, None
    newest = max((i for i, m in enumerate(fitted) if m.get("role") == "assistant"), default=0)
    low = int(budget * LOW_WATER)
    total, elided, last = _elide_oldest(fitted, costs, total, low, newest, ratio)
    state = _tools_through(fitted, last) if last >= 0 else elided_tools
    users = [i for i, m in enumerate(fitted) if m.get("role") == "user"]
    dropped = 0
    if total > budget and len(users) > 1:
        # the turns before the run's own message (users[-1]): what follows it is this run's
        cut = users[0]
        for n, start in enumerate(users[:-1]):
            if total <= budget:
                break
            cut = users[n + 1]
            total -= sum(costs[start:cut])
            dropped += 1
        fitted = fitted[: users[0]] + fitted[cut:]
    if not elided and not dropped:
        return fitted, None
    said = [f"elided {elided} tool output{'s' * (elided != 1)}"] if elided else []
    if dropped:
        said.append(f"left out the {dropped} oldest turn{'s' * (dropped != 1)}")
    note = " and ".join(said) + f" in this round to fit {budget} tokens"
    compacted = {
        "before_tokens": before,
        "after_tokens": total,
        "turns": dropped,
        "elided": elided,
        "elided_tools": state,
        "note": note,
        "summary": note,
    }
    return fitted, compacted
