"""Who answers on the web host, against a running ``pi-recipes serve``: a person's token from the
users file, a trusted proxy's headers (ignored from any other address), an OIDC provider's
bearer JWT (checked against a JWKS this test serves), the shared token as ``token``; answers
recorded with who signed in, never a body's ``answered_by``; a person the approvers do not
name refused on REST, the WebSocket and AG-UI resume, nothing stored; ``/api/me`` and
``/api/me/inbox``."""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx
import jwt
import pytest
from ag_ui.core import ResumeEntry, RunAgentInput, UserMessage
from cryptography.hazmat.primitives.asymmetric import rsa
from websockets.asyncio.client import connect

from hosts._kit import add_user, load_users
from hosts.web import build_parser
from tests.hosts.cli_helpers import ROOT, pi
from tests.hosts.web.server import Server, serving, wait_for_status

RECIPE = str(Path(__file__).with_name("web_people_recipe.py"))
AUDIENCE = "pi-recipes-web"


@dataclass
class Provider:
    """An OIDC provider this test runs: its discovery document, its JWKS, its key."""

    issuer: str
    key: rsa.RSAPrivateKey

    def token(self, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": self.issuer, "aud": AUDIENCE, "exp": now + 300, "iat": now} | claims
        return jwt.encode(body, self.key, algorithm="RS256", headers={"kid": "k1"})


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    keys = {"keys": [public | {"kid": "k1", "use": "sig", "alg": "RS256"}]}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            issuer = f"http://127.0.0.1:{self.server.server_address[1]}"
            found = {
                "/.well-known/openid-configuration": {
                    "issuer": issuer, "jwks_uri": f"{issuer}/keys",
                },
                "/keys": keys,
            }.get(self.path)  # fmt: skip
            body = json.dumps(found).encode()
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield Provider(f"http://127.0.0.1:{http.server_address[1]}", key)
    finally:
        http.shutdown()
        http.server_close()
        thread.join(5)


@dataclass
class People:
    server: Server
    tokens: dict[str, str]

    def headers(self, who: str) -> dict[str, str]:
        token = self.server.token if who == "token" else self.tokens[who]
        return {"Authorization": f"Bearer {token}"}

    def client(self, who: str) -> httpx.Client:
        return httpx.Client(base_url=self.server.url, headers=self.headers(who), timeout=20)


@pytest.fixture(scope="module")
def people(tmp_path_factory: pytest.TempPathFactory, provider: Provider) -> Iterator[People]:
    cwd = tmp_path_factory.mktemp("people")
    users = cwd / "users.toml"
    tokens = {name: add_user(users, name, groups=groups) for name, groups in
              [("ada", []), ("bob", ["release"]), ("eve", [])]}  # fmt: skip
    args = ("--users", str(users), "--trust-proxy", "127.0.0.1/32",
            "--jwt-issuer", provider.issuer, "--jwt-audience", AUDIENCE)  # fmt: skip
    with serving(cwd, recipe=RECIPE, args=args) as server:
        yield People(server, tokens)


def me(people: People, headers: dict[str, str]) -> httpx.Response:
    with httpx.Client(base_url=people.server.url, timeout=20) as http:
        return http.get("/api/me", headers=headers)


def test_each_way_signs_in(people: People, provider: Provider) -> None:
    ada = me(people, people.headers("ada")).json()
    assert ada == {"name": "ada", "groups": [], "via": "users-file"}
    bob = me(people, people.headers("bob")).json()
    assert bob == {"name": "bob", "groups": ["release"], "via": "users-file"}
    shared = me(people, people.headers("token")).json()
    assert shared == {"name": "token", "groups": [], "via": "token"}
    proxied = {"X-Forwarded-User": "carol", "X-Forwarded-Groups": "release,ops",
               "X-Forwarded-Email": "c@example.com", "X-Forwarded-For": "192.0.2.9"}  # fmt: skip
    assert me(people, proxied).json() == {"name": "carol", "groups": ["ops", "release"],
                                          "via": "proxy"}  # fmt: skip
    bob_proxied = me(people, {"X-Auth-Request-User": "bob"}).json()  # the file's groups count
    assert bob_proxied == {"name": "bob", "groups": ["release"], "via": "proxy"}
    token = provider.token(sub="u-123", preferred_username="dana", groups=["release"])
    dana = me(people, {"Authorization": f"Bearer {token}"}).json()
    assert dana == {"name": "dana", "groups": ["release"], "via": "jwt"}
    by_sub = me(people, {"Authorization": f"Bearer {provider.token(sub='u-123')}"}).json()
    assert by_sub == {"name": "u-123", "groups": [], "via": "jwt"}


@pytest.mark.parametrize(
    "bad",
    ["none", "wrong person token", "expired", "other audience", "other issuer", "other key"],
)
def test_no_one_signs_in(people: People, provider: Provider, bad: str) -> None:
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    other = Provider(provider.issuer, stranger)
    token = {
        "wrong person token": people.tokens["ada"][:-4] + "xxxx",
        "expired": provider.token(sub="dana", exp=int(time.time()) - 120),
        "other audience": provider.token(sub="dana", aud="someone-else"),
        "other issuer": provider.token(sub="dana", iss="https://evil.example"),
        "other key": other.token(sub="dana"),
    }.get(bad)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    reply = me(people, headers)
    assert reply.status_code == 401 and reply.json()["error"] == "unauthorized"
    assert reply.headers["www-authenticate"] == "Bearer"


def test_proxy_headers_from_an_untrusted_address_are_ignored(tmp_path: Path) -> None:
    with (
        serving(tmp_path, recipe=RECIPE, args=("--trust-proxy", "10.0.0.0/8")) as server,
        httpx.Client(base_url=server.url, timeout=20) as http,
    ):
        alone = http.get("/api/me", headers={"X-Forwarded-User": "ada"})
        assert alone.status_code == 401
        beside = http.get("/api/me", headers={"X-Forwarded-User": "ada", **server.headers})
        assert beside.json()["name"] == "token"


def start(people: People, prompt: str) -> tuple[str, dict[str, str]]:
    """A paused run of ``prompt``; its open interactions by tool (``gate``, ``open``)."""
    with people.client("token") as http:
        reply = http.post("/api/runs", json={"prompt": prompt})
        assert reply.status_code == 202, reply.text
        run_id: str = reply.json()["run_id"]
        wait_for_status(http, run_id, {"paused_waiting_human"})
        found = http.get(f"/api/runs/{run_id}/interactions/pending").json()["interactions"]
    return run_id, {i["tool_call_id"]: i["id"] for i in found}


def stored(people: People, run_id: str) -> dict[str, Any]:
    with people.client("token") as http:
        run = http.get(f"/api/runs/{run_id}").json()
    return {i["tool_call_id"]: i["answer"] for i in run["interactions"]}


def test_rest_answers_record_who_signed_in(people: People) -> None:
    run_id, ids = start(people, "gate: Ship 2.0\nopen: Why?")
    url = f"/api/runs/{run_id}/interactions/{{}}/answer"
    with people.client("eve") as eve:
        refused = eve.post(url.format(ids["c1"]), json={"approved": True, "answered_by": "ada"})
        assert refused.status_code == 403, refused.text
        body = refused.json()
        assert (body["error"], body["reason"]) == ("not allowed", "not_an_approver")
        assert (body["run_id"], body["interaction_id"]) == (run_id, ids["c1"])
        assert "ada, group:release" in body["message"]
        assert stored(people, run_id) == {"c1": None, "c2": None}  # nothing stored
        opened = eve.post(url.format(ids["c2"]), json={"answer": "because", "answered_by": "x"})
        assert opened.status_code == 200, opened.text
    with people.client("bob") as bob:  # of the group release
        given = bob.post(url.format(ids["c1"]), json={"approved": True, "answered_by": "mallory"})
        assert given.status_code == 200 and given.json()["resumed"], given.text
        wait_for_status(bob, run_id, {"finished"})
    answers = stored(people, run_id)
    assert (answers["c1"]["answered_by"], answers["c1"]["via"]) == ("bob", "web")
    assert answers["c2"]["answered_by"] == "eve"


async def _ws_answer(people: People, who: str, frame: dict[str, Any]) -> dict[str, Any]:
    protocols = ["pi-recipes.v1", f"bearer.{people.tokens[who]}"]
    async with connect(
        people.server.ws_url, subprotocols=protocols, proxy=None, open_timeout=10  # type: ignore[list-item]
    ) as ws:
        with anyio.fail_after(10):
            assert json.loads(await ws.recv())["type"] == "hello"
            await ws.send(json.dumps(frame))
            while True:
                got: dict[str, Any] = json.loads(await ws.recv())
                if got.get("id") == frame["id"]:
                    return got


@pytest.mark.anyio
async def test_websocket_answers_record_who_signed_in(people: People) -> None:
    run_id, ids = await anyio.to_thread.run_sync(start, people, "gate: Ship 3.0")
    frame = {"type": "answer", "id": "a1", "run_id": run_id, "interaction_id": ids["c1"],
             "payload": {"approved": True}, "answered_by": "ada"}  # fmt: skip
    refused = await _ws_answer(people, "eve", frame)
    assert (refused["type"], refused["error"]) == ("error", "not allowed"), refused
    assert refused["reason"] == "not_an_approver"
    decline = {k: v for k, v in frame.items() if k != "payload"} | {"type": "decline", "id": "d1"}
    declined = await _ws_answer(people, "eve", decline)
    assert (declined["type"], declined["error"]) == ("error", "not allowed"), declined
    assert (await anyio.to_thread.run_sync(stored, people, run_id)) == {"c1": None}
    acked = await _ws_answer(people, "ada", frame | {"answered_by": "bob"})
    assert acked["type"] == "ack", acked
    answer = (await anyio.to_thread.run_sync(stored, people, run_id))["c1"]
    assert answer["answered_by"] == "ada"


async def _frame_of(ws: Any, kind: str) -> dict[str, Any]:
    with anyio.fail_after(20):
        while True:
            got: dict[str, Any] = json.loads(await ws.recv())
            if got["type"] == kind:
                return got


@pytest.mark.anyio
async def test_votes_on_an_approval_two_must_give_are_shown(people: People) -> None:
    protocols = ["pi-recipes.v1", f"bearer.{people.tokens['eve']}"]
    async with connect(
        people.server.ws_url, subprotocols=protocols, proxy=None, open_timeout=10  # type: ignore[list-item]
    ) as ws:
        await ws.send(json.dumps({"type": "subscribe", "run_id": None, "id": "s"}))
        await _frame_of(ws, "subscribed")
        run_id, ids = await anyio.to_thread.run_sync(start, people, "two: Ship 4.0")
        opened = await _frame_of(ws, "interrupt.opened")
        assert (opened["interaction"]["approvals"], opened["interaction"]["required_approvals"]) \
            == ([], 2)  # fmt: skip
        url = f"/api/runs/{run_id}/interactions/{ids['c1']}/answer"
        async with httpx.AsyncClient(base_url=people.server.url, timeout=20) as http:
            first = await http.post(url, json={"approved": True}, headers=people.headers("ada"))
            assert first.status_code == 200, first.text
            reply = first.json()
            assert (reply["settled"], reply["approvals"], reply["required_approvals"]) == (
                False, ["ada"], 2,
            )  # fmt: skip
            voted = await _frame_of(ws, "interrupt.voted")
            assert voted == {"type": "interrupt.voted", "run_id": run_id,
                             "interaction_id": ids["c1"], "voter": "ada", "approved": True,
                             "approvals": ["ada"], "required_approvals": 2}  # fmt: skip
            pending = await http.get(f"/api/runs/{run_id}/interactions/pending",
                                     headers=people.headers("bob"))  # fmt: skip
            [shown] = pending.json()["interactions"]
            assert (shown["approvals"], shown["required_approvals"]) == (["ada"], 2)
            inbox = await http.get("/api/me/inbox", headers=people.headers("bob"))
            [mine] = [i for i in inbox.json()["interactions"] if i["run_id"] == run_id]
            assert (mine["approvals"], mine["required_approvals"]) == (["ada"], 2)

            second = await http.post(url, json={"approved": True}, headers=people.headers("bob"))
            assert second.status_code == 200, second.text
            reply = second.json()
            assert (reply["settled"], reply["approvals"]) == (True, ["ada", "bob"])
            resolved = await _frame_of(ws, "interrupt.resolved")
            assert resolved["answered_by"] == "ada, bob"
    with people.client("token") as http:
        done = wait_for_status(http, run_id, {"finished"})
    [interaction] = done["interactions"]
    assert (interaction["approvals"], interaction["answer"]["answered_by"]) == (
        ["ada", "bob"], "ada, bob",
    )  # fmt: skip


def test_agui_resume_records_who_signed_in(people: People, provider: Provider) -> None:
    thread = f"thread-{uuid.uuid4().hex[:8]}"

    def post(headers: dict[str, str], **fields: Any) -> httpx.Response:
        body = RunAgentInput(
            thread_id=thread, run_id=f"client-{uuid.uuid4().hex[:8]}", state={}, tools=[],
            messages=[UserMessage(id="u1", role="user", content="gate: Ship 4.0")],
            context=[], forwarded_props={}, **fields,
        )  # fmt: skip
        with httpx.Client(base_url=people.server.url, timeout=20) as http:
            return http.post(
                "/agui",
                content=body.model_dump_json(by_alias=True, exclude_none=True),
                headers={"Content-Type": "application/json", **headers},
            )

    started = post(people.headers("bob"))
    assert started.status_code == 200 and '"outcome":{"type":"interrupt"' in started.text
    assert '"approvers":["ada","group:release"]' in started.text  # the interrupt says who may
    with people.client("token") as http:
        (run,) = http.get("/api/runs", params={"thread_id": thread}).json()["runs"]
    resume = [ResumeEntry(interrupt_id="int-c1", status="resolved", payload={"approved": True})]
    refused = post(people.headers("eve"), resume=resume)
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"] == "not allowed"
    assert stored(people, run["id"]) == {"c1": None}
    jwt_token = provider.token(sub="u-9", preferred_username="ada")
    resumed = post({"Authorization": f"Bearer {jwt_token}"}, resume=resume)
    assert resumed.status_code == 200 and "RUN_FINISHED" in resumed.text, resumed.text
    answer = stored(people, run["id"])["c1"]
    assert (answer["answered_by"], answer["status"]) == ("ada", "resolved")


def test_the_inbox_lists_what_one_may_answer(people: People) -> None:
    first, ids1 = start(people, "gate: Inbox one\nopen: Inbox two")
    second, ids2 = start(people, "gate: Inbox three")
    with people.client("bob") as bob:
        mine = bob.get("/api/me/inbox").json()["interactions"]
        keys = [(i["run_id"], i["id"], i["assigned"]) for i in mine]
        assigned = [k for k in keys if k[2]]
        assert keys[: len(assigned)] == assigned  # assigned ones first
        assert [k for k in keys if k[:2] in {(first, ids1["c1"]), (second, ids2["c1"])}] == [
            (second, ids2["c1"], True), (first, ids1["c1"], True),
        ]  # fmt: skip
        assert (first, ids1["c2"], False) in keys
        interrupt = next(i for i in mine if i["run_id"] == second)["interrupt"]
        assert interrupt["metadata"]["approvers"] == ["ada", "group:release"]
        pages, after = [], None
        while True:
            params = {"limit": 2} | ({"after": after} if after else {})
            page = bob.get("/api/me/inbox", params=params).json()
            pages += [(i["run_id"], i["id"], i["assigned"]) for i in page["interactions"]]
            after = page["next"]
            if after is None:
                break
        assert pages == keys
        bad = bob.get("/api/me/inbox", params={"after": "nope"})
        assert bad.status_code == 422 and bad.json()["reason"] == "invalid_cursor"
    with people.client("eve") as eve:
        theirs = eve.get("/api/me/inbox").json()["interactions"]
        assert not any(i["assigned"] for i in theirs)
        assert (first, ids1["c2"]) in {(i["run_id"], i["id"]) for i in theirs}
        assert not {(first, ids1["c1"]), (second, ids2["c1"])} & {
            (i["run_id"], i["id"]) for i in theirs
        }


def test_the_docs_who_answers_commands(tmp_path: Path) -> None:
    """docs/hosts/web.md, "Who answers" (tests/test_docs.py runs it too): the user is added as
    printed (its token printed once, only its hash kept), the serve line parses."""
    page = (ROOT / "docs" / "hosts" / "web.md").read_text(encoding="utf-8")
    section = page.split("## Who answers", 1)[1]
    (block,) = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    add, *serves = [line.split("#")[0].split() for line in block.splitlines()]
    done = pi(*add[1:], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    token = re.search(r"pr_ada_\S+", done.stdout)
    assert token is not None and token.group() not in (tmp_path / "users.toml").read_text()
    assert load_users(tmp_path / "users.toml").by_token(token.group()) is not None
    for line in serves:
        assert line[:2] == ["pi-recipes", "serve"]
        build_parser().parse_args(line[2:])
