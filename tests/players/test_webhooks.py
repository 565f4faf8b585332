"""Turn notifications: webhooks signed as Standard Webhooks says, retried after failures, with
no hidden tile or token in a body, and URLs held to the policy."""

from __future__ import annotations

import base64
import itertools
import json
import queue
import random
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
from standardwebhooks.webhooks import Webhook

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from devstack.worker import worker
from service.store import keys
from tests.live.helpers import answered, auth, create, entries, send
from tests.players.conftest import ENV
from tests.players.helpers import new_player, play_out
from tests.players.receiver import Received, Receiver, hostile, receiver
from tests.redis_clients import keys_not_ending, keys_not_starting, user_without
from tests.spec_check import Checker

CHECKER = Checker()


@pytest.fixture()
def hooks() -> Iterator[Receiver]:
    with receiver() as found:
        yield found


def register(base: str, player: dict[str, Any], url: str, **body: Any) -> requests.Response:
    return send(
        "POST",
        f"{base}/api/v1/players/{player['player_id']}/webhooks",
        json={"url": url, **body},
        headers=auth(player["player_token"]),
    )


def verified(got: Received, secret: str) -> dict[str, Any]:
    """The delivery's body, once its signature checks out with the webhook's secret and it is
    what the OpenAPI document's ``webhooks`` say a delivery of its type holds."""
    body: dict[str, Any] = Webhook(secret).verify(got.body, got.headers)
    assert set(body) == {"type", "timestamp", "data"}
    assert documented_problems(got, body) == []
    return body


def documented_problems(got: Received, body: dict[str, Any]) -> list[str]:
    """What in a delivery the document does not declare: a field (objects are closed, as
    for every answer the suite receives) or a header it names but the delivery lacks."""
    documented = CHECKER.spec.get("webhooks", {}).get(body["type"], {}).get("post")
    if documented is None:
        return [f"no webhook {body['type']!r} in the document"]
    schema = documented["requestBody"]["content"]["application/json"]["schema"]
    problems = CHECKER.errors(schema, body, f"webhook {body['type']}")
    headers = [p["name"] for p in documented["parameters"] if p["in"] == "header"]
    return problems + [f"header {name} missing" for name in headers if name not in got.headers]


def secrets_of(game: dict[str, Any], player: dict[str, Any]) -> list[str]:
    tokens = [s["token"] for s in game["seats"] if s["token"]]
    return [*tokens, game["host_token"], game["table_token"], player["player_token"]]


def finish_turn(base: str, gid: str, token: str, version: int) -> None:
    """Play seat 0's turn from ``version`` to its end (random legal moves): until another seat
    moved in the same answer (the bots answer within the request), or holds the turn."""
    rng = random.Random(gid)
    while True:
        moves = send("GET", f"{base}/api/v1/games/{gid}/legal-moves", headers=auth(token)).json()
        played = send(
            "POST",
            f"{base}/api/v1/games/{gid}/moves",
            json=rng.choice(moves["moves"]),
            headers=auth(token),
        )
        assert played.status_code == 200, played.text
        if played.json()["turn"] != 0 or played.json()["version"] > version + 1:
            return
        version = played.json()["version"]


def test_your_turn_is_signed_and_tells_no_secret(server: str, hooks: Receiver) -> None:
    ann = new_player(server, "ann")
    made = register(server, ann, hooks.url + "/turns", events=["your_turn"])
    assert made.status_code == 201, made.text
    secret = made.json()["secret"]
    players = [{"name": "ann", "player_token": ann["player_token"]}, {"name": "c", "bot": "greedy"}]
    game = create(server, players=players, auto_deal=True)
    gid, token = game["game_id"], game["seats"][0]["token"]
    ids = set()
    for _ in range(3):  # the first turn, then each time the bot hands it back
        got = hooks.next()
        body = verified(got, secret)
        assert body["type"] == "your_turn" and got.path == "/turns"
        view = requests.get(f"{server}/api/v1/games/{gid}", headers=auth(token), timeout=10).json()
        assert body["data"] == {"game_id": gid, "seat": 0, "version": view["version"]}
        assert view["turn"] == 0
        # The turn passed to seat 0 with this entry: someone else's step, or a deal.
        (passed,) = entries(server, gid, after=view["version"] - 1)["entries"]
        assert passed["seat"] != 0 or passed["action"]["action"] == "deal"
        assert not any(s.encode() in got.body for s in secrets_of(game, ann))
        ids.add(got.headers["webhook-id"])
        finish_turn(server, gid, token, view["version"])
    assert len(ids) == 3


