"""HTTP/1.1 chunked transfer coding, decoded (pure: no I/O).

A streamed answer is usually one chunk per SSE event; decoding a whole read at once, with a
bytes search per chunk, is what makes reading the stream cheap (see :mod:`.raw_http`).
Sizes are bounded: a chunk-size line longer than ``LINE_MAX`` or a chunk larger than
``CHUNK_MAX`` is an error, as is anything that is not the coding.
"""

from __future__ import annotations

from ..contracts.errors import ResolveError

LINE_MAX = 4096
CHUNK_MAX = 64 * 1024 * 1024


class ChunkedError(ResolveError, ValueError):
    """The body does not follow the chunked coding."""

    code = "bad_chunked_body"


class ChunkedDecoder:
    """Feed the body's bytes; get the data they complete. :attr:`done` after the last chunk
    (and its trailers)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._left = 0  # data bytes still to come in the current chunk
        self._crlf = False  # the CRLF after a chunk's data is still to come
        self._trailers = False  # after the zero-size chunk: trailer lines until a blank one
        self.done = False

    @property
    def pending(self) -> bool:
        """Bytes were fed that the coding did not take (after the last chunk: not this body's)."""
        return bool(self._buffer)

    def feed(self, data: bytes) -> list[bytes]:
        buffer = self._buffer + data if self._buffer else data
        out: list[bytes] = []
        position = 0
        end = len(buffer)
        while position < end and not self.done:
            if self._left:
                take = min(self._left, end - position)
                out.append(buffer[position : position + take])
                position += take
                self._left -= take
                self._crlf = self._left == 0
                continue
            line_end = buffer.find(b"\r\n", position)
            if line_end < 0:
                if end - position > LINE_MAX:
                    raise ChunkedError("a chunk-size line is too long")
                break
            line = buffer[position:line_end]
            position = line_end + 2
            if self._crlf:
                if line:
                    raise ChunkedError("a chunk's data is longer than its size")
                self._crlf = False
            elif self._trailers:
                self.done = not line
            else:
                size = _size(line)
                stop = position + size
                if size and buffer[stop : stop + 2] == b"\r\n":  # all here: one step, not three
                    out.append(buffer[position:stop])
                    position = stop + 2
                    continue
                self._left = size
                self._trailers = size == 0
        self._buffer = buffer[position:] if position < end else b""
        return out


def _size(line: bytes) -> int:
    digits = line.split(b";", 1)[0].strip()
    if not digits or len(digits) > 16:
        raise ChunkedError(f"not a chunk size: {line[:40]!r}")
    try:
        size = int(digits, 16)
    except ValueError as exc:
        raise ChunkedError(f"not a chunk size: {line[:40]!r}") from exc
    if size < 0 or size > CHUNK_MAX:
        raise ChunkedError(f"a chunk of {size} bytes is more than this reader takes")
    return size
