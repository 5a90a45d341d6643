"""What %resolve's footer says while a call is written (``tool.writing``) and when usage was
estimated (issue 46.4)."""

from __future__ import annotations

from typing import Any

from jupyter_resolve.magics.view_model import RunView, fold

RUN = "run-1"


def ev(seq: int, kind: str, **data: Any) -> dict[str, Any]:
    return {"seq": seq, "type": kind, "data": {"run_id": RUN, **data}}


START = ev(1, "run.started", session_id="s-1", soul=None, model="local", budget={"rounds": 8})


def test_a_call_being_written_shows_in_the_footer_until_it_is_requested() -> None:
    view = RunView()
    view.apply(START)
    part = view.apply(ev(2, "tool.writing", index=0, call_id=None, name="python", tokens=0))
    assert part == ("footer", "")
    assert not view.tools  # no card for a call not written yet
    assert view.footer_text().endswith("writing a python call…")  # its name only, so far
    view.apply(ev(3, "tool.writing", index=0, call_id=None, name="python", tokens=1234))
    assert "writing a python call… ≈ 1,234 tokens" in view.footer_text()
    view.apply(ev(4, "tool.requested", call_id="c1", name="python", arguments={"code": "1"}))
    assert "writing" not in view.footer_text()
    assert view.footer_text().endswith("running…")


def test_the_run_end_clears_the_writing_line() -> None:
    view = fold(
        [
            START,
            ev(2, "tool.writing", index=0, call_id="c1", name="read_file", tokens=1),
            ev(3, "run.completed", reason="cancelled", rounds=1),
        ]
    )
    assert view.writing_text() is None
    assert "writing" not in view.footer_text()


def test_estimated_usage_carries_an_approximation_sign() -> None:
    exact = fold([START, ev(2, "usage", prompt_tokens=1000, completion_tokens=234)])
    assert "1,234 tokens" in exact.footer_text() and "≈" not in exact.footer_text()
    guessed = fold(
        [
            START,
            ev(2, "usage", prompt_tokens=10, completion_tokens=2),
            ev(3, "usage", prompt_tokens=1000, completion_tokens=222, estimated=True),
        ]
    )
    assert "≈ 1,234 tokens" in guessed.footer_text()
