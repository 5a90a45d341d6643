"""The Agent Card (A2A v1.0 fields): only the skills whose tools peers are granted, and the
security schemes (pure)."""

from __future__ import annotations

from typing import Any

from jupyter_resolve.peer.card import build_card
from jupyter_resolve.peer.catalogue import SoulEntry

URL = "http://host:8888/base/resolve/peer/a2a"
SOULS = [
    SoulEntry("planner", "Plans the work. " * 20, "planner", ("read_file", "shell")),
    SoulEntry("reader", "Reads.", "evaluator", ("read_file",)),
    SoulEntry("talker", "Talks.", "", ()),
    SoulEntry("anything", "Uses every allowed tool.", "tool-agent", None),
]
ALLOWED = ["python", "read_file"]


def card(granted: list[str]) -> dict[str, Any]:
    return build_card(
        interface_url=URL, version="1.2.3", souls=SOULS, allowed=ALLOWED, granted=granted
    )


def test_card_has_the_v1_fields() -> None:
    c = card([])
    for name in (
        "name",
        "description",
        "version",
        "capabilities",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
        "supportedInterfaces",
        "securitySchemes",
        "securityRequirements",
    ):
        assert name in c, name
    assert c["version"] == "1.2.3"
    assert c["defaultInputModes"] == ["text/plain"]
    interface = c["supportedInterfaces"][0]
    assert interface == {"url": URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    assert {i["protocolVersion"] for i in c["supportedInterfaces"]} == {"1.0", "0.3"}


def test_card_declares_the_signature_and_the_jupyter_token() -> None:
    c = card([])
    signature = c["securitySchemes"]["resolveSignature"]["apiKeySecurityScheme"]
    assert signature["location"] == "header" and signature["name"] == "X-Resolve-Signature"
    assert "v2=" in signature["description"]
    token = c["securitySchemes"]["jupyterToken"]["httpAuthSecurityScheme"]
    assert token["scheme"] == "Bearer"
    # either scheme will do
    assert [list(r["schemes"]) for r in c["securityRequirements"]] == [
        ["resolveSignature"],
        ["jupyterToken"],
    ]


def test_nothing_granted_offers_a_model_only_answer() -> None:
    skills = card([])["skills"]
    # the souls needing tools are not offered; a soul with none is
    assert [s["id"] for s in skills] == ["answer", "talker"]
    assert skills[0]["tags"] == ["answer"] and "no tools" in skills[0]["description"]


def test_skills_are_the_souls_whose_tools_are_all_granted() -> None:
    skills = {s["id"]: s for s in card(["read_file"])["skills"]}
    # planner also needs shell (not allowed here, so not needed); anything needs python
    assert set(skills) == {"answer", "planner", "reader", "talker"}
    assert skills["answer"]["tags"] == ["answer", "read_file"]
    planner = skills["planner"]
    assert set(planner) == {"id", "name", "description", "tags"}
    assert len(planner["description"]) <= 120
    assert planner["tags"] == ["soul", "planner", "read_file"]
    everything = {s["id"]: s for s in card(["python", "read_file", "shell"])["skills"]}
    assert everything["anything"]["tags"] == ["soul", "tool-agent", "python", "read_file"]


def test_card_has_the_v03_fields_beside_the_v1_ones() -> None:
    c = card([])
    assert c["url"] == URL and c["preferredTransport"] == "JSONRPC"
    assert c["protocolVersion"].startswith("0.3")
    assert c["capabilities"]["streaming"] is True
    signature = c["securitySchemes"]["resolveSignature"]
    assert (signature["type"], signature["in"], signature["name"]) == (
        "apiKey",
        "header",
        "X-Resolve-Signature",
    )
    token = c["securitySchemes"]["jupyterToken"]
    assert (token["type"], token["scheme"]) == ("http", "Bearer")
    assert c["security"] == [{"resolveSignature": []}, {"jupyterToken": []}]