def documented_check() -> Any:
    """The ``verified`` function players.md shows, checking a delivery with the standard
    library alone."""
    text = (Path(__file__).parents[2] / "docs" / "players.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    (code,) = [block for block in blocks if "def verified" in block]
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # the docs' own example, run as a reader would
    return namespace["verified"]


def test_players_md_checks_a_signature_with_the_standard_library(
    server: str, hooks: Receiver
) -> None:
    """The stdlib check of players.md takes a real delivery, and refuses it altered or under
    the secret's text (the key is the secret's bytes)."""
    check = documented_check()
    ann = new_player(server, "ann")
    made = register(server, ann, hooks.url + "/turns", events=["your_turn"])
    secret = made.json()["secret"]
    players = [{"name": "ann", "player_token": ann["player_token"]}, {"name": "c", "bot": "greedy"}]
    create(server, players=players, auto_deal=True)
    got = hooks.next()
    assert check(secret, got.headers, got.body)
    assert not check(secret, got.headers, got.body + b" ")
    text_key = base64.b64encode(secret.encode()).decode()  # the secret's text as the key
    assert not check("whsec_" + text_key, got.headers, got.body)


def test_a_seat_change_while_the_turn_stays_sends_no_your_turn(
    server: str, hooks: Receiver
) -> None:
    ann = new_player(server, "ann")
    secret = register(server, ann, hooks.url + "/turns", events=["your_turn"]).json()["secret"]
    players = [{"name": "ann", "player_token": ann["player_token"]}, "bo"]
    for seed in range(50):  # a deal where ann starts
        game = create(server, players=players, auto_deal=True, seed=seed)
        if requests.get(f"{server}/api/v1/games/{game['game_id']}", timeout=10).json()["turn"] == 0:
            break
    dealt = verified(hooks.next(), secret)["data"]
    while dealt["game_id"] != game["game_id"]:  # the games ann did not start told her too
        dealt = verified(hooks.next(), secret)["data"]
    changed = send(
        "PUT",
        f"{server}/api/v1/games/{game['game_id']}/seats/1",
        json={"bot": "greedy"},
        headers=auth(game["table_token"]),
    )
    assert changed.status_code == 200, changed.text
    with pytest.raises(queue.Empty):  # the turn stayed with ann: nothing new to tell
        while True:
            got = verified(hooks.next(timeout=2), secret)["data"]
            assert got["game_id"] != game["game_id"], got


def test_a_failed_delivery_is_retried_with_backoff(server: str, hooks: Receiver) -> None:
    ann = new_player(server, "ann")
    hooks.answers["/flaky"] = [500, 503]
    secret = register(server, ann, hooks.url + "/flaky").json()["secret"]
    players = [{"name": "ann", "player_token": ann["player_token"]}, {"name": "c", "bot": "greedy"}]
    create(server, players=players, auto_deal=True)
    tries = [hooks.next() for _ in range(3)]
    assert len({t.headers["webhook-id"] for t in tries}) == 1  # one delivery, three attempts
    assert len({verified(t, secret)["timestamp"] for t in tries}) == 1
    gaps = [b.at - a.at for a, b in itertools.pairwise(tries)]
    assert gaps[0] >= 0.2 and gaps[1] >= 1.2  # WEBHOOK_RETRY_MS, then six times it
    with pytest.raises(queue.Empty):  # taken: nothing more comes
        hooks.next(timeout=2)


@pytest.mark.parametrize("refused", ["queue", "lookup"])
def test_a_your_turn_redis_refused_is_sent_once_redis_takes_it(
    hooks: Receiver, refused: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The change is stored, then Redis refuses its deliveries (the app's own Redis user may not
    # touch the deliveries' keys), or the player's webhooks they are made from.
    with RedisServer() as redis_server:
        admin = redis.Redis.from_url(redis_server.url)
        app_url = user_without(redis_server, admin)
        worker_env = {**ENV, "REDIS_URL": redis_server.url}
        with start_gunicorn(app_url, env=ENV, with_worker=False) as base, worker(worker_env):
            ann = new_player(base, "ann")
            secret = register(base, ann, hooks.url + "/turns").json()["secret"]
            if refused == "queue":
                user_without(redis_server, admin, keys=keys_not_starting("mt:{hooks}"))
            else:
                user_without(redis_server, admin, keys=keys_not_ending("}:hooks"))
            players = [
                {"name": "ann", "player_token": ann["player_token"]},
                {"name": "c", "bot": "greedy"},
            ]
            answers = answered(monkeypatch)
            gid = create(base, players=players, auto_deal=True)["game_id"]
            assert answers == [201]  # on its first try
            with pytest.raises(queue.Empty):
                hooks.next(timeout=2)
            user_without(redis_server, admin)
            body = verified(hooks.next(timeout=10), secret)
    assert body["type"] == "your_turn" and body["data"]["game_id"] == gid


def test_deliveries_go_on_after_redis_stopped_answering_a_while(hooks: Receiver) -> None:
    # Redis answers nothing for longer than the worker's socket timeout, a few times: the
    # webhook sender's take of the due deliveries times out, which must not cost it the threads
    # it sends with (it took them all for that take).
    with RedisServer() as redis_server:
        worker_env = {**ENV, "REDIS_URL": redis_server.url}
        with (
            start_gunicorn(redis_server.url, env=ENV, with_worker=False) as base,
            worker(worker_env),
        ):
            ann = new_player(base, "ann")
            made = register(base, ann, hooks.url + "/turns", events=["your_turn"])
            secret = made.json()["secret"]
            admin = redis.Redis.from_url(redis_server.url)
            for _ in range(3):
                admin.client_pause(1500)  # every client, beyond REDIS_SOCKET_TIMEOUT_MS
                time.sleep(2)
            seat = {"name": "ann", "player_token": ann["player_token"]}
            players = [seat, {"name": "c", "bot": "greedy"}]
            gid = create(base, players=players, auto_deal=True)["game_id"]
            body = verified(hooks.next(timeout=10), secret)
    assert body["type"] == "your_turn" and body["data"]["game_id"] == gid


def test_a_player_and_a_webhook_retried_with_their_idempotency_key_are_made_once(
    server: str, hooks: Receiver
) -> None:
    key = {"Idempotency-Key": f'"{uuid.uuid4()}"'}
    made = [send("POST", f"{server}/api/v1/players", json={"name": "ann"}, headers=key)]
    made.append(send("POST", f"{server}/api/v1/players", json={"name": "ann"}, headers=key))
    assert [r.status_code for r in made] == [201, 201]
    assert made[0].json() == made[1].json() and made[1].headers["Idempotent-Replayed"] == "true"
    short = send(
        "POST", f"{server}/api/v1/players", json={"name": "ann"}, headers={"Idempotency-Key": "k1"}
    )
    assert (short.status_code, short.json()["code"]) == (400, "short_idempotency_key")
    ann, bo = made[0].json(), new_player(server, "bo")
    hook_key = {"Idempotency-Key": "hook-1"}
    url = f"{server}/api/v1/players/{ann['player_id']}/webhooks"
    body = {"url": hooks.url + "/once"}
    first, again = (
        send("POST", url, json=body, headers={**auth(ann["player_token"]), **hook_key})
        for _ in range(2)
    )
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json() and again.headers["Idempotent-Replayed"] == "true"
    listed = requests.get(url, headers=auth(ann["player_token"]), timeout=10).json()["webhooks"]
    assert len(listed) == 1
    other = send("POST", url, json=body, headers={**auth(bo["player_token"]), **hook_key})
    assert (other.status_code, other.json()["code"]) == (403, "not_this_player")
    # The same key and body from another player, on its own webhooks: its own new webhook.
    bos = f"{server}/api/v1/players/{bo['player_id']}/webhooks"
    own = send("POST", bos, json=body, headers={**auth(bo["player_token"]), **hook_key})
    assert own.status_code == 201 and "Idempotent-Replayed" not in own.headers
    assert own.json()["webhook_id"] != first.json()["webhook_id"]


def test_game_over_and_rematch_reach_every_players_webhook(server: str, hooks: Receiver) -> None:
    ann, bo = new_player(server, "ann"), new_player(server, "bo")
    secrets = {
        who["name"]: register(server, who, f"{hooks.url}/{who['name']}", events=events).json()[
            "secret"
        ]
        for who, events in ((ann, ["game_over", "rematch"]), (bo, ["game_over"]))
    }
    players = [
        {"name": "ann", "player_token": ann["player_token"]},
        {"name": "bo", "player_token": bo["player_token"]},
    ]
    game = create(server, players=players, options={"rounds": 1, "set": 6, "hand_size": 5})
    play_out(server, game, seed=5)
    over = {}
    for _ in range(2):
        got = hooks.next()
        over[got.path] = verified(got, secrets[got.path[1:]])
    assert {b["type"] for b in over.values()} == {"game_over"}
    assert {b["data"]["seat"] for b in over.values()} == {0, 1}
    made = send(
        "POST",
        f"{server}/api/v1/games/{game['game_id']}/rematch",
        headers=auth(game["seats"][0]["token"]),
    )
    assert made.status_code == 201
    got = hooks.next()
    body = verified(got, secrets["ann"])
    assert got.path == "/ann" and body["type"] == "rematch"
    assert body["data"]["next_game_id"] == made.json()["game_id"]
    assert body["data"]["game_id"] == game["game_id"] and body["data"]["seat"] == 0


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/hook",  # http to a host not allowed
        "https://10.1.2.3/hook",  # a private address
        "https://localhost/hook",  # loopback by name
        "https://[::1]/hook",
        "https://169.254.169.254/latest",  # link-local (cloud metadata)
        "ftp://127.0.0.1/hook",
        "https://user:pw@127.0.0.1/hook",
        "https://",
        "not a url",
    ],
)
def test_urls_outside_the_policy_are_refused(server: str, url: str) -> None:
    ann = new_player(server, "ann")
    refused = register(server, ann, url)
    assert refused.status_code == 422, refused.text
    assert refused.json()["code"] == "webhook_url_not_allowed"
    listed = send(
        "GET",
        f"{server}/api/v1/players/{ann['player_id']}/webhooks",
        headers=auth(ann["player_token"]),
    )
    assert listed.json() == {"webhooks": []}


def test_only_the_player_manages_its_webhooks(server: str, hooks: Receiver) -> None:
    ann, bo = new_player(server, "ann"), new_player(server, "bo")
    url = f"{server}/api/v1/players/{ann['player_id']}/webhooks"
    assert send("POST", url, json={"url": hooks.url}).json()["code"] == "missing_token"
    foreign = send("POST", url, json={"url": hooks.url}, headers=auth(bo["player_token"]))
    assert (foreign.status_code, foreign.json()["code"]) == (403, "not_this_player")
    made = register(server, ann, hooks.url + "/x").json()
    listed = send("GET", url, headers=auth(ann["player_token"])).json()
    assert listed == {
        "webhooks": [
            {
                "webhook_id": made["webhook_id"],
                "url": hooks.url + "/x",
                "events": ["your_turn", "game_over", "rematch"],
            }
        ]
    }
    assert "secret" not in json.dumps(listed)
    one = f"{url}/{made['webhook_id']}"
    assert send("DELETE", one, headers=auth(bo["player_token"])).status_code == 403
    assert send("DELETE", one, headers=auth(ann["player_token"])).status_code == 204
    gone = send("DELETE", one, headers=auth(ann["player_token"]))
    assert (gone.status_code, gone.json()["code"]) == (404, "webhook_not_found")
    for n in range(10):
        assert register(server, ann, f"{hooks.url}/{n}").status_code == 201
    full = register(server, ann, hooks.url + "/eleventh")
    assert (full.status_code, full.json()["code"]) == (409, "too_many_webhooks")


def test_a_delivery_that_cannot_be_read_holds_up_no_other(hooks: Receiver) -> None:
    """A queued delivery the sender cannot read (written by another version of the service,
    or damaged) is dropped, and every other one is sent. Before, it ended the sender's thread
    for good at its first look, while the worker went on and passed its liveness probe: no
    webhook was sent any more."""
    with RedisServer() as redis_server, start_gunicorn(redis_server.url, env=ENV) as base:
        client = redis.Redis.from_url(redis_server.url)
        client.hset(keys.HOOK_JOBS, "msg_unreadable", b'{"delivery_id": "msg_unreadable"}')
        client.zadd(keys.HOOK_DUE, {"msg_unreadable": 0})
        ann = new_player(base, "ann")
        made = register(base, ann, hooks.url + "/turns", events=["your_turn"])
        assert made.status_code == 201, made.text
        players = [
            {"name": "ann", "player_token": ann["player_token"]},
            {"name": "c", "bot": "greedy"},
        ]
        gid = create(base, players=players, auto_deal=True)["game_id"]
        body = verified(hooks.next(), made.json()["secret"])
        assert (body["type"], body["data"]["game_id"]) == ("your_turn", gid)
        assert client.hget(keys.HOOK_JOBS, "msg_unreadable") is None


#: An answer's body of 256 MiB, sent a MiB at a time.
HUGE, MIB = 256, 1 << 20
#: service.worker.deliveries.ATTEMPT_SECONDS: the longest a delivery attempt may take.
ATTEMPT_SECONDS = 10


def test_a_receiver_that_answers_without_end_costs_the_worker_little(server: str) -> None:
    """A receiver is anyone's server. One that answers a delivery with an endless body had the
    worker read all of it into memory (a GiB a few seconds); one that drips its answer a byte
    every few seconds held a sending thread for good, and eight such receivers every delivery
    of every player. An attempt reads no body and ends after ATTEMPT_SECONDS."""
    endless = hostile(
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (HUGE * MIB), bytes(MIB), HUGE, 0
    )
    dripping = hostile(b"HTTP/1.1 200 OK\r\nX-Slow: ", b"a", 240, 0.5)
    with endless as (endless_url, big), dripping as (dripping_url, slow):
        ann = new_player(server, "ann")
        for url in (endless_url, dripping_url):
            assert register(server, ann, url + "/turns", events=["your_turn"]).status_code == 201
        players = [
            {"name": "ann", "player_token": ann["player_token"]},
            {"name": "c", "bot": "greedy"},
        ]
        create(server, players=players, auto_deal=True)
        deadline = time.monotonic() + 150
        while (big.held is None or slow.held is None) and time.monotonic() < deadline:
            time.sleep(0.2)
    assert big.held is not None and big.sent < 32 * MIB, big  # socket buffers, not the body
    assert slow.held is not None and slow.held < ATTEMPT_SECONDS + 5, slow  # not 120 s
