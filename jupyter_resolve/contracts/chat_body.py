"""Request-shape translation for /resolve/api/chat (pure).

The client sends ``{messages, model?, soul?, system?}``; agent-httpd wants
``{run_id, message, history, system, tools, model, budget}``. The last user message becomes
``message``, everything else (but system messages) ``history``, or, when the request holds only
the new message, the session's transcript fitted by :mod:`.context`; the system prompt is the
soul's prompt, then the project instructions, then the client's system text, then the tool
discipline, always last.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .bodies import AgentChatBody, Budget, ChatMessage, ChatRequest, text_of
from .compaction import summary_room
from .context import Assembly, Instruction, answer_room, context_window, fit, system_prompt
from .errors import BadRequest


def message_text(message: ChatMessage) -> str:
    """The text of a message whose content is a string or a list of OpenAI content parts."""
    return text_of(message.content)


def continues_session(request: ChatRequest) -> bool:
    """Whether the request holds only the new user message (plus system text): it then continues
    the session's transcript; one that carries earlier turns itself is stateless."""
    turns = [m for m in request.messages if m.role not in ("system", "developer")]
    return len(turns) == 1 and turns[0].role == "user"


def assemble_chat(
    request: ChatRequest,
    *,
    run_id: str,
    model: str,
    tools: Sequence[dict[str, Any]],
    discipline: str,
    soul_prompt: str = "",
    rounds: int = 8,
    instructions: Sequence[Instruction] = (),
    transcript: Sequence[dict[str, Any]] | None = None,
    window: int = 0,
    ratio: float = 1.0,
    summarize: bool = False,
    elided_tools: int = 0,
) -> tuple[AgentChatBody, Assembly | None]:
    """Translate a client chat request into the runtime's ``/chat`` body.

    A request that :func:`continues_session` gets ``transcript`` (fitted to ``window`` tokens,
    the model family's default when 0) as its history; the :class:`Assembly` says what fitting
    did; with ``summarize``, room is kept for a summary of the turns it drops; the first
    ``elided_tools`` tool messages stay elided as the session's last step left them. Any other
    request's history is exactly what it sent (the Assembly is None).
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
    system = system_prompt(soul_prompt, instructions, client_system, discipline)
    message = message_text(request.messages[last_user])
    assembly = None
    if transcript is not None and continues_session(request):
        fitted_window = context_window(model, window)
        room = summary_room(fitted_window - answer_room(fitted_window)) if summarize else 0
        assembly = fit(
            transcript,
            system=system,
            message=message,
            tools=tools,
            window=fitted_window,
            ratio=ratio,
            summary_room=room,
            elided_tools=elided_tools,
        )
        history = assembly.history
    else:
        history = [
            m.model_dump(exclude_none=True)
            for i, m in enumerate(request.messages)
            if i != last_user and m.role not in ("system", "developer")
        ]
    # built here from validated parts: constructed, not validated again
    body = AgentChatBody.model_construct(
        run_id=run_id,
        message=message,
        history=history,
        system=system,
        tools=list(tools),
        model=model,
        budget=Budget(rounds=rounds),  # the one part a setting can put out of range
    )
    return body, assembly
