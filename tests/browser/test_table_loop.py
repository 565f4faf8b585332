"""The players' loop in the page: quick play seats two browsers at one table, a card says who
is at the table, "Play again" takes a seat of the rematch, and the loop's refusals are worded
(a rated game's seat, which needs a player account; "Play again" once the claim is over)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
from playwright.sync_api import Locator, Page, expect

from devstack.redis_server import RedisServer
from tests.browser.harness import Pages
from tests.browser.stack import TableStack
from tests.browser.table import (
    create_game,
    hold_seat,
    my_turn,
    play_turn_by_clicking,
    wait_shown,
    words,
)
from tests.e2e.nginx import ensure_nginx

CLAIM_SECONDS = 1  # REMATCH_CLAIM_SECONDS of the stack whose rematch claims close quickly


def quick_play(page: Page, base: str, name: str) -> str:
    page.goto(base + "/")
    page.locator("#quick-name").fill(name)
    page.locator("#quick-count").select_option("2")
    page.locator("#quick-bots").uncheck()
    page.get_by_role("button", name=words("quick.submit")).click()
    page.wait_for_url("**/#/game/*")
    return page.url.rsplit("/", 1)[-1]


def card(page: Page, seat: int) -> Locator:
    return page.locator(f'.player[data-seat="{seat}"]')


def test_quick_play_seats_two_browsers_at_one_table_and_the_cards_say_who_is_there(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    first = new_page(viewport={"width": 1280, "height": 800})
    second = new_page(viewport={"width": 390, "height": 844})
    first.goto(table_server + "/")
    expect(first.locator("#quick-title")).to_have_text(words("quick.title"))
    screenshot(first, "front")
    one = quick_play(first, table_server, "ann")
    two = quick_play(second, table_server, "bo")
    assert one == two  # the second seek sat at the table the first one made
    for page in (first, second):
        expect(page.locator("#app")).to_have_attribute("data-status", "in_round", timeout=15_000)
    expect(card(first, 1).locator(".presence")).to_have_text(f"● {words('player.present')}")
    expect(card(second, 0).locator(".presence")).to_have_text(f"● {words('player.present')}")
    screenshot(first, "quick-play")


def test_a_card_tells_when_a_player_comes_to_the_table(table_server: str, new_page: Pages) -> None:
    game = create_game(table_server, {"players": ["ann", "bo"], "options": {"set": 6}})
    page = new_page(viewport={"width": 1280, "height": 800})
    hold_seat(page, game, 0)
    expect(card(page, 1).locator(".presence")).to_have_text(f"○ {words('player.away')}")
    expect(card(page, 1)).to_have_attribute("aria-label", re.compile(words("player.away")))
    other = new_page(viewport={"width": 390, "height": 844})
    hold_seat(other, game, 1)
    # The stream tells the first page, without a reload.
    expect(card(page, 1).locator(".presence")).to_have_text(
        f"● {words('player.present')}", timeout=10_000
    )


def test_play_again_takes_a_seat_of_the_rematch(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    body = {
        "players": ["ann", {"name": "cpu", "bot": "greedy"}],
        "options": {"set": 6, "rounds": 1},
        "auto_deal": True,
    }
    game = create_game(table_server, body)
    page = new_page(viewport={"width": 1280, "height": 800})
    hold_seat(page, game, 0, host=True)
    while game.api("GET")["status"] != "game_over":
        wait_shown(page, game.version())
        if my_turn(page):
            play_turn_by_clicking(page)
    wait_shown(page, game.version())
    again = page.locator("#rematch")
    expect(again).to_have_text(words("rematch.button"))
    screenshot(page, "game-over")
    again.click()
    page.wait_for_url(re.compile(r"#/game/(?!" + re.escape(game.game_id) + ")"))
    new_id = page.url.rsplit("/", 1)[-1]
    assert new_id != game.game_id
    old = game.api("GET", "/events?after=0&limit=500")["entries"]
    assert old[-1]["action"] == {"action": "rematch", "game_id": new_id}
    expect(page.locator("#app")).to_have_attribute("data-status", "in_round", timeout=15_000)
    expect(page.locator(".rack")).to_be_visible()  # the same seat, at the new game


def test_a_rated_games_seat_taken_without_a_player_account_is_refused_in_words(
    table_server: str, new_page: Pages
) -> None:
    ann = requests.post(f"{table_server}/api/v1/players", json={"name": "ann"}, timeout=10)
    assert ann.status_code == 201, ann.text
    seats = [{"name": "ann", "player_token": ann.json()["player_token"]}, {"open": True}]
    made = requests.post(
        f"{table_server}/api/v1/games", json={"players": seats, "rated": True}, timeout=10
    )
    assert made.status_code == 201, made.text
    game_id, invite = made.json()["game_id"], made.json()["seats"][1]["invite"]
    # The page joins without a player_token: the server answers 422 unrated_seat.
    page = new_page(viewport={"width": 390, "height": 844})
    new_page.log(page).allow(r"status of 422")
    page.goto(f"{table_server}/#/join/{game_id}/{invite}")
    page.get_by_label(words("create.your_name")).fill("bo")
    page.get_by_role("button", name=words("join.submit")).click()
    expect(page.locator("#join-problem")).to_have_text(words("refuse.unrated_seat"))
    view = requests.get(f"{table_server}/api/v1/games/{game_id}", timeout=10).json()
    assert view["players"][1]["open"]  # nobody took the seat


@pytest.fixture()
def quick_claims_server(redis_server: RedisServer, tmp_path: Path) -> Iterator[TableStack]:
    """A stack of this test's own whose rematch seats open CLAIM_SECONDS after the rematch."""
    ensure_nginx()
    claims = {"REMATCH_CLAIM_SECONDS": str(CLAIM_SECONDS)}
    with TableStack(redis_server.url, tmp_path, claims) as stack:
        yield stack


def test_play_again_after_the_claim_is_over_says_the_seat_was_given_up(
    quick_claims_server: TableStack, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    base = quick_claims_server.url
    game = create_game(base, {"players": ["ann", "bo"], "options": {"set": 6, "rounds": 1}})
    game.api("POST", "/deal", game.host_token)
    while (view := game.api("GET"))["status"] == "in_round":
        seat = view["turn"]
        move = game.api("GET", "/legal-moves", game.tokens[seat])["moves"][0]
        game.api("POST", "/moves", game.tokens[seat], json=move)
    page = new_page(viewport={"width": 1280, "height": 800})
    new_page.log(page).allow(r"status of 409")
    hold_seat(page, game, 0)
    again = page.locator("#rematch")
    expect(again).to_have_text(words("rematch.button"))
    # bo asks for the rematch; ann's place in it is not claimed in time, and opens.
    made = requests.post(
        f"{base}/api/v1/games/{game.game_id}/rematch",
        headers={"Authorization": f"Bearer {game.tokens[1]}"},
        timeout=10,
    )
    assert made.status_code == 201, made.text
    next_game = f"{base}/api/v1/games/{made.json()['game_id']}"
    deadline = time.monotonic() + CLAIM_SECONDS + 15
    while not requests.get(next_game, timeout=10).json()["players"][0]["open"]:
        assert time.monotonic() < deadline, "ann's seat in the rematch never opened"
        time.sleep(0.2)
    again.click()
    expect(page.locator("#rematch-problem")).to_have_text(words("refuse.rematch_closed"))
    expect(again).to_be_enabled()
    assert f"#/game/{game.game_id}" in page.url  # still at the finished game
    screenshot(page, "rematch-closed")
