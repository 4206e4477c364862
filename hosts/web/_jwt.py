"""Bearer JWTs from an OIDC provider: ``serve --jwt-issuer URL --jwt-audience AUD``.

A token is checked with PyJWT against the provider's signing keys (its JWKS): the signature
(an asymmetric algorithm only), ``iss`` equal to the issuer, ``aud`` holding the audience,
``exp`` not past (30 seconds of leeway); ``exp``, ``iss`` and ``aud`` must be there. The
person is ``preferred_username``, else ``sub``; their groups are the ``--jwt-groups-claim``
claim (default ``groups``: a list of names, or one name).

The JWKS is ``--jwks-url``; without it, the ``jwks_uri`` of the issuer's discovery document
(``ISSUER/.well-known/openid-configuration``), read once at the first token. Keys are
cached (PyJWT's ``PyJWKClient``: the key set for :data:`KEYS_FOR` seconds, a token naming an
unknown ``kid`` refetches it at most every 30 seconds); every fetch is bounded by
:data:`FETCH_TIMEOUT`. The calls block: the web host makes them off its event loop.
"""

from __future__ import annotations

import json
import logging
import threading
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from interactions import UsageError
from interactions.people import Identity

__all__ = ["ALGORITHMS", "FETCH_TIMEOUT", "KEYS_FOR", "JwtCheck"]

logger = logging.getLogger("hosts.web")

ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"]
"""The signatures accepted (never ``none``, never a shared secret)."""
FETCH_TIMEOUT = 5.0
"""Seconds a fetch of the discovery document or the JWKS may take."""
KEYS_FOR = 300.0
"""Seconds the provider's key set is kept before it is read again."""
LEEWAY = 30
"""Seconds of clock difference allowed on ``exp``, ``nbf`` and ``iat``."""


@dataclass
class JwtCheck:
    """The check of an OIDC provider's bearer JWTs (see the module)."""

    issuer: str
    audience: str
    jwks_url: str | None = None
    groups_claim: str = "groups"
    _client: Any = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if not self.issuer.startswith(("https://", "http://")):
            raise UsageError(f"--jwt-issuer is the provider's URL, got {self.issuer!r}")
        if not self.audience:
            raise UsageError("--jwt-audience names this server as the tokens name it")
        try:
            import jwt  # noqa: F401
        except ImportError:
            raise UsageError("--jwt-issuer needs PyJWT: pip install 'pi-recipes[web]'") from None

    def identity(self, token: str) -> Identity | None:
        """Who ``token`` signs in, or ``None`` (malformed, badly signed, expired, for another
        issuer or audience, naming no one, or the provider's keys could not be read)."""
        import jwt

        try:
            key = self._keys().get_signing_key_from_jwt(token)
            claims = jwt.decode(
                token,
                key.key,
                algorithms=ALGORITHMS,
                audience=self.audience,
                issuer=self.issuer,
                leeway=LEEWAY,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWKClientConnectionError as exc:
            logger.warning("the OIDC provider's keys could not be read: %s", exc)
            return None
        except (jwt.PyJWTError, OSError, ValueError) as exc:
            logger.info("a bearer JWT was refused: %s", type(exc).__name__)
            return None
        return self.person(claims)

    def person(self, claims: Mapping[str, Any]) -> Identity | None:
        """The identity a checked token's ``claims`` name (``None``: no usable name)."""
        name = claims.get("preferred_username") or claims.get("sub")
        said = claims.get(self.groups_claim, [])
        listed = [said] if isinstance(said, str) else said if isinstance(said, list) else []
        groups = frozenset(g for g in listed if isinstance(g, str) and g)
        try:
            return Identity(name, groups, via="jwt") if isinstance(name, str) else None
        except UsageError:
            return None

    def _keys(self) -> Any:
        import jwt

        with self._lock:
            if self._client is None:
                url = self.jwks_url or self._discovered()
                self._client = jwt.PyJWKClient(
                    url, cache_keys=True, lifespan=KEYS_FOR, timeout=FETCH_TIMEOUT
                )
            return self._client

    def _discovered(self) -> str:
        """The ``jwks_uri`` of the issuer's discovery document (``OSError`` when it cannot be
        read, ``ValueError`` when it names none)."""
        where = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
        with urllib.request.urlopen(where, timeout=FETCH_TIMEOUT) as response:
            found = json.loads(response.read(1 << 20))
        url = found.get("jwks_uri") if isinstance(found, dict) else None
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise ValueError(f"{where} names no jwks_uri")
        return url
