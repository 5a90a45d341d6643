"""A round's completion text, as the chunks of a chat answer (pure).

The local model answers a round in the shape :mod:`.local_prompt`'s grammar holds it to:
``message:`` and its words, or ``functions.<name>:`` and the call's JSON arguments. The reader
turns the text as it streams into OpenAI ``chat.completion.chunk`` dicts: the words as
``content``, a call as one tool call whose arguments grow with each piece (so the panel shows
"writing a python call…" as it is written). Without tools the text is the answer itself.
"""

from __future__ import annotations

from .base import Chunk
from .chunks import ChunkBuilder, new_call_id
from .local_prompt import CALL, MESSAGE

HEAD = "head"  # not yet known: words or a call
WORDS, NAME, ARGUMENTS = "words", "name", "arguments"


class RoundReader:
    """Feed it the completion's text pieces; it returns the chunks each one makes."""

    def __init__(self, build: ChunkBuilder, *, tools: bool) -> None:
        self.build = build
        self.state = HEAD if tools else WORDS
        self.buffer = ""
        self.called = ""  # the name of the tool called, once known
        self.text = ""  # all the text read

    def feed(self, piece: str) -> list[Chunk]:
        self.text += piece
        if self.state == WORDS:
            return [self._words(piece)] if piece else []
        if self.state == ARGUMENTS:
            return [self._arguments(piece)] if piece else []
        self.buffer += piece
        return self._decide()

    def _decide(self) -> list[Chunk]:
        buffer = self.buffer
        if buffer.startswith(MESSAGE):
            self.state, self.buffer = WORDS, ""
            rest = buffer[len(MESSAGE) :]
            return [self._words(rest)] if rest else []
        if buffer.startswith(CALL) and ":\n" in buffer:
            name, _, rest = buffer[len(CALL) :].partition(":\n")
            self.state, self.buffer, self.called = ARGUMENTS, "", name
            call = {"index": 0, "id": new_call_id(), "type": "function"}
            call["function"] = {"name": name, "arguments": rest}
            return [self.build.delta({"role": "assistant", "tool_calls": [call]})]
        if MESSAGE.startswith(buffer) or buffer.startswith(CALL) or CALL.startswith(buffer):
            return []  # wait for more
        self.state, self.buffer = WORDS, ""  # not the grammar's shape: words, as they are
        return [self._words(buffer)]

    def close(self, finish_reason: str) -> list[Chunk]:
        """The last chunks: what is still held, and the finish."""
        out = []
        if self.buffer:  # ended before it was clear: words
            out.append(self._words(self.buffer))
            self.buffer = ""
        if self.called and finish_reason == "stop":
            finish_reason = "tool_calls"
        out.append(self.build.finish(finish_reason))
        return out

    def _words(self, text: str) -> Chunk:
        return self.build.delta({"content": text})

    def _arguments(self, text: str) -> Chunk:
        return self.build.delta({"tool_calls": [{"index": 0, "function": {"arguments": text}}]})
