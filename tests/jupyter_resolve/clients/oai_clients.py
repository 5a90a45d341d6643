"""litellm and langchain-openai (run by .venv/litellm's interpreter) stream through the
facade: ``SCRIPT BASE_URL TOKEN MODEL``; the report holds what each put together."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import litellm
from langchain_openai import ChatOpenAI


async def main() -> None:
    base, token, model = sys.argv[1], sys.argv[2], sys.argv[3]
    messages = [{"role": "user", "content": "hi"}]
    out: dict[str, Any] = {}
    # litellm: the "openai/" prefix means any OpenAI-compatible server at api_base
    stream = await litellm.acompletion(
        model=f"openai/{model}", api_base=base, api_key=token, messages=messages, stream=True
    )
    pieces = [chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices]
    out["litellm"] = {"text": "".join(pieces), "chunks": len(pieces)}
    chat = ChatOpenAI(model=model, base_url=base, api_key=token, streaming=True, max_retries=0)
    parts = [str(piece.content) async for piece in chat.astream("hi")]
    out["langchain"] = {"text": "".join(parts), "chunks": len(parts)}
    print(json.dumps(out))


asyncio.run(main())
