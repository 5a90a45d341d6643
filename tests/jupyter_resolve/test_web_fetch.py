"""``web_fetch`` resolves a host once and connects to an address it checked (issue 14 item 13).

The servers are real loopback servers. Where a test needs DNS to answer differently the second
time (DNS rebinding) it replaces the system resolver (``socket.getaddrinfo``), and where it needs
a public address to be reachable without a network it routes that one address to loopback in
httpcore's connect: both stand in for the world outside, not for any part of ours.
"""

from __future__ import annotations

import asyncio
import datetime
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpcore
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from jupyter_resolve.tools.web_fetch import web_fetch
from tests.fakes._server import FakeServer, Part, Reply

PUBLIC = "93.184.215.14"  # a global address, routed to a loopback server by `route`
NAME = "rebind.test"
PAGE = Reply(200, [("Content-Type", "text/plain")], [Part(b"the page")], "length")


def answer(address: str, port: int) -> list[Any]:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))]


@dataclass
class Resolver:
    """The system resolver as a test scripts it: ``answers[name]`` is one list of addresses per
    lookup of ``name`` (the last one repeats); other names resolve for real."""

    answers: dict[str, list[list[str]]] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> Resolver:
    resolver = Resolver()
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kw: Any) -> list[Any]:
        name = host.decode() if isinstance(host, bytes) else str(host)
        resolver.asked.append(name)
        queue = resolver.answers.get(name)
        if queue is None:
            return real(host, port, *args, **kw)
        addresses = queue.pop(0) if len(queue) > 1 else queue[0]
        return [a for address in addresses for a in answer(address, int(port or 0))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return resolver


@pytest.fixture
def route(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Connections to ``PUBLIC`` reach 127.0.0.1; returns the hosts httpcore connected to."""
    hosts: list[str] = []
    real = httpcore.AnyIOBackend.connect_tcp

    async def connect_tcp(self: Any, host: str, port: int, *args: Any, **kw: Any) -> Any:
        hosts.append(host)
        return await real(self, "127.0.0.1" if host == PUBLIC else host, port, *args, **kw)

    monkeypatch.setattr(httpcore.AnyIOBackend, "connect_tcp", connect_tcp)
    return hosts


async def test_a_name_of_loopback_is_refused_unless_private_fetch_is_allowed() -> None:
    async with FakeServer([PAGE]) as site:
        url = f"http://localhost:{site.port}/page"
        refused = await web_fetch(url, allow_private=False)
        assert refused.ok is False
        assert "loopback" in refused.output and "allow_private_fetch" in refused.output
        assert site.requests == []
        fetched = await web_fetch(url, allow_private=True)
        assert fetched.ok is True, fetched.output
        assert "the page" in fetched.output and url in fetched.output
        assert [r.headers["host"] for r in site.requests] == [f"localhost:{site.port}"]


async def test_the_connection_goes_to_the_checked_address_not_a_second_answer(
    dns: Resolver, route: list[str]
) -> None:
    """DNS rebinding: the check sees a public address, a lookup at connect time would get a
    private one. Nothing but the checked address is ever connected to."""
    async with FakeServer([PAGE]) as site:
        private = FakeServer([PAGE], host="127.0.0.2", port=site.port)
        await private.start()
        try:
            dns.answers[NAME] = [[PUBLIC], ["127.0.0.2"]]
            result = await web_fetch(f"http://{NAME}:{site.port}/x", allow_private=False)
            assert result.ok is True, result.output
            assert private.requests == []
            assert route == [PUBLIC]
            assert [r.headers["host"] for r in site.requests] == [f"{NAME}:{site.port}"]
            assert dns.asked.count(NAME) == 1
        finally:
            await private.stop()


async def test_with_private_fetch_allowed_it_still_connects_to_the_first_answer(
    dns: Resolver,
) -> None:
    async with FakeServer([PAGE]) as site:
        private = FakeServer([PAGE], host="127.0.0.2", port=site.port)
        await private.start()
        try:
            dns.answers[NAME] = [["127.0.0.1"], ["127.0.0.2"]]
            for _ in range(2):  # every fetch resolves once, and uses that answer
                result = await web_fetch(f"http://{NAME}:{site.port}/", allow_private=True)
                assert result.ok is True, result.output
            assert len(site.requests) == 1 and len(private.requests) == 1
            assert dns.asked.count(NAME) == 2
        finally:
            await private.stop()


async def test_every_address_of_a_name_is_checked(dns: Resolver, route: list[str]) -> None:
    async with FakeServer([PAGE]) as site:
        dns.answers[NAME] = [[PUBLIC, "127.0.0.1"]]
        refused = await web_fetch(f"http://{NAME}:{site.port}/", allow_private=False)
        assert refused.ok is False and "127.0.0.1" in refused.output
        assert route == [] and site.requests == []


async def test_a_redirect_to_a_private_address_is_checked_again(
    dns: Resolver, route: list[str]
) -> None:
    async with FakeServer([Reply(302, [("Location", "http://localhost/")], [], "length")]) as hop:
        dns.answers[NAME] = [[PUBLIC]]
        result = await web_fetch(f"http://{NAME}:{hop.port}/", allow_private=False)
        assert result.ok is False and "localhost resolves to" in result.output
        assert len(hop.requests) == 1 and route == [PUBLIC]


@pytest.fixture
def certificate(tmp_path: Path) -> Iterator[ssl.SSLContext]:
    """A server TLS context with a self-signed certificate for ``NAME``."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, NAME)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(NAME)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    yield context


async def test_https_sends_the_name_in_sni_and_checks_the_certificate(
    dns: Resolver, certificate: ssl.SSLContext
) -> None:
    names: list[str | None] = []
    certificate.sni_callback = lambda _sock, name, _ctx: names.append(name)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=certificate)
    port = server.sockets[0].getsockname()[1]
    try:
        dns.answers[NAME] = [["127.0.0.1"]]
        result = await web_fetch(f"https://{NAME}:{port}/", allow_private=True)
    finally:
        server.close()
        await server.wait_closed()
    assert names == [NAME]  # the name, though the connection went to 127.0.0.1
    assert result.ok is False and "CERTIFICATE_VERIFY_FAILED" in result.output  # self-signed
