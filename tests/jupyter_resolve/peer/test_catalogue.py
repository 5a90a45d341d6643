"""The read-only catalogue: names and descriptions only, cut, scrubbed (pure)."""

from __future__ import annotations

from types import SimpleNamespace

from jupyter_resolve.peer.catalogue import (
    MAX_TEXT,
    SoulEntry,
    builtin_roles,
    cut,
    scrub,
    skill_entries,
    soul_entries,
    tool_entries,
)
from jupyter_resolve.tools.catalog import bridge_tools as bridge_manifest
from jupyter_resolve.tools.catalog import load_schemas


def test_cut_to_120_characters() -> None:
    assert MAX_TEXT == 120
    assert cut("short") == "short"
    long = cut("x" * 500)
    assert len(long) == 120 and long.endswith("…")


def test_scrub_paths_and_secrets() -> None:
    text = "Reads /home/ana/.ssh/id_rsa and ~/notes, key sk-abcdefghijklmnop1234 or hunter2-secret"
    clean = scrub(text, ["hunter2-secret"])
    assert "/home" not in clean and "~/notes" not in clean
    assert "sk-abc" not in clean and "hunter2" not in clean
    assert "<path>" in clean and "<redacted>" in clean
    # relative workspace names and URLs stay readable
    assert (
        scrub("paths are relative to work/ or context/")
        == "paths are relative to work/ or context/"
    )
    assert scrub("see https://example.org/a/b") == "see https://example.org/a/b"


def test_tool_entries_have_no_parameters() -> None:
    schemas = load_schemas()
    manifest = bridge_manifest(schemas, [s.name for s in schemas])
    pairs = [(t["function"]["name"], t["function"]["description"]) for t in manifest]
    entries = tool_entries(pairs)
    assert [e["name"] for e in entries] == [s.name for s in schemas]
    for entry in entries:
        assert set(entry) == {"name", "description"}
        assert 0 < len(entry["description"]) <= MAX_TEXT
    assert "properties" not in repr(entries) and "/bin/sh" not in repr(entries)


def test_soul_entries_from_a_registry_or_the_fallback() -> None:
    assert soul_entries(None) == list(builtin_roles())
    assert [s.name for s in builtin_roles()] == ["planner", "specialist", "evaluator", "tool-agent"]
    planner, specialist, _, agent = builtin_roles()  # the soul files' own tools
    assert planner.tools == ("read_file", "list_dir", "search_files", "notebook_read")
    assert specialist.tools is not None and "python" in specialist.tools
    assert agent.tools is None  # "*"
    registry = {
        "a": SimpleNamespace(
            name="a", description="does a", role="planner", tools=["python"], prompt="SECRET"
        ),
        "b": {"name": "b", "description": "does b", "tools": "*"},
    }
    souls = soul_entries(registry)
    assert souls == [
        SoulEntry("a", "does a", "planner", ("python",)),
        SoulEntry("b", "does b", "", None),  # "*": every allowed tool
    ]
    skills = skill_entries(souls)
    assert skills == [
        {"name": "a", "description": "does a"},
        {"name": "b", "description": "does b"},
    ]
    assert "SECRET" not in repr(skills)
