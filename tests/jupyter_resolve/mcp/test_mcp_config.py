"""The pure parts of the MCP client: configuration, names, effects, result mapping, redaction,
and the fifth list of the drift check."""

from __future__ import annotations

import pytest

from jupyter_resolve.contracts.drift import mcp_drift
from jupyter_resolve.contracts.mcp_servers import (
    WITHHELD,
    HttpServer,
    StdioServer,
    effect_of,
    parse_servers,
    redact,
    split_name,
    tool_name,
)
from jupyter_resolve.mcp.catalog import tool_schema
from jupyter_resolve.mcp.results import map_result
from jupyter_resolve.providers.wire_names import request_to_wire, wire_name


def test_servers_parse_and_problems_name_the_field_not_the_value() -> None:
    servers = parse_servers(
        {
            "fs": {"command": ["npx", "-y", "server-fs", "/data"], "env": {"TOKEN": "s3cret"}},
            "web": {"url": "https://mcp.example.org/mcp", "headers_env": {"Authorization": "K"}},
        }
    )
    assert isinstance(servers["fs"], StdioServer) and servers["fs"].env == {"TOKEN": "s3cret"}
    assert isinstance(servers["web"], HttpServer)
    assert servers["fs"].describe() == {"transport": "stdio", "command": "npx"}
    for bad, words in [
        ({"a.b": {"command": ["x"]}}, "not a server name"),
        ({"x": {}}, "either 'command'"),
        ({"x": {"command": ["x"], "url": "http://h"}}, "either 'command'"),
        ({"x": {"command": []}}, "mcp_servers['x'].command"),
        ({"x": {"command": ["x"], "env": {"1BAD": "s3cret-value"}}}, "environment variable"),
        ({"x": {"url": "ftp://h"}}, "http:// or https://"),
        ({"x": {"url": "https://u:s3cret-value@h/mcp"}}, "headers_env"),
        ({"x": {"url": "https://h", "headers_env": {"Bad Header": "K"}}}, "header name"),
        ({"x": {"command": ["x"], "extra": 1}}, "mcp_servers['x'].extra"),
    ]:
        with pytest.raises(ValueError) as info:
            parse_servers(bad)
        assert words in str(info.value) and "s3cret-value" not in str(info.value)


def test_config_trait_refuses_a_bad_server() -> None:
    from jupyter_resolve.config import Resolve

    with pytest.raises(ValueError, match="needs either"):
        Resolve(mcp_servers={"x": {"command": ["a"], "url": "http://h"}})


def test_names_effects_and_wire_names() -> None:
    assert tool_name("time", "get_current_time") == "mcp.time.get_current_time"
    assert split_name("mcp.time.get.current") == ("time", "get.current")
    assert split_name("python") is None and split_name("mcp.time") is None
    assert wire_name("mcp.time.get_current_time") == "mcp__time__get_current_time"
    body, back = request_to_wire(
        {"tools": [{"type": "function", "function": {"name": "mcp.every.get-sum"}}]}
    )
    assert body["tools"][0]["function"]["name"] == "mcp__every__get-sum"
    assert back == {"mcp__every__get-sum": "mcp.every.get-sum"}
    assert effect_of({"readOnlyHint": True, "destructiveHint": True}) == "read"
    assert effect_of({"destructiveHint": True}) == "write"
    assert effect_of({"readOnlyHint": False}) == effect_of(None) == "exec"
    schema = tool_schema("fs", {"name": "rm", "inputSchema": {"type": "object"}})
    assert (schema.name, schema.effect, schema.approval) == ("mcp.fs.rm", "exec", "ask")
    assert schema.description.startswith("[MCP server 'fs'] rm")


def test_results_map_to_text_mime_and_links() -> None:
    result = map_result(
        {
            "content": [
                {"type": "text", "text": "here"},
                {"type": "image", "data": "iVBORw0=", "mimeType": "image/png"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {
                    "type": "resource_link",
                    "uri": "file:///a.csv",
                    "name": "a",
                    "mimeType": "text/csv",
                },
                {"type": "resource", "resource": {"uri": "mem://t", "text": "inline text"}},
                {"type": "resource", "resource": {"uri": "mem://b", "blob": "AAAA"}},
            ]
        }
    )
    assert result.ok is True and result.mime is not None
    assert result.mime["image/png"] == "iVBORw0=" and "audio/wav" not in result.mime
    assert result.mime["text/plain"] == result.output
    for piece in [
        "here",
        "[audio audio/wav, 3 bytes, not shown]",
        "[resource file:///a.csv (a, text/csv)]",
        "[resource mem://t]\ninline text",
        "[resource mem://b] (binary, not shown)",
        "[shown to the person: image/png]",
    ]:
        assert piece in result.output
    failed = map_result({"content": [{"type": "text", "text": "bad"}], "isError": True})
    assert failed.ok is False and failed.mime is None
    structured = map_result({"content": [], "structuredContent": {"t": 1}})
    assert '"t": 1' in structured.output


def test_secrets_are_withheld() -> None:
    assert (
        redact("key=abcdef; again abcdef", ["abcdef", "1"]) == f"key={WITHHELD}; again {WITHHELD}"
    )
    mapped = map_result({"content": [{"type": "text", "text": "TOKEN=abcdef"}]}, ["abcdef"])
    assert mapped.output == f"TOKEN={WITHHELD}"


def test_the_fifth_list() -> None:
    offered = ["mcp.time.get_current_time"]
    assert mcp_drift(["python", *offered], {"s": offered}, offered) == []
    assert mcp_drift(["mcp.time.nope"], {}, offered) == [
        "'mcp.time.nope' is allowed but no configured MCP server offers it"
    ]
    assert mcp_drift([], {"s": ["mcp.gone.x"]}, offered) == [
        "soul 's' names 'mcp.gone.x', which no configured MCP server offers"
    ]
    assert mcp_drift([], {"s": offered}, offered) == [
        "soul 's' names 'mcp.time.get_current_time', which is not an allowed tool"
    ]
    # a server that has not started yet: its tools are unknown, which is not drift
    assert mcp_drift(["mcp.slow.x"], {"s": ["mcp.slow.y"]}, offered, ["slow"]) == []
