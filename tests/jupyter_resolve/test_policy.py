from __future__ import annotations

from jupyter_resolve.policy import decide, invalid_entries


def test_name_beats_effect_beats_default() -> None:
    assert decide("shell", "exec", "ask", {}) == "ask"
    assert decide("shell", "exec", "ask", {"exec": "auto"}) == "auto"
    assert decide("shell", "exec", "ask", {"exec": "auto", "shell": "deny"}) == "deny"
    assert decide("read_file", "read", "auto", {"read": "ask"}) == "ask"
    assert decide("x", "exec", "bogus", {}) == "ask"


def test_promotion_always_needs_a_person() -> None:
    assert decide("artifacts.promote", "write", "ask", {"write": "auto"}) == "ask"
    assert decide("artifacts.promote", "write", "ask", {"artifacts.promote": "auto"}) == "ask"
    assert decide("artifacts.promote", "write", "ask", {"artifacts.promote": "deny"}) == "deny"


def test_invalid_entries_are_named() -> None:
    problems = invalid_entries({"exec": "maybe", "nope": "auto"}, ["python"])
    assert "approval_policy: 'exec': 'maybe' is not auto, ask or deny" in problems
    assert "approval_policy: 'nope' is neither a tool nor an effect" in problems
