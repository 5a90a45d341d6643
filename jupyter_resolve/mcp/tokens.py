"""MCP-scoped tokens (issue 31.6): a credential for MCP clients narrower than the Jupyter token.

A token is accepted only on ``<base_url>resolve/mcp``. Its holder may speak MCP, ``ask`` and
propose cells, and read notebooks; it may not write files, run code in a user's kernel, or
decide a proposal: proposals made with it wait for a person in JupyterLab (:data:`GRANTS`;
``mcp/handlers.py`` applies them). The store, ``.resolve/mcp-tokens.json`` (mode 0600), keeps each
token's id, name, creation time and SHA-256 digest, never the token: a token is shown once, when
it is made, and revoked by id.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..contracts.errors import Conflict, NotFound

FILE = "mcp-tokens.json"
PREFIX = "resolve-mcp-"
# every MCP request reads the file: a person revokes one before making more
MAX_TOKENS = 64
"""Every token starts so (a log or a leak scanner can tell what it is)."""
USER_PREFIX = "jupyter-resolve-mcp:"
"""The user name of a request made with a token: this and the token's name."""

GRANTS = frozenset({("read", "resolve"), ("execute", "resolve"), ("read", "contents")})
"""What a token may do (DESIGN 9.4's resources): no ``resolve`` write, no ``contents`` write, no
``kernels`` execute."""


class TokenInfo(BaseModel):
    """A token as listed: never the token itself."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str = Field(max_length=128)
    created: float
    sha256: str = Field(exclude=True)


class CreateToken(BaseModel):
    """``POST /resolve/api/mcp-tokens`` ``{name?}``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="mcp client", min_length=1, max_length=128)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenStore:
    """The tokens of one server (its state dir)."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / FILE

    def _read(self) -> list[TokenInfo]:
        try:
            raw = json.loads(self.path.read_text())
        except FileNotFoundError:
            return []
        except (OSError, ValueError):
            return []  # unreadable: no token is accepted rather than a wrong one
        entries = raw.get("tokens") if isinstance(raw, dict) else None
        found = []
        for entry in entries if isinstance(entries, list) else []:
            with contextlib.suppress(ValueError):
                found.append(TokenInfo.model_validate(entry))
        return found

    def _write(self, tokens: list[TokenInfo]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = {"tokens": [t.model_dump() | {"sha256": t.sha256} for t in tokens]}
        fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".mcp-tokens-")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w") as handle:
                json.dump(body, handle, indent=1)
            os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise

    def create(self, name: str) -> tuple[TokenInfo, str]:
        """A new token: its listing and the token (shown this once)."""
        held = self._read()
        if len(held) >= MAX_TOKENS:
            raise Conflict(
                f"there are already {MAX_TOKENS} MCP tokens: revoke one first",
                code="too_many_tokens",
            )
        token = PREFIX + secrets.token_urlsafe(32)
        info = TokenInfo(
            id=f"mcp-{secrets.token_hex(6)}", name=name, created=time.time(), sha256=digest(token)
        )
        self._write([*held, info])
        return info, token

    def tokens(self) -> list[TokenInfo]:
        return self._read()

    def revoke(self, token_id: str) -> None:
        tokens = self._read()
        kept = [t for t in tokens if t.id != token_id]
        if len(kept) == len(tokens):
            raise NotFound(f"no MCP token '{token_id[:64]}'", code="no_token")
        self._write(kept)

    def find(self, token: str) -> TokenInfo | None:
        """The token's listing when ``token`` is one of the store's, else None."""
        if not token.startswith(PREFIX):
            return None
        presented = digest(token)
        found = None
        for info in self._read():  # every entry compared, in constant time each
            if hmac.compare_digest(presented, info.sha256):
                found = info
        return found


def listing(info: TokenInfo) -> dict[str, Any]:
    return info.model_dump()
