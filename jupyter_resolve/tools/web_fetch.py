"""``web_fetch``: a trusted tool run by the gateway (not the kernel). HTTP(S) GET with size and
time limits, HTML reduced to readable text, every redirect re-checked; private, loopback and
link-local addresses refused unless ``c.Resolve.allow_private_fetch``. A host is resolved once
and the connection goes to an address that was checked (the name still goes in ``Host`` and,
for https, in SNI and the certificate check)."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from ..contracts.bodies import ToolResult

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


@dataclass
class Target:
    """A URL checked once: the addresses its host resolved to (every one checked), and what to
    send so that the request goes to those addresses while naming the host."""

    url: str  # as asked (redirects are joined to it)
    host: str  # for TLS: SNI and the certificate are checked against the name, not the address
    host_header: str  # host[:port] as in the URL
    addresses: list[str]

    def address_url(self, address: str) -> str:
        """``url`` with the host replaced by ``address``: httpx connects there, no new lookup."""
        parts = urlsplit(self.url)
        userinfo, at, _ = parts.netloc.rpartition("@")
        literal = f"[{address.replace('%', '%25')}]" if ":" in address else address
        port = f":{parts.port}" if parts.port is not None else ""
        return urlunsplit(parts._replace(netloc=f"{userinfo}{at}{literal}{port}"))


async def _resolve(host: str, port: int, timeout: float) -> list[str]:
    infos = await asyncio.wait_for(
        asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM), timeout
    )
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def _check_host(url: str, allow_private: bool, timeout: float) -> Target | str:
    """The URL's host resolved once with every address checked, or a refusal. The request then
    goes to these addresses: resolving again at connect time would let a DNS answer that
    changed in between (DNS rebinding) reach a private address."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"web_fetch: only http(s) URLs with a host can be fetched, not {url!r}"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return f"web_fetch: {url!r} has no valid port"
    host = parts.hostname
    try:
        addresses = await _resolve(host, port, timeout)
    except (OSError, UnicodeError, asyncio.TimeoutError) as exc:
        return f"web_fetch: cannot resolve {host}: {exc or 'timed out'}"
    if not addresses:
        return f"web_fetch: {host} resolves to no address"
    if not allow_private:
        for text in addresses:
            address = ipaddress.ip_address(text)
            if not address.is_global:
                return (
                    f"web_fetch: {host} resolves to {address}, a private, loopback or "
                    "link-local address; refused (c.Resolve.allow_private_fetch turns this off)"
                )
    host_header = parts.netloc.rpartition("@")[2]
    return Target(url=url, host=host, host_header=host_header, addresses=addresses)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


async def web_fetch(url: str, *, allow_private: bool, timeout: float = 20.0) -> ToolResult:
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False) as http:
        for _ in range(MAX_REDIRECTS + 1):
            target = await _check_host(url, allow_private, timeout)
            if isinstance(target, str):
                return ToolResult(ok=False, output=target)
            headers = {"Host": target.host_header}
            tls = {} if _is_address(target.host) else {"sni_hostname": target.host}
            extensions = tls if urlsplit(url).scheme == "https" else {}
            failure: Exception | None = None
            for address in target.addresses:
                try:
                    request = http.build_request(
                        "GET", target.address_url(address), headers=headers, extensions=extensions
                    )
                    response = await http.send(request, stream=True)
                except httpx.ConnectError as exc:
                    failure = exc  # try the next checked address
                    continue
                except httpx.HTTPError as exc:
                    return ToolResult(ok=False, output=f"web_fetch: {type(exc).__name__}: {exc}")
                break
            else:
                return ToolResult(
                    ok=False, output=f"web_fetch: {type(failure).__name__}: {failure}"
                )
            try:
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
            finally:
                await response.aclose()
    return ToolResult(ok=False, output=f"web_fetch: more than {MAX_REDIRECTS} redirects")
