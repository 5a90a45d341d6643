"""``%resolve history``: a session's transcript (DESIGN 9.1) as Markdown, safe to show.

The transcript's text came from a person, a model and tools. Each turn is rendered to HTML on
its own and sanitized (:func:`.safe_html.markdown_html`), so nothing in one turn (an open code
fence, raw HTML, a script) can reach the next or a trusted renderer; names and ids are escaped,
tool arguments and results go into code fences, results cut to :data:`RESULT_CHARS`.
"""

from __future__ import annotations

import json
from typing import Any

from .run_markdown import fence
from .safe_html import code_span, escape_markdown, markdown_html

RESULT_CHARS = 600
ARGUMENT_CHARS = 2000


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"\n… ({len(text) - limit} more characters)"


def _text(value: Any) -> str:
    """A message's content as text (a string, or a list of content parts)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict):
                parts.append(f"[{part.get('type', 'part')}]")
            else:
                parts.append(str(part))
        return "\n".join(parts)
    return json.dumps(value, ensure_ascii=False)


def _arguments(raw: Any) -> str:
    text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    if isinstance(parsed, dict) and set(parsed) == {"code"} and isinstance(parsed["code"], str):
        return str(parsed["code"])
    return json.dumps(parsed, ensure_ascii=False, indent=1)


def turns(messages: list[dict[str, Any]]) -> list[str]:
    """The transcript as Markdown sections, one per message (user text and assistant text as
    written, tool calls and results fenced)."""
    names: dict[str, str] = {}
    sections: list[str] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role", "?"))
        text = _text(message.get("content"))
        if role == "tool":
            call = str(message.get("tool_call_id", ""))
            name = names.get(call, "tool")
            head = f"**↳ {escape_markdown(name)} result** {code_span(call)}".rstrip()
            sections.append(head + "\n\n" + fence(_cut(text, RESULT_CHARS) or "(empty)"))
            continue
        head = {"user": "**🧑 user**", "assistant": "**🤖 assistant**"}.get(
            role, f"**{escape_markdown(role)}**"
        )
        parts = [head]
        if text.strip():
            parts.append(text)
        for call in message.get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            function = call.get("function") or {}
            name = str(function.get("name", "tool"))
            names[str(call.get("id", ""))] = name
            lang = "python" if name == "python" else ""
            args = _cut(_arguments(function.get("arguments", "")), ARGUMENT_CHARS)
            parts.append(f"**🔧 {escape_markdown(name)}** {code_span(str(call.get('id', '')))}")
            parts.append(fence(args, lang))
        sections.append("\n\n".join(parts))
    return sections


def header(answer: dict[str, Any]) -> str:
    messages = answer.get("messages") or []
    return (
        f"Session {code_span(str(answer.get('session_id', '')))}: {len(messages)} messages, "
        f"about {escape_markdown(str(answer.get('tokens_estimate', '?')))} tokens"
    )


def transcript_markdown(answer: dict[str, Any]) -> str:
    """The transcript as one Markdown text (plain-text output; never rendered trusted as is)."""
    sections = turns(list(answer.get("messages") or []))
    return "\n\n---\n\n".join([header(answer), *sections]) if sections else header(answer)


def transcript_html(answer: dict[str, Any], *, allow_remote_images: bool = False) -> str:
    """The transcript as sanitized HTML, each section rendered and cleaned on its own."""
    sections = [header(answer), *turns(list(answer.get("messages") or []))]
    rendered = [markdown_html(s, allow_remote_images=allow_remote_images) for s in sections]
    return "<hr>".join(f"<div>{html}</div>" for html in rendered)


def show_transcript(answer: dict[str, Any], *, allow_remote_images: bool = False) -> None:
    from IPython.display import display

    bundle = {
        "text/html": transcript_html(answer, allow_remote_images=allow_remote_images),
        "text/plain": transcript_markdown(answer),
    }
    display(bundle, raw=True)  # type: ignore[no-untyped-call]
