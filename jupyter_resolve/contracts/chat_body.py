"""Request-shape translation for /resolve/api/chat (pure).

The client sends ``{messages, model?, soul?, system?}``; agent-httpd wants
``{run_id, message, history, system, tools, model, budget}``. The last user message becomes
``message``, everything else (but system messages) ``history``; the system prompt is the soul's
prompt, then the client's system text, then the tool discipline, always last.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .bodies import AgentChatBody, Budget, ChatMessage, ChatRequest, text_of
from .errors import BadRequest


def message_text(message: ChatMessage) -> str:
    """The text of a message whose content is a string or a list of OpenAI content parts."""
    return text_of(message.content)


def build_agent_chat_body(
    request: ChatRequest,
    *,
    run_id: str,
    model: str,
    tools: Sequence[dict[str, Any]],
    discipline: str,
    soul_prompt: str = "",
    rounds: int = 8,
) -> AgentChatBody:
    """Translate a client chat request into the runtime's ``/chat`` body.

    Raises :class:`BadRequest` when there is no user message to answer.
    """
    last_user = max(
        (i for i, m in enumerate(request.messages) if m.role == "user"),
        default=None,
    )
    if last_user is None:
        raise BadRequest("messages: needs at least one message with role 'user'")
    client_system = [message_text(m) for m in request.messages if m.role in ("system", "developer")]
    if request.system:
        client_system.append(request.system)
    history = [
        m.model_dump(exclude_none=True)
        for i, m in enumerate(request.messages)
        if i != last_user and m.role not in ("system", "developer")
    ]
    parts = [soul_prompt.strip(), *(s.strip() for s in client_system), discipline.strip()]
    return AgentChatBody(
        run_id=run_id,
        message=message_text(request.messages[last_user]),
        history=history,
        system="\n\n".join(p for p in parts if p),
        tools=list(tools),
        model=model,
        budget=Budget(rounds=rounds),
    )
