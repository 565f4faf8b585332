"""A reader that resumes past the game's stored log (Redis lost the entries it was sent: a
restart from an AOF that missed its last second) is told so at once, `409 after_ahead_of_log`
with the stored version, in every form of ``GET /events``; never held, and never sent the
entries written anew at those versions as if it had the ones before them. A reader that is only
fast (it learnt a version from another instance) is never refused."""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Callable, Iterator

import pytest
import redis
import requests
from mexican_train_client import Client, LogRewound, Media

from devstack.redis_server import RedisServer
from service.store import keys
from tests.eventually import eventually
from tests.live.helpers import NDJSON, SSE, Game, auth, create, play_turn, sse_entries, view

#: Half the long-poll's 30 s wait: a refusal held for the wait fails on this read timeout (a
#: bound on a hang, generous for a loaded machine; the test asserts no speed).
READ_TIMEOUT_SECONDS = 15.0


def move(base: str, game: Game, rng: random.Random) -> None:
    token = game.tokens[view(base, game.id)["turn"]]
    assert token is not None
    assert play_turn(base, game.id, token, rng) is not None


@contextlib.contextmanager
def lost_changes(
    redis_server: RedisServer,
    base: str,
    game: Game,
    n: int,
    sent: Callable[[int], bool] = lambda _top: True,
) -> Iterator[int]:
    """The game's last ``n`` changes lost by Redis after they were made (its keys put back as
    they were before them, once ``sent`` says a reader had the newest); yields the version they
    had reached."""
    client = redis.Redis.from_url(redis_server.url)
    saved = [(key, client.dump(key)) for key in (keys.game_key(game.id), keys.log_key(game.id))]
    rng = random.Random(3)
    for _ in range(n):
        move(base, game, rng)
    top = view(base, game.id)["version"]
    eventually(lambda: sent(top), 10, "the reader never had the entries Redis loses")
    for key, dumped in saved:
        assert isinstance(dumped, bytes)
        client.restore(key, 0, dumped, replace=True)
    client.close()
    yield top


def refused(response: requests.Response, stored: int) -> None:
    assert response.status_code == 409, (response.status_code, response.text[:200])
    assert response.headers["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert (body["code"], body["version"]) == ("after_ahead_of_log", stored)
    assert "after=0" in body["detail"]


def test_a_reader_past_the_stored_log_is_refused_at_once_in_every_form(
    live: str, redis_server: RedisServer
) -> None:
    game = Game(create(live, players=["ann", "bo"], auto_deal=True, seed=11))
    stored = view(live, game.id)["version"]
    url = f"{live}/api/v1/games/{game.id}/events"
    with lost_changes(redis_server, live, game, 3) as top:
        assert view(live, game.id)["version"] == stored < top
        asks = [
            ({}, {"after": top}),
            ({}, {"after": top, "wait": 30}),
            ({"Accept": SSE, "Last-Event-ID": str(top)}, {}),
            ({"Accept": SSE}, {"after": stored + 1}),
            ({"Accept": NDJSON}, {"after": top}),
        ]
        for token in (None, game.tokens[0]):
            for headers, params in asks:
                with requests.get(
                    url,
                    headers=headers | auth(token),
                    params=params,
                    stream=True,
                    timeout=(5, READ_TIMEOUT_SECONDS),
                ) as response:
                    refused(response, stored)
        # At the stored version the reader has all there is: a page, not a refusal.
        page = requests.get(url, params={"after": stored}, timeout=10)
        assert page.status_code == 200, page.text
        assert page.json()["entries"] == []


def test_a_reader_fast_from_another_instance_is_never_refused(
    live_pair: tuple[str, str],
) -> None:
    """Each version is learnt from a move's answer on one instance and asked for at once on the
    other, whose process follows the game (an open stream) and may not have heard of it yet:
    the stored version decides, not that process's copy."""
    mover, reader = live_pair
    game = Game(create(mover, players=["ann", "bo"], auto_deal=True, seed=12))
    rng, url = random.Random(12), f"{reader}/api/v1/games/{game.id}/events"
    stop = threading.Event()

    def hold_a_stream() -> None:
        with requests.get(url, headers={"Accept": SSE}, stream=True, timeout=60) as r:
            for _ in sse_entries(r):
                if stop.is_set():
                    return

    threading.Thread(target=hold_a_stream, daemon=True).start()
    try:
        for _ in range(15):
            move(mover, game, rng)
            version = view(mover, game.id)["version"]
            page = requests.get(url, params={"after": version, "wait": 0}, timeout=10)
            assert page.status_code == 200, page.text
            with requests.get(
                url, headers={"Accept": SSE, "Last-Event-ID": str(version)}, stream=True, timeout=10
            ) as stream:
                assert stream.status_code == 200, stream.text
    finally:
        stop.set()
        move(mover, game, rng)  # the holding stream's loop looks at ``stop`` with an entry


@pytest.mark.parametrize("media", [Media.SSE, Media.NDJSON])
def test_the_python_client_raises_log_rewound_with_the_stored_version(
    live: str, redis_server: RedisServer, media: Media
) -> None:
    """The client followed the game to version ``top``; Redis lost the last three. Its stream
    ends, and the client's resumption from ``top`` is refused: ``events`` raises
    :class:`LogRewound` (before, it waited on for entries that would never be the ones it
    missed), and so does a page from there."""
    game = Game(create(live, players=["ann", "bo"], auto_deal=True, seed=13))
    got: list[int] = []
    raised: list[Exception] = []
    with Client(live) as client:

        def follow() -> None:
            try:
                got.extend(e["version"] for e in client.events(game.id, media=media))
            except Exception as err:  # what the reader's caller would see
                raised.append(err)

        threading.Thread(target=follow, daemon=True).start()
        with lost_changes(redis_server, live, game, 3, lambda top: top in got) as top:
            stored = view(live, game.id)["version"]
            eventually(lambda: bool(raised), 15, "the client waits on after Redis lost entries")
            assert isinstance(raised[0], LogRewound), raised
            assert (raised[0].code, raised[0].version) == ("after_ahead_of_log", stored)
            with pytest.raises(LogRewound):
                client.events_page(game.id, after=top)
