"""The players' loop in the page: quick play seats two browsers at one table, a card says who
is at the table, and "Play again" takes a seat of the rematch."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from tests.browser.harness import Pages
from tests.browser.table import (
    create_game,
    hold_seat,
    my_turn,
    play_turn_by_clicking,
    wait_shown,
    words,
)


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
