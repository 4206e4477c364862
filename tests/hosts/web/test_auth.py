"""The token, as pure functions; who a request signs in as; the token file made once, private."""

from __future__ import annotations

from pathlib import Path

import pytest

from hosts.web._auth import bearer_token, check_token, load_token
from hosts.web._signin import SHARED, SignIn, check_networks
from interactions import UsageError


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (None, None), ("", None), ("Bearer abc", "abc"), ("bearer abc", "abc"),
        ("Bearer ", None), ("Basic abc", None), ("abc", None),
    ],
)  # fmt: skip
def test_bearer_token(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


def test_check_token() -> None:
    assert check_token("t0k", "t0k")
    assert not check_token(None, "t0k") and not check_token("t0", "t0k")


@pytest.mark.parametrize(
    ("headers", "protocols", "peer", "who"),
    [
        ({}, [], "127.0.0.1", None),
        ({"authorization": "Bearer t0k"}, [], "127.0.0.1", "token"),
        ({}, ["pi-recipes.v1", "bearer.t0k"], "127.0.0.1", "token"),
        ({}, ["pi-recipes.v1", "bearer.nope"], "127.0.0.1", None),
        ({"x-forwarded-user": "ada"}, [], "10.1.2.3", "ada"),
        ({"x-auth-request-email": "ada@example.com"}, [], "10.1.2.3", "ada@example.com"),
        ({"x-forwarded-user": "ada"}, [], "127.0.0.1", None),  # not from the proxy: ignored
        ({"x-forwarded-user": "ada", "authorization": "Bearer t0k"}, [], "192.0.2.1", "token"),
        ({"x-forwarded-user": "<b>"}, [], "10.1.2.3", None),  # a name no one can have
        ({"authorization": "Bearer a.b.c"}, [], "127.0.0.1", None),  # no JWT issuer set
    ],
)  # fmt: skip
@pytest.mark.anyio
async def test_who_signs_in(
    headers: dict[str, str], protocols: list[str], peer: str, who: str | None
) -> None:
    sign_in = SignIn("t0k", proxies=check_networks(["10.0.0.0/8"]))
    found = await sign_in.identify(headers, peer, protocols)
    assert (found.name if found is not None else None) == who


@pytest.mark.anyio
async def test_a_proxy_says_the_groups() -> None:
    sign_in = SignIn("t0k", proxies=check_networks(["::ffff:10.0.0.0/104", "10.0.0.5"]))
    headers = {"x-forwarded-user": "ada", "x-forwarded-groups": "release, ops,"}
    found = await sign_in.identify(headers, "10.0.0.5")
    assert found is not None and found.groups == {"release", "ops"} and found.via == "proxy"
    mixed = {"x-forwarded-user": "ada", "x-auth-request-groups": "release"}  # two families
    found = await sign_in.identify(mixed, "10.0.0.5")
    assert found is not None and found.groups == frozenset()
    assert await sign_in.identify({"authorization": "Bearer t0k"}, None) == SHARED
    with pytest.raises(UsageError, match="--trust-proxy"):
        check_networks(["ten"])


def test_the_token_is_made_once_and_kept_private(tmp_path: Path) -> None:
    token, path, created = load_token(tmp_path / "store")
    assert created and path == tmp_path / "store" / "web-token" and len(token) >= 40
    assert path.stat().st_mode & 0o777 == 0o600
    again, _, created_again = load_token(tmp_path / "store")
    assert (again, created_again) == (token, False)


def test_a_token_file(tmp_path: Path) -> None:
    given = tmp_path / "token"
    given.write_text("my-token\n")
    assert load_token(tmp_path, given) == ("my-token", given, False)
    with pytest.raises(UsageError, match="cannot read"):
        load_token(tmp_path, tmp_path / "missing")
    given.write_text("two words")
    with pytest.raises(UsageError, match="one token"):
        load_token(tmp_path, given)
