"""Issue 31.4: an MCP server's secret is withheld from its results also when it comes
base64-encoded, inside an SVG (which MCP sends base64-encoded: the clients get its markup, with
the secret withheld, and show it as an ``<img>``), and a binary image that carries it is not
shown. A real stdio server (``leaky_server.py``) whose results carry its own env secret."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.contracts.mcp_servers import WITHHELD
from jupyter_resolve.contracts.redaction import base64_forms
from jupyter_resolve.mcp.results import map_result
from tests.conftest import Server
from tests.scripting import call, script

from .test_mcp_client import approving

SECRET = "leaky-secret-value-5b2e91c4"
LEAKY = Path(__file__).with_name("leaky_server.py")


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    server = {"command": [sys.executable, str(LEAKY)], "env": {"LEAKY_SECRET": SECRET}}
    return {"mcp_servers": {"leaky": server}, "mcp_start_timeout": 20.0}


def leaks(text: str) -> bool:
    forms = base64_forms(SECRET.encode())
    return SECRET in text or any(form in text for form in forms)


async def completed(server: Server, gateway: Any, tmp_path: Path, tool: str) -> dict[str, Any]:
    script(gateway, tmp_path, call(f"mcp.leaky.{tool}"), {"content": "done"})
    async with approving(server, gateway):
        stream = await server.chat("use the MCP tool", session_id="s-leaky")
    done: dict[str, Any] = stream.of("tool.completed")[0]
    assert done["ok"] is True, done
    return done


async def test_secrets_in_svgs_base64_text_and_images_are_withheld(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    svg = await completed(server, gateway, tmp_path, "svg")
    markup = svg["mime"]["image/svg+xml"]
    assert markup.startswith("<svg") and WITHHELD in markup and not leaks(markup)
    assert "[shown to the person: image/svg+xml]" in svg["output"]

    encoded = await completed(server, gateway, tmp_path, "encoded")
    assert encoded["output"].count(WITHHELD) == 2 and not leaks(encoded["output"])

    png = await completed(server, gateway, tmp_path, "png")
    assert not png.get("mime") and "withheld: it contains an MCP server secret" in png["output"]

    logs = "".join(p.read_text() for p in (jp_root_dir / ".resolve" / "runs").glob("*.jsonl"))
    assert logs and not leaks(logs)
    for data in (markup, encoded["output"]):
        assert not leaks(data)


async def test_an_svg_reaches_the_clients_as_its_markup(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    clean = await completed(server, gateway, tmp_path, "clean_svg")
    assert clean["mime"]["image/svg+xml"].startswith("<svg")
    assert ">hello</text></svg>" in clean["mime"]["image/svg+xml"]


def test_every_alignment_of_an_encoded_secret_is_found() -> None:
    for lead in ("", "a", "ab", "abc"):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(f"{lead}{SECRET}~~tail?".encode()).decode()
            mapped = map_result({"content": [{"type": "text", "text": text}]}, [SECRET])
            assert WITHHELD in mapped.output and not leaks(mapped.output), (lead, text)
    svg = {"type": "image", "mimeType": "image/svg+xml", "data": "not base64!"}
    refused = map_result({"content": [svg]}, [SECRET])
    assert refused.mime is None and "not shown" in refused.output
