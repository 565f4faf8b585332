"""The second security review's findings, each driven through the real stack (nginx, the API
and streams pools, the background worker, Redis): revocation reaching open streams, scoped
tokens and stream tickets, bounded streams and logs, header digits, retry-safe joins, no
credential in clear in Redis, and samples counted by their cost."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import requests

from devstack.stack import Stack, build_stack
from service.store import keys
from tests.e2e.nginx import ensure_nginx
from tests.e2e.test_limits import assert_problem, session_from
from tests.live.helpers import NDJSON, SSE, auth, create, entries, play_turn, sse_entries, view

pytestmark = pytest.mark.e2e

STREAMS_PER_ADDRESS = 20
STREAM_MAX_SECONDS = 6
RATE_LIMIT = 1000


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    ensure_nginx()
    env = {
        "STREAMS_PER_ADDRESS": str(STREAMS_PER_ADDRESS),
        "STREAM_MAX_SECONDS": str(STREAM_MAX_SECONDS),
        "RATE_LIMIT_PER_MINUTE": str(RATE_LIMIT),
    }
    with build_stack(tmp_path_factory.mktemp("security"), env) as built:
        yield built


def api(stack: Stack, gid: str, path: str = "") -> str:
    return f"{stack.url}/api/v1/games/{gid}{path}"


def ticket(stack: Stack, gid: str, token: str) -> str:
    r = requests.post(api(stack, gid, "/stream-tickets"), headers=auth(token), timeout=10)
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    assert set(body) == {"ticket", "expires_at"}
    return str(body["ticket"])


def open_stream(
    stack: Stack, gid: str, *, media: str = SSE, after: int = 0, **params: Any
) -> requests.Response:
    return requests.get(
        api(stack, gid, "/events"),
        params={"after": after, **params},
        headers={"Accept": media},
        stream=True,
        timeout=30,
    )


class Reader(threading.Thread):
    """Reads one SSE or NDJSON stream to its end, keeping every entry and when it ended."""

    def __init__(self, response: requests.Response, media: str) -> None:
        super().__init__(daemon=True)
        self.response, self.media = response, media
        self.got: list[dict[str, Any]] = []
        self.ended = threading.Event()
        self.start()

    def run(self) -> None:
        with self.response as r:
            lines = sse_entries(r) if self.media == SSE else _ndjson(r)
            try:
                for entry in lines:
                    self.got.append(entry)
            except requests.RequestException:
                pass
        self.ended.set()


def _ndjson(r: requests.Response) -> Iterator[dict[str, Any]]:
    import orjson

    for raw in r.iter_lines():
        if raw.strip() and b'"type":"presence"' not in raw:
            yield orjson.loads(raw)


def drawn_tiles(entry: dict[str, Any], seat: int) -> list[Any]:
    return [
        e["tile"]
        for e in entry["events"]
        if e["type"] == "tile_drawn" and e["seat"] == seat and "tile" in e
    ]


# --------------------------------------------------------------- 1. revocation on open streams


@pytest.mark.parametrize("how", ["header", "ticket"])
def test_a_revoked_seats_open_stream_sees_none_of_the_new_occupants_tiles(
    stack: Stack, how: str
) -> None:
    created = create(stack.url, players=["ann", "bo"], seed=11)
    gid, old = created["game_id"], created["seats"][1]["token"]
    table = created["table_token"]
    requests.post(api(stack, gid, "/deal"), headers=auth(table), timeout=10).raise_for_status()
    if how == "header":
        r = requests.get(
            api(stack, gid, "/events"),
            headers={"Accept": SSE, **auth(old)},
            stream=True,
            timeout=30,
        )
        reader = Reader(r, SSE)
    else:
        reader = Reader(
            open_stream(stack, gid, media=NDJSON, access_token=ticket(stack, gid, old)), NDJSON
        )
    time.sleep(0.5)
    # The table reopens seat 1, and someone else takes it.
    reopened = requests.put(
        api(stack, gid, "/seats/1"), json={"open": True}, headers=auth(table), timeout=10
    ).json()
    changed_at = reopened["version"]
    joined = requests.post(
        api(stack, gid, "/join"),
        json={"invite": reopened["changed"]["invite"], "name": "cy"},
        timeout=10,
    )
    assert joined.status_code == 201, joined.text
    new = joined.json()["token"]
    tokens, rng, draws = [created["seats"][0]["token"], new], random.Random(3), 0
    while draws < 3 and view(stack.url, gid)["status"] == "in_round":
        turn = view(stack.url, gid)["turn"]
        moved = play_turn(stack.url, gid, tokens[turn], rng)
        if moved is not None and turn == 1:
            draws += sum(1 for e in moved["events"] if e["type"] == "tile_drawn")
    assert draws >= 1, "the new occupant drew no tile: the test proves nothing"
    assert reader.ended.wait(10), "the revoked stream stayed open"
    versions = [e["version"] for e in reader.got]
    assert versions and versions[-1] == changed_at, versions[-5:]
    assert not any(drawn_tiles(e, 1) for e in reader.got if e["version"] > changed_at)
    assert requests.get(api(stack, gid), headers=auth(old), timeout=10).status_code == 401
    refused = requests.post(api(stack, gid, "/stream-tickets"), headers=auth(old), timeout=10)
    assert_problem(refused, 401, "invalid_token")


def test_a_ticket_issued_before_the_seat_was_taken_opens_nothing(stack: Stack) -> None:
    created = create(stack.url, players=["ann", "bo"])
    gid, old, table = created["game_id"], created["seats"][1]["token"], created["table_token"]
    spare = ticket(stack, gid, old)
    put = requests.put(
        api(stack, gid, "/seats/1"), json={"bot": "random"}, headers=auth(table), timeout=10
    )
    assert put.status_code == 200, put.text
    assert_problem(open_stream(stack, gid, access_token=spare), 401, "invalid_token")


# --------------------------------------------------------------- scoped tokens and tickets


def test_the_table_token_runs_the_table_and_sees_only_the_public_view(stack: Stack) -> None:
    created = create(stack.url, players=["ann", {"open": True}], seed=4)
    gid, table = created["game_id"], created["table_token"]
    assert table not in (created["host_token"], created["seats"][0]["token"])
    put = requests.put(
        api(stack, gid, "/seats/1"), json={"bot": "greedy"}, headers=auth(table), timeout=10
    )
    assert put.status_code == 200, put.text
    dealt = requests.post(api(stack, gid, "/deal"), headers=auth(table), timeout=10)
    assert dealt.status_code == 200, dealt.text
    assert "hand" not in dealt.json() and "hand" not in view(stack.url, gid, table)
    position = requests.get(api(stack, gid, "/position"), headers=auth(table), timeout=10)
    assert_problem(position, 403, "not_host")
    history = requests.get(api(stack, gid, "/history"), headers=auth(table), timeout=10)
    assert_problem(history, 403, "not_host")
    page = entries(stack.url, gid, table)["entries"]
    assert page and not any(
        "tile" in e for entry in page for e in entry["events"] if e["type"] == "tile_drawn"
    )
    seat = requests.post(api(stack, gid, "/deal"), headers=auth(created["seats"][0]["token"]))
    assert_problem(seat, 403, "not_host")


def test_a_stream_ticket_is_single_use_short_lived_and_undeprecated(stack: Stack) -> None:
    created = create(stack.url, players=["ann", "bo"])
    gid, token = created["game_id"], created["seats"][0]["token"]
    first = ticket(stack, gid, token)
    with open_stream(stack, gid, access_token=first) as r:
        assert r.status_code == 200 and "Deprecation" not in r.headers
    assert_problem(open_stream(stack, gid, access_token=first), 401, "invalid_token")
    expiring = ticket(stack, gid, token)
    client = redis.Redis.from_url(stack.redis.url)
    assert client.pexpire(keys.ticket_key(gid, expiring), 1)
    time.sleep(0.05)
    assert_problem(open_stream(stack, gid, access_token=expiring), 401, "invalid_token")
    # A token in the URL still works for existing clients, marked deprecated (RFC 9745).
    with open_stream(stack, gid, access_token=token) as r:
        assert r.status_code == 200 and r.headers["Deprecation"].startswith("@")
    no_token = requests.post(api(stack, gid, "/stream-tickets"), timeout=10)
    assert_problem(no_token, 401, "missing_token")


# --------------------------------------------------------------- 4. bounded streams


def hold_every_slot(session: requests.Session, url: str) -> list[requests.Response]:
    """Open as many streams of ``url`` as one address may hold."""
    held = [
        session.get(url, headers={"Accept": SSE}, stream=True, timeout=30)
        for _ in range(STREAMS_PER_ADDRESS)
    ]
    assert [r.status_code for r in held] == [200] * STREAMS_PER_ADDRESS
    return held


def test_one_address_holds_at_most_its_share_of_open_streams(stack: Stack) -> None:
    gid = create(stack.url, players=["ann", "bo"])["game_id"]
    with session_from("127.0.0.3") as s:
        url = api(stack, gid, "/events")
        held = hold_every_slot(s, url)
        refused = s.get(url, headers={"Accept": SSE}, stream=True, timeout=30)
        assert_problem(refused, 429, "rate_limited")
        assert int(refused.headers["Retry-After"]) >= 1
        held.pop().close()
        deadline = time.monotonic() + STREAM_MAX_SECONDS + 5
        while True:  # the closed stream's slot is given back once its server notices
            again = s.get(url, headers={"Accept": SSE}, stream=True, timeout=30)
            if again.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert again.status_code == 200
        for r in [*held, again]:
            r.close()
    # Another address is not held back by this one's streams.
    with open_stream(stack, gid) as r:
        assert r.status_code == 200


def test_a_head_request_of_a_stream_holds_no_slot(stack: Stack) -> None:
    # A HEAD's body is never read, so a slot given back only when the stream's body ends would
    # be held until the longest life of a stream has passed.
    gid = create(stack.url, players=["ann", "bo"])["game_id"]
    with session_from("127.0.0.4") as s:
        url = api(stack, gid, "/events")
        for media in (SSE, NDJSON) * STREAMS_PER_ADDRESS:
            head = s.head(url, headers={"Accept": media}, timeout=30)
            assert head.status_code == 200, head.headers
        with s.get(url, headers={"Accept": SSE}, stream=True, timeout=30) as r:
            assert r.status_code == 200


def test_a_stream_refused_for_its_address_spends_no_ticket(stack: Stack) -> None:
    created = create(stack.url, players=["ann", "bo"])
    gid, token = created["game_id"], created["seats"][0]["token"]
    kept = ticket(stack, gid, token)
    with session_from("127.0.0.5") as s:
        url = api(stack, gid, "/events")
        held = hold_every_slot(s, url)
        refused = s.get(url, params={"access_token": kept}, headers={"Accept": SSE}, timeout=30)
        assert_problem(refused, 429, "rate_limited")
        for r in held:
            r.close()
    with open_stream(stack, gid, access_token=kept) as r:  # from another address
        assert r.status_code == 200


def test_a_stream_ends_after_its_lifetime_and_resumes_where_it_left_off(stack: Stack) -> None:
    created = create(stack.url, players=["ann", "bo"])
    gid, table = created["game_id"], created["table_token"]
    requests.post(api(stack, gid, "/deal"), headers=auth(table), timeout=10).raise_for_status()
    started = time.monotonic()
    reader = Reader(open_stream(stack, gid), SSE)
    assert reader.ended.wait(STREAM_MAX_SECONDS + 5), "the stream outlived its lifetime"
    lasted = time.monotonic() - started
    assert STREAM_MAX_SECONDS - 1 <= lasted <= STREAM_MAX_SECONDS + 5, lasted
    last = reader.got[-1]["version"]
    rng = random.Random(1)
    play_turn(stack.url, gid, created["seats"][view(stack.url, gid)["turn"]]["token"], rng)
    resumed = requests.get(
        api(stack, gid, "/events"),
        headers={"Accept": SSE, "Last-Event-ID": str(last)},
        stream=True,
        timeout=30,
    )
    with resumed:
        first = next(sse_entries(resumed))
    assert first["version"] == last + 1


def test_a_stream_of_a_game_that_is_gone_ends(stack: Stack) -> None:
    gid = create(stack.url, players=["ann", "bo"])["game_id"]
    reader = Reader(open_stream(stack, gid), SSE)
    time.sleep(0.5)
    client = redis.Redis.from_url(stack.redis.url)
    client.delete(keys.game_key(gid), keys.log_key(gid))  # as when it expires
    assert reader.ended.wait(5), "the stream of a gone game sent keep-alives on"


def test_a_stream_opened_past_the_last_entry_is_refused_at_once(stack: Stack) -> None:
    """No stream is held for an entry the log does not have: past its last one, in play or
    over, the answer is 409 after_ahead_of_log with the stored version, through nginx too."""
    players = ["ann", {"name": "cpu", "bot": "greedy"}]
    created = create(stack.url, players=players, auto_deal=True, options={"rounds": 1})
    gid, token, rng = created["game_id"], created["seats"][0]["token"], random.Random(2)
    refused = [open_stream(stack, gid, after=100_000, media=media) for media in (SSE, NDJSON)]
    while view(stack.url, gid)["status"] != "game_over":
        play_turn(stack.url, gid, token, rng)
    refused.append(open_stream(stack, gid, after=100_000))
    final = view(stack.url, gid)["version"]
    for answer in refused:
        with answer:
            assert_problem(answer, 409, "after_ahead_of_log")
            assert 0 < answer.json()["version"] <= final


# --------------------------------------------------------------- 6. bounded log


def test_seat_changes_that_change_nothing_add_nothing_and_are_bounded(stack: Stack) -> None:
    created = create(stack.url, players=["ann", "bo"])
    gid, table = created["game_id"], created["table_token"]
    url, before = api(stack, gid, "/seats/1"), view(stack.url, gid)["version"]
    answers = [
        requests.put(url, json={"bot": "random"}, headers=auth(table), timeout=10)
        for _ in range(30)
    ]
    assert {r.status_code for r in answers} == {200}
    assert view(stack.url, gid)["version"] == before + 1, "one entry for the one change"
    levels = ["greedy", "random"]
    changes = [
        requests.put(url, json={"bot": levels[i % 2]}, headers=auth(table), timeout=10)
        for i in range(199)  # with the first: 200 in all
    ]
    assert {r.status_code for r in changes} == {200}
    refused = requests.put(url, json={"bot": "planner"}, headers=auth(table), timeout=10)
    assert_problem(refused, 409, "too_many_seat_changes")
    assert view(stack.url, gid)["version"] == before + 200


def test_no_seat_change_after_the_game_and_pages_of_entries_are_bounded(stack: Stack) -> None:
    bots = [{"name": f"b{i}", "bot": "random"} for i in range(4)]
    created = create(stack.url, players=bots, auto_deal=True)  # every round: 1,000s of entries
    gid, table = created["game_id"], created["table_token"]
    deadline = time.monotonic() + 60
    while view(stack.url, gid)["status"] != "game_over":
        assert time.monotonic() < deadline, "the bots' game did not finish"
        time.sleep(0.3)
    refused = requests.put(
        api(stack, gid, "/seats/1"), json={"bot": "greedy"}, headers=auth(table), timeout=10
    )
    assert_problem(refused, 409, "game_over")
    total = view(stack.url, gid)["version"]
    assert total > 500, "a game long enough to need a second page"
    first = requests.get(api(stack, gid, "/events"), timeout=10).json()
    assert len(first["entries"]) == 500 and first["more"] is True
    assert entries(stack.url, gid, limit=10)["entries"][-1]["version"] == 10
    whole = entries(stack.url, gid)
    assert [e["version"] for e in whole["entries"]] == list(range(1, total + 1))
    too_many = requests.get(api(stack, gid, "/events"), params={"limit": 501}, timeout=10)
    assert_problem(too_many, 422, "validation_failed")


# --------------------------------------------------------------- 7. header digits


# Header bytes are Latin-1: "²" arrives as the one character U+00B2, which str.isdigit takes.
@pytest.mark.parametrize("raw", ["²", "1²", "¹²", "-1", "12345678901234"])
def test_a_last_event_id_that_is_no_version_is_ignored(stack: Stack, raw: str) -> None:
    gid = create(stack.url, players=["ann", "bo"])["game_id"]
    r = requests.get(
        api(stack, gid, "/events"),
        headers={"Accept": SSE, "Last-Event-ID": raw},
        stream=True,
        timeout=10,
    )
    with r:
        assert r.status_code == 200
        assert next(sse_entries(r))["version"] == 1  # from `after` (0), as without the header


# --------------------------------------------------------------- 8, 9. retries and secrets


def test_a_join_retried_with_its_key_gets_the_same_seat_and_token(stack: Stack) -> None:
    created = create(stack.url, players=["ann", {"open": True}])
    gid, invite = created["game_id"], created["seats"][1]["invite"]
    body = {"invite": invite, "name": "bo"}
    key = {"Idempotency-Key": '"join-bo-6f1d2c9e-4b7a-4e21"'}
    first = requests.post(api(stack, gid, "/join"), json=body, headers=key, timeout=10)
    again = requests.post(api(stack, gid, "/join"), json=body, headers=key, timeout=10)
    assert (first.status_code, again.status_code) == (201, 201), again.text
    assert again.json() == first.json() and again.headers["Idempotent-Replayed"] == "true"
    assert requests.get(api(stack, gid), headers=auth(first.json()["token"])).status_code == 200
    other = requests.post(
        api(stack, gid, "/join"),
        json=body,
        headers={"Idempotency-Key": '"join-other-0d3b8a51-97c4"'},
        timeout=10,
    )
    assert_problem(other, 409, "invite_used")


def test_no_token_invite_or_ticket_is_kept_in_clear_in_redis(stack: Stack) -> None:
    created = create(stack.url, players=["ann", {"open": True}])
    gid, table = created["game_id"], created["table_token"]
    join_key = {"Idempotency-Key": '"join-cy-2a9e71f0-c35d-4b8e"'}
    joined = requests.post(
        api(stack, gid, "/join"),
        json={"invite": created["seats"][1]["invite"], "name": "cy"},
        headers=join_key,
        timeout=10,
    ).json()
    keyed = {**auth(table), "Idempotency-Key": '"reopen-1"'}
    reopened = requests.put(
        api(stack, gid, "/seats/1"), json={"open": True}, headers=keyed, timeout=10
    )
    again = requests.put(api(stack, gid, "/seats/1"), json={"open": True}, headers=keyed)
    assert again.json() == reopened.json(), "the kept answer replays, invite included"
    spare = ticket(stack, gid, created["seats"][0]["token"])
    secrets = {
        created["host_token"],
        table,
        created["seats"][0]["token"],
        created["seats"][1]["invite"],
        joined["token"],
        reopened.json()["changed"]["invite"],
        spare,
    }
    leaks = [
        (name, s[:6]) for name, value in redis_values(stack) for s in secrets if s.encode() in value
    ]
    assert not leaks, leaks


def redis_values(stack: Stack) -> Iterator[tuple[bytes, bytes]]:
    """Every key of the stack's Redis with the bytes of its value, whatever its type."""
    client = redis.Redis.from_url(stack.redis.url)
    for name in client.scan_iter(count=1000):
        kind = client.type(name)
        if kind == b"string":
            yield name, client.get(name) or b""
        elif kind == b"hash":
            yield name, b"".join(k + v for k, v in client.hgetall(name).items())
        elif kind == b"list":
            yield name, b"".join(client.lrange(name, 0, -1))
        elif kind == b"zset":
            yield name, b"".join(client.zrange(name, 0, -1))
        elif kind == b"stream":
            yield name, repr(client.xrange(name)).encode()


