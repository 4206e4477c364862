"""The token, as pure functions; the token file made once, private."""

from __future__ import annotations

from pathlib import Path

import pytest

from hosts.web._auth import bearer_token, check_token, load_token, websocket_refusal
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


def test_websocket_refusals() -> None:
    def refused(headers: dict[str, str], protocols: list[str] = []) -> int | None:  # noqa: B006
        found = websocket_refusal(headers, protocols, token="t0k")
        return None if found is None else found.status

    own = {"host": "h:1", "origin": "http://h:1"}
    assert refused(own) == 401
    assert refused(own | {"authorization": "Bearer t0k"}) is None
    assert refused(own, ["pi-recipes.v1", "bearer.t0k"]) is None
    assert refused(own, ["pi-recipes.v1", "bearer.nope"]) == 401


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
