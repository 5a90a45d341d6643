"""``web_fetch``: a trusted tool run by the gateway (not the kernel). HTTP(S) GET with size and
time limits, HTML reduced to readable text, every redirect re-checked; private, loopback and
link-local addresses refused unless ``c.Resolve.allow_private_fetch``."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx

from ..models import ToolResult

MAX_BYTES = 2_000_000
MAX_REDIRECTS = 5
SKIP_TAGS = {"script", "style", "noscript", "template", "svg", "head"}
BLOCK_TAGS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "section"}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIP_TAGS:
            self._skip += 1
        elif tag in BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIP_TAGS and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)


async def _check_host(url: str, allow_private: bool) -> str | None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"web_fetch: only http(s) URLs with a host can be fetched, not {url!r}"
    if allow_private:
        return None
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            parts.hostname, parts.port or 443, type=socket.SOCK_STREAM
        )
    except OSError as exc:
        return f"web_fetch: cannot resolve {parts.hostname}: {exc}"
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if not address.is_global:
            return (
                f"web_fetch: {parts.hostname} resolves to {address}, a private, loopback or "
                "link-local address; refused (c.Resolve.allow_private_fetch turns this off)"
            )
    return None


async def web_fetch(url: str, *, allow_private: bool, timeout: float = 20.0) -> ToolResult:
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False) as http:
        for _ in range(MAX_REDIRECTS + 1):
            refusal = await _check_host(url, allow_private)
            if refusal:
                return ToolResult(ok=False, output=refusal)
            try:
                async with http.stream("GET", url) as response:
                    if response.is_redirect and "location" in response.headers:
                        url = urljoin(url, response.headers["location"])
                        continue
                    body = bytearray()
                    async for block in response.aiter_bytes():
                        body.extend(block)
                        if len(body) > MAX_BYTES:
                            break
                    kind = response.headers.get("content-type", "")
                    text = bytes(body[:MAX_BYTES]).decode(response.encoding or "utf-8", "replace")
                    if "html" in kind:
                        text = html_to_text(text)
                    head = f"{response.status_code} {url} ({kind or 'no content type'})"
                    cut = " [cut at 2 MB]" if len(body) > MAX_BYTES else ""
                    return ToolResult(ok=response.status_code < 400, output=f"{head}{cut}\n{text}")
            except httpx.HTTPError as exc:
                return ToolResult(ok=False, output=f"web_fetch: {type(exc).__name__}: {exc}")
    return ToolResult(ok=False, output=f"web_fetch: more than {MAX_REDIRECTS} redirects")
