"""The Agent Card (A2A v1.0 fields), built from souls and allowed tools (pure)."""

from __future__ import annotations

from jupyter_resolve.peer.card import build_card
from jupyter_resolve.peer.catalogue import SoulEntry

URL = "http://host:8888/base/resolve/peer/a2a"


def card() -> dict:  # type: ignore[type-arg]
    souls = [
        SoulEntry("planner", "Plans the work. " * 20, "planner", ("read_file", "shell")),
        SoulEntry("specialist", "Does the research.", "specialist"),
    ]
    return build_card(
        interface_url=URL, version="1.2.3", souls=souls, tools=["python", "read_file"]
    )


def test_card_has_the_v1_fields() -> None:
    c = card()
    for name in (
        "name",
        "description",
        "version",
        "capabilities",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
        "supportedInterfaces",
    ):
        assert name in c, name
    assert c["version"] == "1.2.3"
    assert c["defaultInputModes"] == ["text/plain"]
    interface = c["supportedInterfaces"][0]
    assert interface == {"url": URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    assert {i["protocolVersion"] for i in c["supportedInterfaces"]} == {"1.0", "0.3"}


def test_skills_come_from_souls_with_allowed_tools_as_tags() -> None:
    planner, specialist = card()["skills"]
    assert set(planner) == {"id", "name", "description", "tags"}
    assert planner["id"] == planner["name"] == "planner"
    assert len(planner["description"]) <= 120
    # a soul's own tools, only where allowed; a soul without a list gets every allowed tool
    assert planner["tags"] == ["soul", "planner", "read_file"]
    assert specialist["tags"] == ["soul", "specialist", "python", "read_file"]
