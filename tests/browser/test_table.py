"""The web table at ``/`` in a real browser: its headers, a game played by clicking, and the
pages for unknown games and spectators, and a move made with the keyboard alone (refusals are
in test_table_rules.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import requests
from playwright.sync_api import Page, expect

from tests.browser.harness import PageLog, Pages
from tests.browser.table import (
    Game,
    create_from_position,
    create_game,
    create_in_page,
    double_six_rest,
    hold_seat,
    my_turn,
    play_turn_by_clicking,
    wait_shown,
    words,
)

PAGE_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def test_page_and_its_files_carry_the_strict_headers(table_server: str) -> None:
    page = requests.get(table_server + "/", timeout=10)
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    # Every script, stylesheet and icon is a file of this service; no inline script.
    urls = [u for u in re.findall(r'(?:src|href)="([^"]*)"', page.text) if not u.startswith("#")]
    assert urls and all(url.startswith("/table/") for url in urls), urls
    assert re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page.text) is None
    for path in ["/", "/table/app.js", "/table/table.css"]:
        resp = requests.get(table_server + path, timeout=10)
        assert resp.status_code == 200, path
        policy = resp.headers["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "unsafe-inline" not in policy
        for name, value in PAGE_HEADERS.items():
            assert resp.headers[name] == value, (path, name)
    script = requests.get(table_server + "/table/app.js", timeout=10)
    assert script.headers["Content-Type"].split(";")[0] in {
        "text/javascript",
        "application/javascript",
    }
    assert requests.get(table_server + "/table/../app.py", timeout=10).status_code == 404


def drive_others(game: Game, me: int) -> None:
    """Every other seat makes its first legal move until it is ``me``'s turn or the round ends."""
    while True:
        view = game.api("GET")
        if view["status"] != "in_round" or view["turn"] == me:
            return
        seat = view["turn"]
        move = game.api("GET", "/legal-moves", game.tokens[seat])["moves"][0]
        game.api("POST", "/moves", game.tokens[seat], json=move)


def test_a_round_played_by_clicking_ends_on_the_scores_of_the_api(
    table_server: str, page: Page, page_log: PageLog, screenshot: Callable[..., Path]
) -> None:
    game = create_game(
        table_server, {"players": ["ann", "bo"], "options": {"set": 6, "rounds": 1}, "seed": 11}
    )
    game.api("POST", "/deal", game.host_token)
    hold_seat(page, game, 0, host=True)
    moves = 0
    screenshot_taken = False
    while game.api("GET")["status"] == "in_round":
        drive_others(game, 0)
        wait_shown(page, game.version())
        if game.api("GET")["status"] != "in_round":
            break
        assert my_turn(page)
        if not screenshot_taken and page.locator(".htile.playable").count():
            page.locator(".htile.playable").first.click()
            screenshot(page, "choosing")
            page.locator(".htile.selected").click()  # put it back
            screenshot_taken = True
        play_turn_by_clicking(page)
        moves += 1
    assert moves > 3
    score = game.api("GET", "/score")
    results = page.locator("#results")
    expect(results).to_be_visible()
    expect(page.locator(".turn-banner")).to_have_text("Game over")
    for player in score["players"]:
        row = results.locator(f'tr[data-seat="{player["seat"]}"]')
        expect(row.locator("td.total")).to_have_text(str(player["total"]))
    winner = "You" if 0 in score["winners"] else score["players"][score["winners"][0]]["name"]
    expect(results.locator(".winners")).to_contain_text(winner)
    screenshot(page, "final")
    assert page_log.foreign_requests(table_server) == []


def log_at_newest(page: Page) -> bool:
    return bool(
        page.evaluate(
            """() => { const o = document.querySelector('.log-lines');
              return o.scrollHeight > o.clientHeight
                && o.scrollTop + o.clientHeight >= o.scrollHeight - 4; }"""
        )
    )


