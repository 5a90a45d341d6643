"""The chunked transfer coding, decoded a read at a time (providers/chunked.py)."""

from __future__ import annotations

import pytest

from jupyter_resolve.providers.chunked import ChunkedDecoder, ChunkedError

BODY = b"5\r\nhello\r\n1;ext=1\r\n \r\n6\r\nworld!\r\n0\r\nTrailer: x\r\n\r\n"


def test_whole_and_byte_by_byte_give_the_same_data() -> None:
    whole = ChunkedDecoder()
    assert b"".join(whole.feed(BODY)) == b"hello world!" and whole.done
    split = ChunkedDecoder()
    pieces = [p for i in range(len(BODY)) for p in split.feed(BODY[i : i + 1])]
    assert b"".join(pieces) == b"hello world!" and split.done


def test_every_cut_into_two_reads_gives_the_same_data() -> None:
    body = b"4\r\na\r\nb\r\n" + BODY  # a chunk whose data holds a CRLF of its own
    for cut in range(len(body) + 1):
        decoder = ChunkedDecoder()
        pieces = decoder.feed(body[:cut]) + decoder.feed(body[cut:])
        assert b"".join(pieces) == b"a\r\nbhello world!" and decoder.done, cut


def test_nothing_after_the_last_chunk_is_data() -> None:
    decoder = ChunkedDecoder()
    assert b"".join(decoder.feed(b"2\r\nok\r\n0\r\n\r\nHTTP/1.1 200 OK")) == b"ok"
    assert decoder.done


@pytest.mark.parametrize(
    "body",
    [b"zz\r\nhello\r\n", b"-1\r\n", b"3\r\nhello\r\n", b"F" * 5000, b"ffffffffff\r\n"],
)
def test_what_is_not_the_coding_is_an_error(body: bytes) -> None:
    with pytest.raises(ChunkedError):
        ChunkedDecoder().feed(body)
