"""The runtime's byte stream read in batches: split on blank lines, deltas merged per read."""

from __future__ import annotations

import json

from jupyter_resolve.contracts.frames import FrameReader, FrameTranslator


def frame(t: str, **d: object) -> bytes:
    return b"data: " + json.dumps({"t": t, "d": d}).encode() + b"\n\n"


def test_reader_keeps_a_partial_frame_for_the_next_read() -> None:
    reader = FrameReader()
    whole = frame("delta", text="Hel") + frame("delta", text="lo")
    assert reader.feed(whole[:10]) == []
    first = reader.feed(whole[10:-5])
    assert [json.loads(p)["d"]["text"] for p in first] == ["Hel"]
    second = reader.feed(whole[-5:])
    assert [json.loads(p)["d"]["text"] for p in second] == ["lo"]
    assert reader.close() == []


def test_reader_reads_other_sse_shapes_through_the_decoder() -> None:
    reader = FrameReader()
    odd = b': comment\ndata: {"t":"delta",\ndata: "d":{"text":"x"}}\n\n' + frame("round", n=1)
    payloads = reader.feed(odd)
    assert [json.loads(p)["t"] for p in payloads] == ["delta", "round"]
    assert reader.feed(b'data: {"t":"done","d":{"reason":"stop"}}') == []
    assert [json.loads(p)["t"] for p in reader.close()] == ["done"]  # no blank line at the end


def test_a_batch_merges_deltas_that_follow_each_other_only() -> None:
    tr = FrameTranslator(budget=8)
    payloads = FrameReader().feed(
        frame("delta", text="Hel")
        + frame("delta", text="lo ")
        + frame("reasoning", text="hmm")
        + frame("delta", text="wor")
        + frame("delta", text="ld")
        + frame("usage", prompt_tokens=3, completion_tokens=2)
        + frame("delta", text="!")
    )
    assert tr.translate_batch(payloads) == [
        ("text.delta", {"text": "Hello "}),
        ("reasoning.delta", {"text": "hmm"}),
        ("text.delta", {"text": "world"}),
        ("usage", {"prompt_tokens": 3, "completion_tokens": 2}),
        ("text.delta", {"text": "!"}),
    ]
    assert tr.text_chars == len("Hello world!")


def test_a_batch_stops_at_done_and_keeps_bad_frames_as_errors() -> None:
    tr = FrameTranslator(budget=8)
    payloads = [
        json.dumps({"t": "delta", "d": {"text": "a"}}).encode(),
        b"{not json",
        json.dumps({"t": "delta", "d": {"text": "b"}}).encode(),
        json.dumps({"t": "done", "d": {"reason": "stop", "rounds": 1}}).encode(),
        json.dumps({"t": "delta", "d": {"text": "late"}}).encode(),
    ]
    kinds = [kind for kind, _ in tr.translate_batch(payloads)]
    assert kinds == ["text.delta", "run.error", "text.delta", "run.completed"]
    assert tr.completed
