"""The web table after Redis lost entries it showed (its stored log went back: a restart from an
AOF that missed its last second): it starts over from the game as stored, and follows the game
from there, rather than showing the lost entries and waiting for a version it already holds."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from playwright.sync_api import expect

from devstack.redis_server import RedisServer
from service.store import keys
from tests.browser.harness import Pages
from tests.browser.table import create_game, hold_seat, wait_shown
from tests.live.helpers import play_turn

#: The stream's end (the hub's next look, about a second), the browser's reconnection, refused,
#: and the page's next poll of the view (3 s) fit well within this.
STARTS_OVER_MS = 20_000


@pytest.mark.parametrize("reader", ["public", "seat"])
def test_a_table_showing_lost_entries_starts_over_from_the_stored_game(
    reader: str,
    table_server: str,
    redis_server: RedisServer,
    new_page: Pages,
    screenshot: Callable[..., Path],
) -> None:
    game = create_game(table_server, {"players": ["ann", "bo"], "auto_deal": True, "seed": 21})
    rng = random.Random(21)

    def move() -> None:
        token = game.tokens[game.api("GET")["turn"]]
        assert token is not None and play_turn(table_server, game.game_id, token, rng)

    page = new_page(viewport={"width": 1280, "height": 800})
    # The browser notes each refused resumption (its stream's, the page's own look at the log).
    new_page.log(page).allow(r"status of 409 .*/events\?after=")
    refused_streams: list[str] = []
    page.on(
        "response",
        lambda r: (
            r.status == 409
            and "text/event-stream" in (r.request.headers.get("accept") or "")
            and refused_streams.append(r.url)
        ),
    )
    if reader == "seat":  # its stream's every connection has a ticket of its own
        hold_seat(page, game, 1)
    else:
        page.goto(f"{table_server}/#/game/{game.game_id}")
    move()
    stored = game.version()
    wait_shown(page, stored)
    client = redis.Redis.from_url(redis_server.url)
    game_keys = (keys.game_key(game.game_id), keys.log_key(game.game_id))
    saved = [(key, client.dump(key)) for key in game_keys]
    for _ in range(3):
        move()
    wait_shown(page, stored + 3)
    expect(page.locator(f'.log-lines li[data-version="{stored + 3}"]')).to_have_count(1)
    for key, dumped in saved:
        assert isinstance(dumped, bytes)
        client.restore(key, 0, dumped, replace=True)
    client.close()
    assert game.version() == stored
    page.wait_for_function(
        "v => Number(document.getElementById('app').dataset.version) === v",
        arg=stored,
        timeout=STARTS_OVER_MS,
    )
    screenshot(page, "started-over")
    # A refused stream starts the table over at once: it is not reopened into the same refusal.
    assert len(refused_streams) <= 1, refused_streams
    expect(page.locator(f'.log-lines li[data-version="{stored + 1}"]')).to_have_count(0)
    move()  # the game goes on from what is stored, and the table follows it live
    wait_shown(page, stored + 1)
    expect(page.locator(f'.log-lines li[data-version="{stored + 1}"]')).to_have_count(1)
    screenshot(page, "following-again")
