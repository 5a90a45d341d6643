from __future__ import annotations

from jupyter_resolve.contracts.policy import decide, invalid_entries


def test_name_beats_effect_beats_default() -> None:
    assert decide("shell", "exec", "ask", {}) == "ask"
    assert decide("shell", "exec", "ask", {"exec": "auto"}) == "auto"
    assert decide("shell", "exec", "ask", {"exec": "auto", "shell": "deny"}) == "deny"
    assert decide("read_file", "read", "auto", {"read": "ask"}) == "ask"
    assert decide("x", "exec", "bogus", {}) == "ask"


def test_promotion_always_needs_a_person() -> None:
    from jupyter_resolve.tools.catalog import load_schemas

    (promote,) = [s for s in load_schemas() if s.always_ask]  # its schema says so, nothing else
    name, always = promote.name, promote.always_ask
    assert decide(name, "write", "ask", {"write": "auto"}, always) == "ask"
    assert decide(name, "write", "ask", {name: "auto"}, always) == "ask"
    assert decide(name, "write", "ask", {name: "deny"}, always) == "deny"
    assert decide(name, "write", "ask", {name: "auto"}) == "auto"  # the fact decides, not the name


def test_invalid_entries_are_named() -> None:
    problems = invalid_entries({"exec": "maybe", "nope": "auto"}, ["python"])
    assert "approval_policy: 'exec': 'maybe' is not auto, ask or deny" in problems
    assert "approval_policy: 'nope' is neither a tool nor an effect" in problems


def test_both_exec_tools_share_one_default_and_one_switch() -> None:
    # python can do all that shell does (subprocess), so they never get different defaults:
    # both auto (the sandbox is the protection); {"exec": "ask"} reviews every piece of code.
    from jupyter_resolve.tools.catalog import load_schemas

    schemas = {s.name: s for s in load_schemas()}
    kernel_exec = [s for s in schemas.values() if s.effect == "exec" and s.runs_in == "kernel"]
    assert sorted(s.name for s in kernel_exec) == ["python", "shell"]
    assert {s.approval for s in kernel_exec} == {"auto"}
    for schema in kernel_exec:
        assert decide(schema.name, "exec", schema.approval, {}) == "auto"
        assert decide(schema.name, "exec", schema.approval, {"exec": "ask"}) == "ask"
