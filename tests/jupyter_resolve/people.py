"""Several people on one real server (tests/launcher.py), for tests of who may do what: an
IdentityProvider that knows each person by a token of their own, and an Authorizer that grants
each what the server's config says. The server imports these by name (``python -m
jupyter_server`` runs from the repository root), so they are configured as a dict:

    config = people_config({"alice": ("tok-a", ["*"]), "bob": ("tok-b", ["resolve"])})

A grant is a resource (every action on it), ``action:resource``, or ``*``. The server's own
token (the launcher's) stays everything, as an anonymous user.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.authorizer import Authorizer
from jupyter_server.auth.identity import IdentityProvider, User
from traitlets import Dict


class People(IdentityProvider):
    """A request whose ``Authorization: token <t>`` is one of :attr:`tokens` is that person."""

    tokens = Dict(config=True, help="token → user name")

    async def get_user_token(self, handler: Any) -> User | None:
        scheme, _, token = handler.request.headers.get("Authorization", "").partition(" ")
        name = self.tokens.get(token.strip()) if scheme.lower() in ("token", "bearer") else None
        if name is not None:
            return User(username=name, name=name)
        user: User | None = await super().get_user_token(handler)
        return user


class Grants(Authorizer):
    """Each named person's grants; anyone else (the server's own token) may do everything."""

    grants = Dict(config=True, help="user name → list of 'resource', 'action:resource' or '*'")

    def is_authorized(self, handler: Any, user: User, action: str, resource: str) -> bool:
        granted = self.grants.get(user.username)
        if granted is None:
            return True
        return bool({"*", resource, f"{action}:{resource}"} & set(granted))


def people_config(people: dict[str, tuple[str, list[str]]]) -> dict[str, Any]:
    """The server config for ``{name: (token, grants)}``."""
    return {
        "ServerApp": {
            "identity_provider_class": f"{__name__}.People",
            "authorizer_class": f"{__name__}.Grants",
        },
        "People": {"tokens": {token: name for name, (token, _) in people.items()}},
        "Grants": {"grants": {name: grants for name, (_, grants) in people.items()}},
    }


def with_people(
    jp_server_config: dict[str, Any], tokens: dict[str, str], grants: dict[str, list[str]]
) -> dict[str, Any]:
    """pytest-jupyter's in-process server config with these people: ``tokens`` (token → name)
    and ``grants`` (name → grants, as :class:`Grants` reads them)."""
    server_app = {
        **jp_server_config["ServerApp"],
        "identity_provider_class": People,
        "authorizer_class": Grants,
    }
    return {
        **jp_server_config,
        "ServerApp": server_app,
        "People": {"tokens": tokens},
        "Grants": {"grants": grants},
    }