# --------------------------------------------------------------- 10. samples by their cost


def test_samples_count_as_many_requests_as_they_deal(stack: Stack) -> None:
    created = create(stack.url, players=["ann", "bo"])
    gid, token, table = created["game_id"], created["seats"][0]["token"], created["table_token"]
    requests.post(api(stack, gid, "/deal"), headers=auth(table), timeout=10).raise_for_status()
    url = api(stack, gid, "/samples")
    answers = [
        requests.get(url, params={"n": 100}, headers=auth(token), timeout=30).status_code
        for _ in range(RATE_LIMIT // 100 + 1)
    ]
    assert answers[:-1] == [200] * (RATE_LIMIT // 100) and answers[-1] == 429, answers


# --------------------------------------------------------------- 2. the costliest bots are capped


def test_a_table_holds_at_most_four_hard_bots(stack: Stack) -> None:
    five = [{"name": f"h{i}", "bot": "hard"} for i in range(5)]
    r = requests.post(stack.url + "/api/v1/games", json={"players": five}, timeout=10)
    assert_problem(r, 422, "validation_failed")
    four = [*five[:4], "ann"]
    created = create(stack.url, players=four)
    gid, table = created["game_id"], created["table_token"]
    put = requests.put(
        api(stack, gid, "/seats/4"), json={"bot": "hard"}, headers=auth(table), timeout=10
    )
    assert_problem(put, 422, "too_many_bots")
    assert view(stack.url, gid)["players"][4]["bot"] is None


def test_a_204_through_nginx_names_no_content_type(stack: Stack) -> None:
    """nginx passes the app's 204 on as it is, with no Content-Type (a 204 has no content)."""
    made = requests.post(f"{stack.url}/api/v1/players", json={"name": "ann"}, timeout=10)
    assert made.status_code == 201, made.text
    player = made.json()
    hooks = f"{stack.url}/api/v1/players/{player['player_id']}/webhooks"
    # A public address: nothing to look up, and nothing is sent to it before its removal.
    hook = requests.post(
        hooks,
        json={"url": "https://8.8.8.8/turns"},
        headers=auth(player["player_token"]),
        timeout=10,
    )
    assert hook.status_code == 201, hook.text
    removed = requests.delete(
        f"{hooks}/{hook.json()['webhook_id']}", headers=auth(player["player_token"]), timeout=10
    )
    assert removed.status_code == 204, removed.text
    assert "Content-Type" not in removed.headers, removed.headers
    assert removed.content == b""
