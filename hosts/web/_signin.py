"""Who a request is: the identity every answer on the web host records.

Four ways, tried in this order (:meth:`SignIn.identify`):

- **a trusted proxy** (``--trust-proxy CIDR``): from a peer address in those networks only,
  the headers oauth2-proxy sets name the person (``X-Forwarded-User``, else
  ``X-Forwarded-Email``; groups comma-separated in ``X-Forwarded-Groups``; or the
  ``X-Auth-Request-User`` / ``-Email`` / ``-Groups`` family, never the two mixed). From any
  other address they are ignored: the request then needs a token like any other. The proxy
  must set these headers itself, replacing any a client sent (oauth2-proxy does). A person
  the users file knows by that name also counts in the file's groups. ``via``: ``proxy``.
- **a person's token** (``--users FILE``): ``Authorization: Bearer pr_<name>_<secret>``
  (:meth:`hosts._kit.Users.by_token`). ``via``: ``users-file``.
- **the server's shared token**: the identity ``token`` (one-person setups). ``via``:
  ``token``.
- **a bearer JWT from an OIDC provider** (``--jwt-issuer``, ``--jwt-audience``): checked by
  :class:`hosts.web._jwt.JwtCheck` (signature against the provider's JWKS, issuer,
  audience, expiry). ``via``: ``jwt``.

A WebSocket handshake may offer its token as the subprotocol ``bearer.<token>`` (a browser
cannot set headers). No way matching: ``None`` (the caller answers 401).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import anyio.to_thread

from hosts._kit import Users, bearer_token, check_token
from hosts._kit._users import TOKEN_PREFIX
from hosts.web._jwt import JwtCheck
from interactions import UsageError
from interactions.people import Identity

__all__ = [
    "PROXY_HEADERS",
    "SHARED",
    "Network",
    "SignIn",
    "check_networks",
]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

PROXY_HEADERS = (
    ("x-forwarded-user", "x-forwarded-email", "x-forwarded-groups"),
    ("x-auth-request-user", "x-auth-request-email", "x-auth-request-groups"),
)
"""The headers a trusted proxy names the person in, as oauth2-proxy spells them: two families
(user, email, groups comma-separated), the first family that names someone read alone, so a
group header of the other family is never mixed in."""

SHARED = Identity("token", via="token")
"""Who the shared token signs in: one-person setups."""

_BEARER_PROTOCOL = "bearer."


def check_networks(cidrs: Iterable[str]) -> tuple[Network, ...]:
    """``--trust-proxy`` values as networks; ``UsageError`` naming the first that is none."""
    found = []
    for cidr in cidrs:
        try:
            found.append(ipaddress.ip_network(cidr.strip(), strict=False))
        except ValueError:
            raise UsageError(
                f"--trust-proxy takes an address or a network (10.0.0.5, 10.0.0.0/8), got {cidr!r}"
            ) from None
    return tuple(found)


def _in(networks: Sequence[Network], peer: str | None) -> bool:
    if not networks or not peer:
        return False
    try:
        address = ipaddress.ip_address(peer.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in networks)


@dataclass(frozen=True)
class SignIn:
    """How this server establishes who a request is: its shared ``token``, the ``users``
    file, the ``proxies`` whose sign-in headers it trusts, the ``jwt`` check."""

    token: str
    users: Users | None = None
    proxies: tuple[Network, ...] = ()
    jwt: JwtCheck | None = None

    async def identify(
        self,
        headers: Mapping[str, str],
        peer: str | None,
        subprotocols: Iterable[str] = (),
    ) -> Identity | None:
        """Who sent a request with ``headers`` (lower-case names) from the address ``peer``
        (a WebSocket handshake's ``subprotocols`` may carry the token), or ``None``."""
        if _in(self.proxies, peer):
            proxied = self.by_proxy(headers)
            if proxied is not None:
                return proxied
        given = bearer_token(headers.get("authorization"))
        if given is None:
            offered = [p for p in subprotocols if p.startswith(_BEARER_PROTOCOL)]
            given = offered[0][len(_BEARER_PROTOCOL) :] if offered else None
        if given is None:
            return None
        if given.startswith(TOKEN_PREFIX) and self.users is not None:
            users = self.users  # argon2 takes a moment: never on the event loop
            person = await anyio.to_thread.run_sync(users.by_token, given)
            if person is not None:
                return person
        if check_token(given, self.token):
            return SHARED
        if self.jwt is not None and given.count(".") == 2:
            return await anyio.to_thread.run_sync(self.jwt.identity, given)
        return None

    def by_proxy(self, headers: Mapping[str, str]) -> Identity | None:
        """The person a trusted proxy's headers name (``None``: they name no one, or a name
        no identity can have)."""
        for user, email, listed in PROXY_HEADERS:
            name = headers.get(user, "").strip() or headers.get(email, "").strip()
            if name:
                said = headers.get(listed, "")
                break
        else:
            return None
        groups = {g.strip() for g in said.split(",") if g.strip()}
        known = self.users.users.get(name) if self.users is not None else None
        if known is not None:
            groups |= known.groups
        try:
            return Identity(name, frozenset(groups), via="proxy")
        except UsageError:
            return None
