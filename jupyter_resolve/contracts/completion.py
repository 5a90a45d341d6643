"""Inline completion (issue 35, DESIGN 10.3), the pure part: the request body, the bounds
of the context, the style per model family, the provider payloads and the cleaning of the
answer so a suggestion stays in the current block."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Style = Literal["suffix", "fim", "chat"]

# a suggestion ends at a blank stretch or a fence: it stays in the current block
STOPS = ["\n\n\n", "```"]
MAX_TOKENS = 96
CHAT_SYSTEM = (
    "You complete code at the cursor marked <CURSOR>. Answer with only the text to insert "
    "there: no explanation, no code fences, not the text before or after the cursor."
)
CURSOR = "<CURSOR>"


class CompletionRequest(BaseModel):
    """``POST /resolve/api/completion``: the text before and after the cursor."""

    model_config = ConfigDict(extra="forbid")

    prefix: str = Field(max_length=2_000_000)
    suffix: str = Field(default="", max_length=2_000_000)
    language: str = Field(default="python", max_length=64)
    path: str | None = Field(default=None, max_length=4096)
    cell_id: str | None = Field(default=None, max_length=256)
    stream: bool = False
    model: str | None = Field(default=None, max_length=256)


def bound(prefix: str, suffix: str, max_prefix: int, max_suffix: int) -> tuple[str, str]:
    """The end of the prefix and the start of the suffix (the text nearest the cursor)."""
    if max_prefix >= 0 and len(prefix) > max_prefix:
        prefix = prefix[len(prefix) - max_prefix :]
    if max_suffix >= 0 and len(suffix) > max_suffix:
        suffix = suffix[:max_suffix]
    return prefix, suffix


def on_magic_line(prefix: str, suffix: str) -> bool:
    """Whether the cursor's line is a magic or shell line (``%resolve``, ``%%time``, ``!ls``):
    those are left alone."""
    line = prefix.rsplit("\n", 1)[-1] + suffix.split("\n", 1)[0]
    return line.lstrip().startswith(("%", "!"))


def style_for(model: str, configured: str) -> Style:
    """The configured style, or for ``auto`` the model family's."""
    if configured in ("suffix", "fim", "chat"):
        return configured  # type: ignore[return-value]
    name = model.lower()
    if "codestral" in name:
        return "fim"
    if any(k in name for k in ("instruct", "coder", "deepseek", "starcoder", "local", "gguf")):
        return "suffix"
    return "chat"


def suffix_payload(model: str, prefix: str, suffix: str) -> dict[str, Any]:
    """The legacy ``/v1/completions`` body (llama.cpp, vLLM, DeepSeek beta, OpenAI instruct)."""
    return {
        "model": model,
        "prompt": prefix,
        "suffix": suffix,
        "max_tokens": MAX_TOKENS,
        "temperature": 0,
        "stop": STOPS,
        "stream": False,
    }


def fim_payload(model: str, prefix: str, suffix: str) -> dict[str, Any]:
    """Mistral/Codestral ``/v1/fim/completions``: the same body at another path."""
    return suffix_payload(model, prefix, suffix)


def chat_messages(prefix: str, suffix: str, language: str) -> list[dict[str, str]]:
    """A chat prompt that marks the cursor."""
    user = f"Language: {language}\n{prefix}{CURSOR}{suffix}"
    return [{"role": "system", "content": CHAT_SYSTEM}, {"role": "user", "content": user}]


def cut(text: str) -> str:
    """The suggestion up to the first stop sequence."""
    for stop in STOPS:
        at = text.find(stop)
        if at >= 0:
            text = text[:at]
    return text


def clean_chat(answer: str, prefix: str, suffix: str) -> str:
    """A chat model's answer as the text to insert: the code fence unwrapped, the prefix's
    current line or the suffix it repeated dropped, cut at the stops."""
    text = answer.replace(CURSOR, "")
    stripped = text.strip("\n")
    if stripped.startswith("```"):
        body = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        text = body[: body.rfind("```")] if "```" in body else body
        text = text.rstrip("\n")
    line = prefix.rsplit("\n", 1)[-1]
    if prefix and text.startswith(prefix):
        text = text[len(prefix) :]
    elif line.strip() and text.startswith(line):
        text = text[len(line) :]
    if suffix.strip() and text.endswith(suffix):
        text = text[: len(text) - len(suffix)]
    return cut(text)


SCRIPTED_COMPLETIONS = [
    ("import ", "numpy as np"),
    ("from ", "pathlib import Path"),
    ("def ", "main() -> None:\n    pass"),
    ("for ", "item in items:"),
    ("print(", '"hello")'),
]


def scripted_completion(prefix: str) -> str:
    """The scripted provider's deterministic suggestion for the cursor's line (``make lab``
    shows it offline)."""
    line = prefix.rsplit("\n", 1)[-1]
    stripped = line.lstrip()
    for start, completion in SCRIPTED_COMPLETIONS:
        if stripped == start:
            return completion
    if not stripped:
        return "# TODO"
    return ""


def safe_length(text: str) -> int:
    """How much of a streamed ``text`` (already cut) can be shown: all but a tail that may be
    the start of a stop sequence the next piece completes."""
    for keep in range(min(len(text), max(len(s) for s in STOPS) - 1), 0, -1):
        if any(stop.startswith(text[-keep:]) for stop in STOPS):
            return len(text) - keep
    return len(text)