def test_the_move_log_keeps_to_its_newest_line_unless_scrolled_up(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    game = create_game(table_server, {"players": ["ann", "bo", "cy", "dee"], "seed": 3})
    game.api("POST", "/deal", game.host_token)
    for _ in range(30):  # more lines than the log shows at once, even beside the table
        seat = game.api("GET")["turn"]
        move = game.api("GET", "/legal-moves", game.tokens[seat])["moves"][0]
        game.api("POST", "/moves", game.tokens[seat], json=move)
    desk = new_page(viewport={"width": 1280, "height": 800})
    phone = new_page(viewport={"width": 390, "height": 844})
    for page in (desk, phone):
        page.goto(f"{table_server}/#/game/{game.game_id}")
        wait_shown(page, game.version())
        expect(page.locator(".log-lines li").nth(25)).to_be_attached()
        assert log_at_newest(page)
    screenshot(desk, "log-1280")
    screenshot(phone, "log-390", full_page=True)

    def move_and_show() -> None:
        seat = game.api("GET")["turn"]
        move = game.api("GET", "/legal-moves", game.tokens[seat])["moves"][0]
        game.api("POST", "/moves", game.tokens[seat], json=move)
        wait_shown(desk, game.version())
        expect(desk.locator(".log-lines li").last).to_have_attribute(
            "data-version", str(game.version())
        )

    move_and_show()
    assert log_at_newest(desk)
    # A reader who scrolled up keeps their place while moves come in.
    desk.locator(".log-lines").evaluate("o => { o.scrollTop = 0; }")
    move_and_show()
    assert desk.locator(".log-lines").evaluate("o => o.scrollTop") == 0
    desk.locator(".log-lines").evaluate("o => { o.scrollTop = o.scrollHeight; }")
    move_and_show()
    assert log_at_newest(desk)


def test_an_unknown_game_says_so_and_links_back_to_create(
    table_server: str, page: Page, page_log: PageLog
) -> None:
    page_log.allow(r"status of 404")
    page.goto(table_server + "/#/game/nosuchgame00")
    expect(page.get_by_role("heading", name="Game not found")).to_be_visible()
    page.get_by_role("link", name="Create a new game").click()
    expect(page.get_by_role("heading", name="New game")).to_be_visible()
    # An invite to it says so too, before anyone types a name.
    page.goto(table_server + "/#/join/nosuchgame00/someinvite")
    expect(page.locator("#join-problem")).to_contain_text("does not exist")
    expect(page.get_by_role("button", name="Take my seat")).to_be_disabled()


def test_the_bots_and_open_seats_a_person_makes_are_named_for_the_seats_they_see(
    table_server: str, page: Page
) -> None:
    """The create form asks of "Seat 2" and "Seat 3"; the greedy bot in Seat 2 is named "greedy
    2" on the table and in the API's view, and the open seat whose invite is for seat 3 is
    named "open seat 3" there: one number for one seat, whoever reads it."""
    game = create_in_page(page, table_server, "ann", ["greedy", "open"])
    expect(page.locator('.player[data-seat="1"] .name')).to_have_text("greedy 2")
    invite = page.locator(".copy-row", has=page.locator('[data-key="invite-2"]'))
    expect(invite.locator(".copy-label")).to_have_text(words("lobby.invite_for", seat=3))
    assert [p["name"] for p in game.api("GET")["players"]] == ["ann", "greedy 2", "open seat 3"]


def test_spectators_see_the_public_table(table_server: str, page: Page, page_log: PageLog) -> None:
    game = create_game(table_server, {"players": ["ann", "bo", "cy"], "seed": 5})
    game.api("POST", "/deal", game.host_token)
    page.goto(f"{table_server}/#/game/{game.game_id}")
    expect(page.locator(".spectating")).to_be_visible()
    expect(page.locator(".htile")).to_have_count(0)
    expect(page.locator(".player")).to_have_count(3)
    expect(page.locator(".train")).to_have_count(4)


def test_keyboard_alone_plays_a_tile_on_a_narrow_phone(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    page = new_page(viewport={"width": 390, "height": 844})
    game = create_game(table_server, {"players": ["ann", "bo", "cy"], "seed": 1})
    game.api("POST", "/deal", game.host_token)
    starter = game.api("GET")["turn"]
    hold_seat(page, game, starter)
    version = game.version()
    # Nothing wider than the phone: every train scrolls inside its own row.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "390")
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('.htile.playable')"):
            break
    else:
        raise AssertionError("Tab never reached a playable tile")
    tile = page.evaluate("document.activeElement.dataset.tile")
    page.keyboard.press("Enter")
    # The focus moves on to a train the tile may go to; Enter plays it there.
    assert page.evaluate("document.activeElement.matches('.train-target.legal')")
    label = page.evaluate("document.activeElement.getAttribute('aria-label')")
    assert label.startswith(f"Play {tile} on ")
    page.keyboard.press("Enter")
    wait_shown(page, version + 1)
    hand = game.api("GET", "", game.tokens[starter])["hand"]
    assert tile not in {f"{a}-{b}" for a, b in hand}
    assert page.evaluate("document.activeElement.matches('.htile, button.action')")


IN_VIEW = """e => { const r = e.getBoundingClientRect();
  return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }"""


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["1280", "390"])
def test_a_skip_link_takes_the_keyboard_to_the_hand(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path], size: tuple[int, int]
) -> None:
    """The first Tab of the table reaches a link, out of sight until then, whose Enter puts the
    focus on the hand's first playable tile, past the top bar, the players and the trains; a
    spectator, without a hand, has none."""
    width, height = size
    page = new_page(viewport={"width": width, "height": height})
    game = create_game(table_server, {"players": ["ann", "bo", "cy", "di"], "seed": 4})
    game.api("POST", "/deal", game.host_token)
    me = game.api("GET")["turn"]
    hold_seat(page, game, me)
    wait_shown(page, game.version())
    link = page.locator("#skip-to-hand")
    assert not link.evaluate(IN_VIEW)
    page.keyboard.press("Tab")
    expect(link).to_be_focused()
    expect(link).to_have_text(words("skip.hand"))
    assert link.evaluate(IN_VIEW)
    screenshot(page, f"skip-link-{width}")
    page.keyboard.press("Enter")
    first = page.locator(".htile.playable").first
    expect(first).to_be_focused()
    assert first.evaluate(IN_VIEW)
    assert page.url.endswith(f"#/game/{game.game_id}")
    screenshot(page, f"skipped-to-hand-{width}")
    # Play goes on from there: Enter chooses the tile and moves on to a train.
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.matches('.train-target.legal')")
    page.goto(f"{table_server}/")
    page.evaluate("localStorage.clear()")
    page.goto(f"{table_server}/#/game/{game.game_id}")
    expect(page.locator(".watching")).to_be_visible()
    expect(link).to_have_count(0)


