"""The Python client's calls for the players' loop and for moving a seat, live: stream tickets,
seat transfers, players and ratings, the lobby and quick play, rematch and webhooks, each
with a refusal raised as its typed error and ``code``; and the client README's examples run."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import requests
from mexican_train_client import (
    JSON,
    BadRequest,
    Client,
    Conflict,
    Forbidden,
    Media,
    NotFound,
    StaleVersion,
    Unauthorized,
    Unprocessable,
    new_idempotency_key,
)
from mexican_train_client.stream import entries_of
from standardwebhooks.webhooks import Webhook

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from tests.bots.faulty_proxy import faulty_proxy
from tests.live.conftest import LIVE_ENV
from tests.players.receiver import receiver

README = Path(__file__).resolve().parents[2] / "clients" / "python" / "README.md"
#: The base URL the README's examples name (``make run``).
README_BASE = "http://127.0.0.1:8000"
#: A game short enough to play out in a test: one round of the double-6 set, 5 tiles a hand.
SHORT = {"rounds": 1, "set": 6, "hand_size": 5}
T = TypeVar("T")


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    """A server that takes webhooks to 127.0.0.1 (where the tests' receiver listens), on a
    Redis of its own: another stack's background worker, which allows no such host, would
    take its deliveries and drop them (and the lobby and leaderboard are these tests' alone)."""
    env = {**LIVE_ENV, "WEBHOOK_ALLOW_HOSTS": "127.0.0.1", "WEBHOOK_RETRY_MS": "200"}
    with RedisServer() as redis, start_gunicorn(redis.url, env=env) as url:
        yield url


@pytest.fixture()
def client(base: str) -> Iterator[Client]:
    with Client(base) as made:
        yield made


def eventually(read: Callable[[], T], done: Callable[[T], bool], seconds: float = 15) -> T:
    """``read()`` again until ``done`` holds of it or the time is up; its last value."""
    deadline = time.monotonic() + seconds
    while True:
        value = read()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def play_out(client: Client, gid: str, tokens: dict[int, str], table: str, seed: int) -> JSON:
    """Play the game to its end: the table deals, each person's seat makes random legal moves,
    the server plays its bots (waited for on the log). The final view."""
    rng = random.Random(seed)
    view = client.view(gid)
    while view["status"] != "game_over":
        if view["status"] in ("waiting_deal", "round_over"):
            view = client.deal(gid, token=table)
        elif view["turn"] not in tokens:  # a bot's turn past the request's budget
            client.events_page(gid, after=view["version"], wait=5)
            view = client.view(gid)
        else:
            token = tokens[view["turn"]]
            view = client.move(
                gid, rng.choice(client.legal_moves(gid, token=token)["moves"]), token=token
            )
    return view


# -- stream tickets ------------------------------------------------------------------------


def test_a_stream_ticket_reads_as_its_seat_once(client: Client, base: str) -> None:
    game = client.create_game(["ann", "bo"], seed=5)
    gid = game["game_id"]
    dealt = client.deal(gid, token=game["table_token"])
    mover = game["seats"][dealt["turn"]]["token"]
    issued = client.stream_ticket(gid, token=mover)
    assert issued["ticket"] != mover and issued["expires_at"]
    path = f"/api/v1/games/{gid}/events"
    page = client.request("GET", path, params={"access_token": issued["ticket"]})
    # The seat's own page: the deal entry carries the moves of the seat on turn, for it alone.
    assert page == client.events_page(gid, token=mover)
    assert "legal_moves" in page["entries"][-1]
    with pytest.raises(Unauthorized) as spent:
        client.request("GET", path, params={"access_token": issued["ticket"]})
    assert spent.value.code == "invalid_token"
    streamed = client.stream_ticket(gid, token=mover)["ticket"]
    with requests.get(
        f"{base}{path}",
        params={"access_token": streamed},
        headers={"Accept": Media.NDJSON.value},
        stream=True,
        timeout=10,
    ) as r:
        assert r.status_code == 200
        assert next(entries_of(r.iter_lines(), Media.NDJSON))["version"] == 1
    with pytest.raises(Unauthorized) as unknown:
        client.stream_ticket(gid, token="not-a-token-of-this-game")
    assert unknown.value.code == "invalid_token"


# -- seat transfers ------------------------------------------------------------------------


def test_a_transfer_moves_a_seat_once_and_a_retry_keeps_its_token(client: Client) -> None:
    game = client.create_game(["ann", "bo"])
    gid, ann = game["game_id"], game["seats"][0]["token"]
    ticket = client.create_transfer(gid, token=ann)
    assert ticket["ticket"] in ticket["url"] and ticket["expires_at"]
    key = new_idempotency_key()
    moved = client.claim_transfer(gid, ticket["ticket"], idempotency_key=key)
    assert (moved["game_id"], moved["seat"], moved["name"]) == (gid, 0, "ann")
    assert moved["token"] != ann
    assert client.claim_transfer(gid, ticket["ticket"], idempotency_key=key) == moved
    with pytest.raises(Conflict) as used:
        client.claim_transfer(gid, ticket["ticket"])
    assert used.value.code == "transfer_used"
    with pytest.raises(Unauthorized) as revoked:
        client.view(gid, token=ann)
    assert revoked.value.code == "invalid_token"
    assert "hand" in client.view(gid, token=moved["token"])
    with pytest.raises(NotFound) as unknown:
        client.claim_transfer(gid, "tt.no-such-ticket")
    assert unknown.value.code == "transfer_not_found"
    with pytest.raises(Forbidden) as table:
        client.create_transfer(gid, token=game["table_token"])
    assert table.value.code == "not_a_seat"


def test_a_stale_claim_gets_the_game_and_leaves_the_ticket(client: Client) -> None:
    game = client.create_game(["ann", "bo"])
    gid, bo = game["game_id"], game["seats"][1]["token"]
    ticket = client.create_transfer(gid, token=bo)["ticket"]
    with pytest.raises(StaleVersion) as stale:
        client.claim_transfer(gid, ticket, if_match=0)
    assert stale.value.view is not None and stale.value.view["version"] == 1
    assert client.claim_transfer(gid, ticket, if_match=1)["seat"] == 1


# -- players and ratings -------------------------------------------------------------------


def test_a_player_is_made_once_per_key_and_read_back(client: Client) -> None:
    key = new_idempotency_key()
    ann = client.create_player("ann", idempotency_key=key)
    assert client.create_player("ann", idempotency_key=key) == ann, "the retry: the same player"
    other = client.create_player("ann")
    assert other["player_id"] != ann["player_id"]
    read = client.player(ann["player_id"])
    assert (read["name"], read["kind"], read["games"], read["wins"]) == ("ann", "person", 0, 0)
    assert read["rating"]["mu"] == pytest.approx(25) and read["rating"]["display"] == 0
    with pytest.raises(BadRequest) as short:
        client.create_player("bo", idempotency_key="too-short")
    assert short.value.code == "short_idempotency_key"
    with pytest.raises(NotFound) as missing:
        client.player("no-such-player")
    assert missing.value.code == "player_not_found"
    for level in client.bots():
        assert client.player(level["player_id"])["kind"] == "bot"


def test_rated_games_rate_their_players_and_fill_the_leaderboard(client: Client) -> None:
    ann = client.create_player("ann")
    bot = {"name": "cpu", "bot": "random"}
    unrated = client.create_game(["ann", bot], rated=True, options=SHORT)
    with pytest.raises(Unprocessable) as refused:
        client.deal(unrated["game_id"], token=unrated["table_token"])
    assert refused.value.code == "unrated_seat"
    for n in range(5):
        game = client.create_game([{"open": True}, bot], rated=True, options=SHORT)
        gid, invite = game["game_id"], game["seats"][0]["invite"]
        if n == 0:
            with pytest.raises(Unprocessable) as anonymous:
                client.join(gid, invite, "ann")
            assert anonymous.value.code == "unrated_seat"
        key = new_idempotency_key()
        token = ann["player_token"]
        seat = client.join(gid, invite, "ann", player_token=token, idempotency_key=key)
        assert client.join(gid, invite, "ann", player_token=token, idempotency_key=key) == seat
        play_out(client, gid, {0: seat["token"]}, game["table_token"], seed=n)
    rated = eventually(lambda: client.player(ann["player_id"]), lambda p: p["games"] == 5)
    assert rated["games"] == 5 and 0 <= rated["wins"] <= 5
    assert rated["rating"]["sigma"] < 25 / 3, "five results made it surer"
    people = client.leaderboard(kind="people", limit=100)
    assert people["kind"] == "people"
    mine = [row for row in people["players"] if row["player_id"] == ann["player_id"]]
    assert mine == [rated]
    shown = [row["rating"]["display"] for row in people["players"]]
    assert shown == sorted(shown, reverse=True)
    bots = client.leaderboard(kind="bots")["players"]
    assert "bot-random" in [row["player_id"] for row in bots]
    assert len(client.leaderboard(kind="bots", limit=1)["players"]) == 1
    with pytest.raises(Unprocessable) as kind:
        client.leaderboard(kind="robots")
    assert kind.value.code == "validation_failed"


# -- lobby and quick play ------------------------------------------------------------------


def unique_clock() -> int:
    """A turn clock no other test uses: the lobby's tables of these tests are theirs alone."""
    return random.randrange(1000, 86400)


def listed(client: Client, game_id: str, **query: Any) -> list[JSON]:
    return [t for t in client.lobby(**query)["tables"] if t["game_id"] == game_id]


def test_the_lobby_lists_a_public_game_until_its_seats_are_filled(client: Client) -> None:
    clock = unique_clock()
    game = client.create_game(["ann", {"open": True}], public=True, turn_seconds=clock)
    private = client.create_game(["ann", {"open": True}], turn_seconds=clock)
    gid = game["game_id"]
    tables = client.lobby(players=2, turn_seconds=clock)["tables"]
    assert [t["game_id"] for t in tables] == [gid], "the private game is not listed"
    (table,) = tables
    assert (table["players"], table["open_seats"], table["rated"]) == (["ann"], 1, False)
    assert table["turn_seconds"] == clock and table["rules"]["preset"] == "standard"
    assert listed(client, gid, preset="standard") == [table]
    assert listed(client, gid, players=3, turn_seconds=clock) == []
    client.join(gid, game["seats"][1]["invite"], "bo")
    assert listed(client, gid, turn_seconds=clock) == []
    assert private["game_id"] not in [t["game_id"] for t in client.lobby()["tables"]]
    with pytest.raises(Unprocessable) as refused:
        client.lobby(players=1)
    assert refused.value.code == "validation_failed"


def test_seeks_fill_the_oldest_table_of_their_kind(client: Client) -> None:
    clock = unique_clock()
    ann, bo = client.create_player("ann"), client.create_player("bo")
    key = new_idempotency_key()
    first = client.seek(
        "ann", 3, turn_seconds=clock, player_token=ann["player_token"], idempotency_key=key
    )
    gid = first["game_id"]
    assert first["seat"] == 0 and first["table_token"]
    again = client.seek(
        "ann", 3, turn_seconds=clock, player_token=ann["player_token"], idempotency_key=key
    )
    assert again == first, "the retry: the same seat"
    with pytest.raises(Conflict) as seated:
        client.seek("ann", 3, turn_seconds=clock, player_token=ann["player_token"])
    assert seated.value.code == "already_seated" and seated.value.body["game_id"] == gid
    second = client.seek("bo", 3, turn_seconds=clock, player_token=bo["player_token"])
    assert (second["game_id"], second["seat"]) == (gid, 1)
    assert "table_token" not in second, "only the seek that made the table runs it"
    assert listed(client, gid, players=3, turn_seconds=clock)[0]["players"] == ["ann", "bo"]
    third = client.seek("cy", 3, turn_seconds=clock)
    assert (third["game_id"], third["seat"]) == (gid, 2)
    view = eventually(
        lambda: client.view(gid, token=third["token"]), lambda v: v["status"] == "in_round"
    )
    assert view["status"] == "in_round", "a full seek table deals by itself"
    assert listed(client, gid, turn_seconds=clock) == []
    with pytest.raises(Unprocessable) as rated:
        client.seek("dee", 3, turn_seconds=clock, rated=True)
    assert rated.value.code == "unrated_seat"


def test_a_seek_table_gives_its_open_seats_to_bots_after_the_wait(client: Client) -> None:
    seat = client.seek("ann", 3, turn_seconds=unique_clock(), fill_with_bots_after=1)
    view = eventually(lambda: client.view(seat["game_id"]), lambda v: v["status"] == "in_round")
    assert view["status"] == "in_round"
    assert [p["bot"] for p in view["players"]] == [None, "planner", "planner"]


# -- rematch -------------------------------------------------------------------------------


def test_a_rematch_comes_after_the_game_once_per_seat(client: Client) -> None:
    game = client.create_game(["ann", {"name": "cpu", "bot": "random"}], options=SHORT)
    gid, ann, table = game["game_id"], game["seats"][0]["token"], game["table_token"]
    with pytest.raises(Conflict) as early:
        client.rematch(gid, token=ann)
    assert early.value.code == "game_not_over"
    final = play_out(client, gid, {0: ann}, table, seed=7)["version"]
    with pytest.raises(StaleVersion) as stale:
        client.rematch(gid, token=ann, if_match=final - 1)
    assert stale.value.view is not None and stale.value.view["status"] == "game_over"
    mine = client.rematch(gid, token=ann, if_match=final)
    new = mine["game_id"]
    assert new != gid and mine["seat"] == 0
    assert client.rematch(gid, token=ann) == mine, "asked again: the same answer"
    assert client.rematch(gid, token=table) == {"game_id": new, "table_token": table}
    with pytest.raises(Forbidden) as host:
        client.rematch(gid, token=game["host_token"])
    assert host.value.code == "not_a_seat"
    log = client.events_page(gid, after=final)["entries"]
    assert [e["action"] for e in log] == [{"action": "rematch", "game_id": new}]
    view = client.view(new, token=mine["token"])
    assert view["rules"] == client.view(gid)["rules"] and "hand" in view
    assert [p["bot"] for p in view["players"]] == [None, "random"]


# -- webhooks ------------------------------------------------------------------------------


def test_webhooks_are_registered_told_and_removed(client: Client) -> None:
    ann, bo = client.create_player("ann"), client.create_player("bo")
    pid, token = ann["player_id"], ann["player_token"]
    with receiver() as got:
        url = f"{got.url}/turns"
        key = new_idempotency_key()
        hook = client.create_webhook(
            pid, url, token=token, events=["your_turn"], idempotency_key=key
        )
        assert (
            client.create_webhook(pid, url, token=token, events=["your_turn"], idempotency_key=key)
            == hook
        )
        listed = client.webhooks(pid, token=token)["webhooks"]
        assert listed == [{"webhook_id": hook["webhook_id"], "url": url, "events": ["your_turn"]}]
        with pytest.raises(Forbidden) as other:
            client.webhooks(pid, token=bo["player_token"])
        assert other.value.code == "not_this_player"
        with pytest.raises(Unprocessable) as private:
            client.create_webhook(pid, "https://10.0.0.7/turns", token=token)
        assert private.value.code == "webhook_url_not_allowed"
        # ann holds seat 0; the table deals, and the first turn that is ann's is told.
        game = client.create_game([{"name": "ann", "player_token": token}, "bo"], options=SHORT)
        gid, bo_seat = game["game_id"], game["seats"][1]["token"]
        view = client.deal(gid, token=game["table_token"])
        rng = random.Random(1)
        while view["turn"] != 0:
            view = client.move(
                gid, rng.choice(client.legal_moves(gid, token=bo_seat)["moves"]), token=bo_seat
            )
        told = got.next()
        body = Webhook(hook["secret"]).verify(told.body, told.headers)
        assert told.path == "/turns" and body["type"] == "your_turn"
        assert body["data"] == {"game_id": gid, "seat": 0, "version": view["version"]}
    client.delete_webhook(pid, hook["webhook_id"], token=token)
    assert client.webhooks(pid, token=token) == {"webhooks": []}
    with pytest.raises(NotFound) as gone:
        client.delete_webhook(pid, hook["webhook_id"], token=token)
    assert gone.value.code == "webhook_not_found"


# -- the README ----------------------------------------------------------------------------


def test_the_readme_examples_run(base: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Every example of the README's sections (the introduction's plays a whole game of the
    standard preset) against a live server, with what each prints."""
    text = README.read_text(encoding="utf-8")
    sections = text[text.index("\n## ") :]
    examples = re.findall(r"^```python\n(.*?)^```", sections, re.MULTILINE | re.DOTALL)
    assert len(examples) == 7
    for n, example in enumerate(examples):
        assert README_BASE in example
        code = compile(example.replace(README_BASE, base), f"README example {n + 1}", "exec")
        exec(code, {})
    printed = capsys.readouterr().out
    for expected in ("{'action': 'create'}", "transfer_used", "webhook_url_not_allowed"):
        assert expected in printed
    assert "[True, False]" in printed, "presence: ann asked, bo did not"


def test_a_webhook_removal_whose_answer_was_lost_is_done(base: str) -> None:
    """The DELETE reaches the service and its answer is lost: the client's retry meets 404
    webhook_not_found (the service keeps no answer of a removal), which is the removal done,
    not an error for the caller. A webhook that never was stays 404."""
    with faulty_proxy(base) as (url, faults), Client(url) as client:
        me = client.create_player("ann")
        pid, token = me["player_id"], me["player_token"]
        hook = client.create_webhook(pid, "http://127.0.0.1:9/turns", token=token)
        faults.seen_keys.clear()
        faults.plan = ["drop"]
        client.delete_webhook(pid, hook["webhook_id"], token=token)
        assert len(faults.seen_keys) == 2  # the DELETE whose answer was lost, then its retry
        assert client.webhooks(pid, token=token)["webhooks"] == []
        with pytest.raises(NotFound) as unknown:
            client.delete_webhook(pid, hook["webhook_id"], token=token)
        assert unknown.value.code == "webhook_not_found"


def test_a_webhook_removal_carries_no_idempotency_key(base: str) -> None:
    """The API takes no Idempotency-Key on a DELETE and keeps no answer of a removal: a key
    sent there would promise a replay the service never makes. The removal is safe to repeat
    by its method."""
    with faulty_proxy(base) as (url, faults), Client(url) as client:
        me = client.create_player("ann")
        pid, token = me["player_id"], me["player_token"]
        hook = client.create_webhook(pid, "http://127.0.0.1:9/turns", token=token)
        faults.seen_keys.clear()
        client.delete_webhook(pid, hook["webhook_id"], token=token)
        assert faults.seen_keys == [None]
        assert client.webhooks(pid, token=token)["webhooks"] == []


def test_a_removal_refused_429_then_met_404_is_not_found(base: str) -> None:
    """A 429 applied nothing, so the 404 its retry meets is the answer to this call alone: a
    webhook that never was is NotFound, not a removal taken as done."""
    with faulty_proxy(base) as (url, faults), Client(url) as client:
        me = client.create_player("ann")
        pid, token = me["player_id"], me["player_token"]
        faults.seen_keys.clear()
        forwarded = faults.forwarded
        faults.plan = ["429"]
        with pytest.raises(NotFound) as unknown:
            client.delete_webhook(pid, "wh_neverwasthere0000", token=token)
        assert unknown.value.code == "webhook_not_found"
        assert len(faults.seen_keys) == 2  # refused by the proxy, then answered by the service
        assert faults.forwarded == forwarded + 1
