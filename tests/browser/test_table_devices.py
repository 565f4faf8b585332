"""A seat is not bound to one browser: it moves to a second device with a one-time link (or
its QR code), and the games a browser holds are listed to resume; the leaderboard."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import requests
from playwright.sync_api import expect

from tests.browser.harness import Pages
from tests.browser.table import (
    STORAGE_KEY,
    create_game,
    create_in_page,
    hold_seat,
    play_turn_by_clicking,
    wait_shown,
    words,
)


def test_a_seat_moves_to_a_second_browser_with_a_one_time_link(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    desk = new_page(viewport={"width": 1280, "height": 800})
    game = create_game(table_server, {"players": ["ann", "bo"], "options": {"set": 6}, "seed": 5})
    game.api("POST", "/deal", game.host_token)
    starter = game.api("GET")["turn"]
    hold_seat(desk, game, starter)
    desk.locator("#move-seat").click()
    panel = desk.locator("#transfer")
    expect(panel).to_be_focused()
    # The other player comes to the table: the desk redraws its cards, and the focus stays.
    other = 1 - starter
    game.api("GET", token=game.tokens[other])
    other_card = desk.locator(f'.player[data-seat="{other}"] .presence')
    expect(other_card).to_have_text(f"● {words('player.present')}", timeout=10_000)
    expect(panel).to_be_focused()
    # A QR code of at least version 3 (29 modules) carries the whole link.
    assert int(panel.locator("svg.qr").get_attribute("data-modules") or 0) >= 29
    link = desk.locator("#transfer-url").input_value()
    assert link.startswith(f"{table_server}/#/take/{game.game_id}/tt.")
    screenshot(desk, "transfer")
    phone = new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    phone.goto(link)
    phone.wait_for_url(f"**/#/game/{game.game_id}")
    expect(phone.locator(".rack")).to_be_visible()
    expect(phone.locator(".facts")).to_contain_text(words("facts.seat", seat=starter + 1))
    held = json.loads(phone.evaluate(f"localStorage.getItem('{STORAGE_KEY}')"))
    new_token = held[game.game_id]["token"]
    assert new_token != game.tokens[starter]  # a new token: the desk's stopped working
    assert (
        requests.get(
            f"{table_server}/api/v1/games/{game.game_id}",
            headers={"Authorization": f"Bearer {game.tokens[starter]}"},
            timeout=10,
        ).status_code
        == 401
    )
    assert "tt." not in phone.url  # the ticket leaves the address
    # The desk says the seat left it and watches; the phone plays, and the desk sees the move.
    expect(desk.locator(".problem")).to_contain_text(words("refuse.seat_lost"))
    expect(desk.locator(".rack")).to_have_count(0)
    expect(desk.locator("#transfer")).to_have_count(0)
    new_page.log(desk).allow(r"status of 401")
    wait_shown(phone, game.version())
    play_turn_by_clicking(phone)
    wait_shown(desk, game.version())
    screenshot(desk, "seat-left", full_page=True)
    desk_held = json.loads(desk.evaluate(f"localStorage.getItem('{STORAGE_KEY}')") or "{}")
    assert game.game_id not in desk_held
    # The link worked once.
    third = new_page(viewport={"width": 390, "height": 844})
    third.goto(link)
    expect(third.locator("#take-problem")).to_have_text(words("refuse.transfer_not_found"))
    new_page.log(third).allow(r"status of 409")


def test_my_games_lists_the_held_games_to_resume_and_forgets_a_gone_one(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    page = new_page(viewport={"width": 1280, "height": 800})
    first = create_in_page(page, table_server, "ann", ["greedy"])
    second = create_in_page(page, table_server, "ann", ["random", "open"])
    page.evaluate(
        "([key]) => { const all = JSON.parse(localStorage.getItem(key));"
        " all['GoneGame0001'] = {seat: 0, token: 'x', name: 'ann', updated: 1};"
        " localStorage.setItem(key, JSON.stringify(all)); }",
        [STORAGE_KEY],
    )
    new_page.log(page).allow(r"status of 404")
    page.goto(table_server + "/")
    games = page.locator(".my-game")
    expect(games).to_have_count(3)
    expect(games.first).to_have_attribute("data-game", second.game_id)
    expect(games.nth(0).locator(".game-state")).to_contain_text(words("games.waiting"))
    expect(games.nth(1).locator(".game-state")).to_contain_text(
        words("facts.round", round=1, rounds=first.api("GET")["rounds"])
    )
    gone = page.locator('.my-game[data-game="GoneGame0001"]')
    expect(gone.locator(".game-state")).to_have_text(words("games.gone"))
    screenshot(page, "my-games")
    gone.get_by_role("button", name=words("games.forget")).click()
    expect(games).to_have_count(2)
    games.nth(1).locator("a.resume").click()
    page.wait_for_url(f"**/#/game/{first.game_id}")
    expect(page.locator(".rack")).to_be_visible()


def test_the_leaderboard_shows_the_apis_people_and_bots(
    table_server: str, new_page: Pages, axe: Callable[..., object]
) -> None:
    page = new_page(viewport={"width": 1280, "height": 800})
    page.goto(table_server + "/")
    page.locator("#to-leaderboard").click()
    page.wait_for_url("**/#/leaderboard")
    for kind in ("people", "bots"):
        page.goto(f"{table_server}/#/leaderboard/{kind}")
        players = requests.get(
            f"{table_server}/api/v1/leaderboard", params={"kind": kind}, timeout=10
        ).json()["players"]
        if players:
            rows = page.locator(f"#board-{kind} tbody tr")
            expect(rows).to_have_count(len(players))
            for row, player in zip(rows.all(), players, strict=True):
                assert row.get_attribute("data-player") == player["player_id"]
                expect(row.locator(".rating")).to_have_text(f"{player['rating']['display']:.1f}")
        else:
            expect(page.locator(".empty-board")).to_have_text(words("board.empty"))
        axe(page, f"leaderboard-{kind}")