# Each Tab stop: whether it sits inside an aria-hidden part, and what a screen reader names it.
TAB_STOP = """() => { const e = document.activeElement;
  return {hidden: Boolean(e.closest('[aria-hidden="true"]')), tag: e.tagName,
          cls: String(e.className), label: e.getAttribute('aria-label') || e.innerText.trim()}; }"""


def test_a_train_longer_than_its_row_is_no_silent_stop_of_the_keyboard(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    """A train's tiles are a picture (aria-hidden: its button says the train); Chromium makes a
    row that scrolls sideways a Tab stop of its own, where a screen reader says nothing. Every
    Tab of the table lands on something it can name."""
    page = new_page(viewport={"width": 390, "height": 844})
    long_train = [[6, 5], [5, 4], [4, 3], [3, 2], [2, 1], [1, 0]]
    hands = [[[6, 0], [3, 3]], [[4, 4]]]
    placed = [tile for hand in hands for tile in hand] + long_train
    game = create_from_position(
        table_server,
        {
            "format": "mexican-train-position/1",
            "players": ["ann", "bo"],
            "rules": {"preset": "standard", "options": {"set": 6}},
            "round": 1,
            "engine": 6,
            "turn": 0,
            "opened": [True, True],
            "hands": hands,
            "boneyard": double_six_rest(*placed),
            "trains": {"0": [], "1": long_train, "mexican": None},
            "marked": [False, False],
            "open_doubles": [],
            "scores": [[], []],
        },
    )
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    page.wait_for_function(  # the row scrolls sideways, once its tiles are drawn
        """() => { const line = document.querySelector('.train[data-train="1"] .line');
          return line.scrollWidth > line.clientWidth; }"""
    )
    stops = []
    for _ in range(40):
        page.keyboard.press("Tab")
        stop = page.evaluate(TAB_STOP)
        if stops and stop == stops[0]:
            break
        stops.append(stop)
    silent = [stop for stop in stops if stop["hidden"]]
    screenshot(page, "tab-stops")
    assert silent == [], silent
    # The hand and the trains are still reached.
    assert any("htile" in stop["cls"] for stop in stops)
    assert sum("train-target" in stop["cls"] for stop in stops) == 3
