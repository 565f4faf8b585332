"""Rules on the table: the hint says what can be done and why (the opening chain, drawing,
passing, which of two open doubles comes first), a tile without a move cannot be chosen, a
refusal is worded for people, errors clear themselves, and the rules in use are named."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import APIResponse, Page, Route, expect

from tests.browser.harness import PageLog, Pages
from tests.browser.table import (
    SETTINGS_KEY,
    Game,
    create_from_position,
    create_game,
    double_six_rest,
    hold_seat,
    my_turn,
    shown_version,
    wait_shown,
    words,
)

PLAYERS = ["ann", "bo"]
#: How many tenths of a second a test waits for a held answer to reach it.
HELD_POLLS = 100


def position(
    hands: list[list[list[int]]],
    trains: dict[str, Any],
    open_doubles: list[str],
    boneyard_first: list[list[int]] = [],  # noqa: B006 - never changed
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A double-6 round of ann and bo, both past their opening turn, ann to play; ``options``
    are added to the standard preset's."""
    placed = [tile for hand in hands for tile in hand]
    placed += [tile for train in trains.values() if train for tile in train]
    rest = double_six_rest(*placed, *boneyard_first)
    return {
        "format": "mexican-train-position/1",
        "players": PLAYERS,
        "rules": {"preset": "standard", "options": {"set": 6, "rounds": 3, **(options or {})}},
        "round": 1,
        "engine": 6,
        "turn": 0,
        "opened": [True, True],
        "hands": hands,
        "boneyard": [*boneyard_first, *rest],
        "trains": trains,
        "marked": [False, False],
        "open_doubles": open_doubles,
        "scores": [[], []],
    }


def hint(page: Page) -> str:
    return page.locator("#hint").inner_text()


def test_of_two_open_doubles_the_oldest_comes_first_and_other_tiles_cannot_be_chosen(
    table_server: str, page: Page
) -> None:
    hands = [[[4, 1], [2, 5], [0, 0]], [[3, 3], [1, 1], [0, 1]]]
    trains = {"0": [[6, 2], [2, 2]], "1": [[6, 4], [4, 4]], "mexican": None}
    game = create_from_position(table_server, position(hands, trains, ["1", "0"]))
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    oldest = words("hint.doubles_oldest", train=words("train.of", name="bo"))
    expect(page.locator("#hint")).to_have_text(f"{oldest} {words('hint.choose_tile')}")
    expect(page.locator('.train[data-train="1"] .double-flag')).to_have_text(
        words("train.open_double_first")
    )
    # 2-5 would cover the younger double: it is not offered, and choosing it says why.
    blocked = page.locator('.htile[data-tile="2-5"]')
    expect(blocked).to_have_class("htile unplayable")
    expect(blocked).to_have_attribute("aria-disabled", "true")
    version = shown_version(page)
    # Clicked in the page at once: a render during a pointer click detaches the tile it aimed at.
    page.evaluate("document.querySelector('.htile[data-tile=\"2-5\"]').click()")
    expect(page.locator("#problem")).to_have_text(words("refuse.tile_no_fit", tile="2-5", ends="4"))
    expect(page.locator(".htile.selected")).to_have_count(0)
    assert game.version() == version
    page.locator('.htile[data-tile="1-4"], .htile[data-tile="4-1"]').click()
    expect(page.locator(".train-target.legal")).to_have_count(1)
    expect(page.locator(".train-target.legal")).to_have_attribute("data-train", "1")


def test_draw_then_pass_is_explained_and_the_drawn_tile_marked(
    table_server: str, page: Page
) -> None:
    hands = [[[0, 0], [1, 2]], [[3, 4], [5, 5]]]
    trains = {"0": [[6, 3]], "1": [[6, 5]], "mexican": None}
    game = create_from_position(table_server, position(hands, trains, [], [[0, 1]]))
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    expect(page.locator("#hint")).to_have_text(words("hint.draw"))
    expect(page.locator("#action-draw")).to_be_enabled()
    expect(page.locator(".htile.playable")).to_have_count(0)
    page.locator("#action-draw").click()
    wait_shown(page, 2)
    drawn = page.locator('.htile.drawn[data-tile="0-1"]')
    expect(drawn).to_be_visible()
    expect(drawn).to_contain_text(words("tile.new"))
    expect(page.locator("#hint")).to_have_text(words("hint.mark_after_draw"))
    page.locator("#action-mark").click()
    expect(page.locator('.train[data-train="0"] .marked-flag')).to_be_visible()


HEARD = """() => { window.heard = [];
  const region = document.getElementById('announce');
  new MutationObserver(() => window.heard.push(region.textContent))
    .observe(region, {childList: true, characterData: true, subtree: true}); }"""
LANGUAGES = ("en", "sw", "tr", "ha", "ceb", "fi")
THREE_ROUNDS = {"preset": "standard", "options": {"set": 6, "rounds": 3}}


@pytest.mark.parametrize("language", LANGUAGES)
def test_ones_own_moves_are_told_in_the_second_person(
    table_server: str, page: Page, language: str, screenshot: Callable[..., Path]
) -> None:
    """The live region and the log tell a player's own move as theirs ("You played 2-3 on your
    train"), in each language; the other player's move, and that player's train, by name."""
    hands = [[[2, 3], [1, 4]], [[4, 5], [0, 0]]]
    trains = {"0": [[6, 2]], "1": [[6, 4]], "mexican": None}
    game = create_from_position(table_server, position(hands, trains, []))
    hold_seat(page, game, 0, language=language)
    wait_shown(page, game.version())
    page.evaluate(HEARD)
    page.locator('.htile[data-tile="2-3"]').click()
    page.locator('.train-target.legal[data-train="0"]').click()
    own = words("log.you_played", language, tile="2-3", train=words("log.your_train", language))
    expect(page.locator(".log-lines")).to_contain_text(own)
    game.api(
        "POST", "/moves", game.tokens[1], json={"action": "play", "tile": [4, 5], "train": "1"}
    )
    other = words(
        "log.played", language, name="bo", tile="4-5", train=words("train.of", language, name="bo")
    )
    expect(page.locator(".log-lines")).to_contain_text(other)
    heard = page.evaluate("window.heard")
    assert any(line.startswith(own) for line in heard), heard
    assert any(line.startswith(other) for line in heard), heard
    assert not any("ann" in line for line in heard), heard
    log_shots(page, screenshot, language)


def log_shots(page: Page, screenshot: Callable[..., Path], label: str) -> None:
    """The move log photographed on a desktop and on a phone (375x667), scrolled to it."""
    screenshot(page, f"{label}-1280")
    page.set_viewport_size({"width": 375, "height": 667})
    page.evaluate("document.querySelector('.log').scrollIntoView({block: 'end'})")
    screenshot(page, f"{label}-375")
    page.set_viewport_size({"width": 1280, "height": 800})


def blocked_round() -> dict[str, Any]:
    """Every tile of the double-6 set placed, none left to draw, ann to play: the trains end
    5, 6 and 5 and both hands hold only 0s, 1s and 2s, so ann's pass blocks the round."""
    trains = {
        "0": [[6, 0], [0, 3], [3, 1], [1, 4], [4, 2], [2, 5]],
        "1": [[6, 1], [1, 5], [5, 0], [0, 4], [4, 3], [3, 2], [2, 6]],
        "mexican": [[6, 3], [3, 3], [3, 5], [5, 5], [5, 4], [4, 4], [4, 6], [6, 5]],
    }
    hands = [[[0, 0], [0, 1], [1, 1]], [[0, 2], [1, 2], [2, 2]]]
    return {**position(hands, trains, []), "boneyard": []}


def test_a_rounds_end_says_who_went_out_or_that_it_was_blocked(
    table_server: str, page: Page, screenshot: Callable[..., Path]
) -> None:
    """The live region and the log say how a round ended, not only that it did: who went out
    (the player as "you"), or that the round was blocked."""
    game = create_from_position(table_server, last_round(9, 4) | {"rules": THREE_ROUNDS})
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    page.evaluate(HEARD)
    page.locator('.htile[data-tile="2-3"]').click()
    page.locator('.train-target.legal[data-train="0"]').click()
    you_out = words("log.round_you_out", round=2)
    expect(page.locator(".log-lines")).to_contain_text(you_out)
    assert any(line.endswith(you_out) for line in page.evaluate("window.heard"))
    log_shots(page, screenshot, "you-out")

    hands = [[[2, 3], [1, 4]], [[4, 5]]]
    trains = {"0": [[6, 2]], "1": [[6, 4]], "mexican": None}
    game = create_from_position(table_server, position(hands, trains, []))
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    page.evaluate(HEARD)
    page.locator('.htile[data-tile="2-3"]').click()
    page.locator('.train-target.legal[data-train="0"]').click()
    wait_shown(page, game.version())
    game.api(
        "POST", "/moves", game.tokens[1], json={"action": "play", "tile": [4, 5], "train": "1"}
    )
    bo_out = words("log.round_out", round=1, name="bo")
    expect(page.locator(".log-lines")).to_contain_text(bo_out)
    assert any(line.endswith(bo_out) for line in page.evaluate("window.heard"))
    log_shots(page, screenshot, "bo-out")

    game = create_from_position(table_server, blocked_round())
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    page.evaluate(HEARD)
    page.locator("#action-mark").click()
    blocked = words("log.round_blocked", round=1)
    expect(page.locator(".log-lines")).to_contain_text(blocked)
    assert any(line.endswith(blocked) for line in page.evaluate("window.heard"))
    log_shots(page, screenshot, "blocked")


def both_out_in_their_opening_turns() -> dict[str, Any]:
    """A double-6 round where neither has opened, each holding one tile for their own train:
    ann's goes out in her opening turn, which ends the round only once bo has had his
    (opening_out_waits), in which he goes out too."""
    hands = [[[6, 1]], [[6, 4]]]
    start = position(hands, {"0": [], "1": [], "mexican": None}, [])
    start["opened"] = [False, False]
    return start


@pytest.mark.parametrize("language", LANGUAGES)
def test_players_gone_out_together_are_listed_as_people_write_them(
    table_server: str, new_page: Pages, language: str, screenshot: Callable[..., Path]
) -> None:
    """Two players out in one round read as a sentence in the page's language: "you and bo
    went out" to ann (the second person, as when she alone went out), "ann and bo went out" to
    a spectator; not "ann (you), bo"."""
    game = create_from_position(table_server, both_out_in_their_opening_turns())
    ann = new_page(viewport={"width": 1280, "height": 800})
    hold_seat(ann, game, 0, language=language)
    spectator = new_page(viewport={"width": 1280, "height": 800})
    spectator.goto(f"{game.base}/")
    spectator.evaluate(
        "([key, language]) => localStorage.setItem(key, JSON.stringify({language}))",
        [SETTINGS_KEY, language],
    )
    spectator.goto(f"{game.base}/#/game/{game.game_id}")
    spectator.reload()
    before = game.version()
    wait_shown(ann, before)
    ann.locator('.htile[data-tile="1-6"]').click()
    ann.locator('.train-target.legal[data-train="0"]').click()
    # Read now, the game's version may not have moved yet: the click's move is on its way.
    wait_shown(ann, before + 1)
    game.api(
        "POST", "/moves", game.tokens[1], json={"action": "play", "tile": [6, 4], "train": "1"}
    )
    rounds = game.api("GET")["rounds"]
    both = f"{words('player.you', language)} {words('list.and', language)} bo"
    expect(ann.locator(".log-lines")).to_contain_text(
        words("log.round_you_and_out", language, round=1, names=both)
    )
    expect(ann.locator('.round-summary[data-round="1"] h2')).to_have_text(
        words("summary.you_and_went_out", language, round=1, rounds=rounds, names=both)
    )
    screenshot(ann, "you-and-bo")
    both = f"ann {words('list.and', language)} bo"
    expect(spectator.locator(".log-lines")).to_contain_text(
        words("log.round_out_several", language, round=1, names=both)
    )
    expect(spectator.locator('.round-summary[data-round="1"] h2')).to_have_text(
        words("summary.went_out_several", language, round=1, rounds=rounds, names=both)
    )


def test_a_bots_move_that_ends_the_game_is_logged_as_sentences(
    table_server: str, page: Page, screenshot: Callable[..., Path]
) -> None:
    """A move and what it brought about (the round's end, the game's) are told as sentences one
    after another, and "(bot)" says who made the move, not that a bot ended the game: not "bo
    played 2-3 on bo's train; Round 2 is over: bo went out; The game is over (bot)"."""
    start = last_round(9, 4) | {"turn": 1, "hands": [[[1, 5]], [[2, 3]]]}
    start["trains"] = {"0": [[5, 4]], "1": [[5, 2]], "mexican": None}
    game = create_from_position(table_server, start)
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    game.api("PUT", "/seats/1", game.table_token, json={"bot": "greedy"})
    played = words("log.played", name="bo", tile="2-3", train=words("train.of", name="bo"))
    line = (
        f"{played}{words('log.by_bot')}. {words('log.round_out', round=2, name='bo')}. "
        f"{words('log.game_over')}"
    )
    expect(page.locator(".log-lines li").last).to_have_text(re.compile(re.escape(line) + r"\s*$"))
    log_shots(page, screenshot, "bot-ended-the-game")


def sit_at_an_open_own_train(
    table_server: str, page: Page, options: dict[str, Any] | None = None
) -> Game:
    """Seat 0's turn, holding 3-3 for its own train (ending 3); the boneyard holds 0-1."""
    hands = [[[3, 3], [1, 2], [0, 0]], [[4, 4], [5, 2]]]
    trains = {"0": [[6, 3]], "1": [[6, 5]], "mexican": None}
    start = position(hands, trains, [], [[0, 1]], options)
    game = create_from_position(table_server, start)
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    return game


def test_after_drawing_on_ones_own_open_double_the_hint_says_only_to_pass(
    table_server: str, page: Page, screenshot: Callable[..., Path]
) -> None:
    sit_at_an_open_own_train(table_server, page)
    page.locator('.htile[data-tile="3-3"]').click()
    page.locator('.train-target.legal[data-train="0"]').click()
    wait_shown(page, 2)
    # Under the standard preset's `double_follow: any` the next tile may go anywhere legal.
    expect(page.locator("#hint")).to_have_text(
        f"{words('hint.follow_double_any')} {words('hint.draw')}"
    )
    page.locator("#action-draw").click()
    wait_shown(page, 3)
    # 0-1 covers nothing: drawing is done, so the hint no longer offers it.
    expect(page.locator("#action-draw")).to_be_disabled()
    expect(page.locator("#hint")).to_have_text(words("hint.mark_after_draw"))
    screenshot(page, "after-draw")


def test_under_double_follow_satisfy_the_hint_names_the_double_to_cover_and_the_rules_say_so(
    table_server: str, page: Page
) -> None:
    sit_at_an_open_own_train(table_server, page, {"double_follow": "satisfy"})
    page.locator(".rules summary").click()
    expect(page.locator(".rules li", has_text=words("rules.follow_satisfy"))).to_have_count(1)
    page.locator('.htile[data-tile="3-3"]').click()
    page.locator('.train-target.legal[data-train="0"]').click()
    wait_shown(page, 2)
    follow = words("hint.follow_double", train=words("train.of", name="ann"))
    expect(page.locator("#hint")).to_have_text(f"{follow} {words('hint.draw')}")


def test_the_rules_name_the_chicken_foot_and_when_the_mexican_train_may_start(
    table_server: str, page: Page, screenshot: Callable[..., Path]
) -> None:
    hands = [[[0, 0], [1, 2]], [[3, 4], [5, 5]]]
    trains = {"0": [[6, 3]], "1": [[6, 5]], "mexican": None}
    options = {"chicken_foot": True, "mexican_needs_own_blocked": True}
    game = create_from_position(table_server, position(hands, trains, [], [], options))
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    page.locator(".rules summary").click()
    items = page.locator(".rules li")
    expect(items.filter(has_text=words("rules.chicken_foot"))).to_have_count(1)
    expect(items.filter(has_text=words("rules.mexican_after_own"))).to_have_count(1)
    expect(items.filter(has_text=words("rules.follow_satisfy"))).to_have_count(0)
    screenshot(page, "rules-listed")


def test_in_a_single_tile_opening_turn_an_open_double_is_not_hinted(
    table_server: str, page: Page
) -> None:
    # bo's opening left 4-4 open; ann, still to open, ignores it (rule 5).
    hands = [[[6, 1], [2, 5], [0, 0]], [[3, 3], [1, 1]]]
    trains: dict[str, Any] = {"0": [], "1": [[6, 4], [4, 4]], "mexican": None}
    start = position(hands, trains, ["1"], [], {"opening": "single"})
    start["opened"] = [False, True]
    game = create_from_position(table_server, start)
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    expect(page.locator("#hint")).to_have_text(words("hint.choose_tile"))
    expect(page.locator(".htile.playable")).to_have_count(1)


def test_an_opening_turn_without_a_tile_to_start_the_train_says_to_pass(
    table_server: str, page: Page
) -> None:
    """Under the standard preset a player who cannot start their train marks it without
    drawing (opening_no_play: mark): the hint says so, not that a chain may be laid, nor that
    a tile drawn does not fit (none was)."""
    hands = [[[0, 1], [2, 3]], [[6, 4]]]
    start = position(hands, {"0": [], "1": [], "mexican": None}, [])
    start["opened"] = [False, False]
    game = create_from_position(table_server, start)
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    expect(page.locator("#action-mark")).to_be_enabled()
    expect(page.locator("#hint")).to_have_text(words("hint.mark_no_opening"))


def test_a_move_answered_after_the_stream_showed_it_leaves_the_actions_usable(
    table_server: str, page: Page
) -> None:
    sit_at_an_open_own_train(table_server, page)
    held: list[tuple[Route, APIResponse]] = []

    def hold_answer(route: Route) -> None:
        held.append((route, route.fetch()))  # the server applies it; the page waits

    page.route("**/moves", hold_answer)
    page.locator('.htile[data-tile="3-3"]').click()
    page.locator('.train-target.legal[data-train="0"]').click()
    wait_shown(page, 2)  # drawn from the stream while the move's answer is still on its way
    expect(page.locator("#action-draw")).to_be_disabled()  # one move at a time
    for _ in range(HELD_POLLS):  # the handler's fetch runs while this thread waits on the page
        if held:
            break
        page.wait_for_timeout(100)
    route, answer = held[0]
    route.fulfill(response=answer)
    expect(page.locator("#action-draw")).to_be_enabled()


def test_the_opening_chain_is_explained_and_the_rules_named(table_server: str, page: Page) -> None:
    game = create_game(
        table_server, {"players": PLAYERS, "options": {"set": 6, "rounds": 2}, "seed": 11}
    )
    game.api("POST", "/deal", game.host_token)
    starter = game.api("GET")["turn"]
    hold_seat(page, game, starter)
    wait_shown(page, game.version())
    assert my_turn(page)
    expect(page.locator("#hint")).to_contain_text(words("hint.opening_chain"))
    expect(page.locator(".rules summary")).to_have_text(
        words("rules.in_use.other", preset=words("rules.standard"), set=6, n=2)
    )
    page.locator(".rules summary").click()
    expect(page.locator(".rules li").first).to_have_text(words("rules.set", set=6, hand=7))
    tile = page.locator(".htile.playable").first
    tile.click()
    page.locator(".train-target.legal").first.click()
    wait_shown(page, game.version())
    if my_turn(page) and page.locator("#action-end_turn").is_enabled():
        expect(page.locator("#hint")).to_contain_text(words("hint.opening_more"))


def test_after_a_keyboard_move_in_the_opening_chain_the_focus_is_on_a_playable_tile(
    table_server: str, page: Page, screenshot: Callable[..., Path]
) -> None:
    hands = [[[0, 0], [6, 1], [1, 2], [2, 3]], [[4, 4], [5, 2]]]
    trains: dict[str, Any] = {"0": [], "1": [], "mexican": None}
    start = position(hands, trains, [])
    start["opened"] = [False, False]
    game = create_from_position(table_server, start)
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    page.locator('.htile[data-tile="1-6"]').focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    wait_shown(page, 2)
    # 0-0 leads the hand but fits nothing; 1-2 goes on with the chain.
    expect(page.locator(".htile.playable")).to_have_count(1)
    page.wait_for_timeout(500)  # renders that come after the move's own must not move it
    focused = page.evaluate("document.activeElement.dataset.tile || document.activeElement.id")
    assert focused == "1-2", focused
    screenshot(page, "chain-focus")


def test_a_refusal_is_worded_for_people_and_a_lost_server_clears_itself(
    table_server: str, page: Page, page_log: PageLog
) -> None:
    game = create_game(table_server, {"players": PLAYERS, "options": {"set": 6}, "seed": 1})
    game.api("POST", "/deal", game.host_token)
    starter = game.api("GET")["turn"]
    page_log.allow(r"status of 409|net::ERR_FAILED")
    # No stream: the page fetches the view every few seconds, and then those fetches fail.
    page.route("**/events?**", lambda route: route.abort())
    hold_seat(page, game, starter)
    wait_shown(page, game.version())
    cut = {"on": True}

    def reads(url: str) -> bool:
        return cut["on"] and f"/api/v1/games/{game.game_id}" in url

    page.route(
        reads, lambda route: route.abort() if route.request.method == "GET" else route.fallback()
    )
    problem = page.locator("#problem")
    expect(problem).to_have_text(words("refuse.network"), timeout=10_000)
    cut["on"] = False
    expect(problem).to_be_hidden(timeout=10_000)
    cut["on"] = True
    # The page still offers the tile; meanwhile the same seat plays it from elsewhere.
    tile = page.locator(".htile.playable").first
    name = tile.get_attribute("data-tile") or ""
    tile.click()
    target = page.locator(".train-target.legal").first.get_attribute("data-train")
    a, b = (int(x) for x in name.split("-"))
    game.api(
        "POST",
        "/moves",
        game.tokens[starter],
        json={"action": "play", "tile": [a, b], "train": target},
    )
    page.locator(".train-target.legal").first.click()
    expect(problem).to_have_text(words("refuse.illegal_move"))
    assert "does not match" not in problem.inner_text()
    cut["on"] = False
    wait_shown(page, game.version())


def last_round(ann_before: int, bo_before: int) -> dict[str, Any]:
    """The last of two double-6 rounds (engine 5-5), ann to play 2-3, her last tile, on her
    own train; bo is left with 1-5 (6 points). Round one scored ``ann_before`` and
    ``bo_before``."""
    hands = [[[2, 3]], [[1, 5]]]
    trains = {"0": [[5, 2]], "1": [[5, 4]], "mexican": None}
    taken = {(2, 3), (1, 5), (2, 5), (4, 5), (5, 5)}
    rest = [[a, b] for a in range(7) for b in range(a, 7) if (a, b) not in taken]
    return {
        "format": "mexican-train-position/1",
        "players": PLAYERS,
        "rules": {"preset": "standard", "options": {"set": 6, "rounds": 2}},
        "round": 2,
        "engine": 5,
        "turn": 0,
        "opened": [True, True],
        "hands": hands,
        "boneyard": rest,
        "trains": trains,
        "marked": [False, False],
        "open_doubles": [],
        "scores": [[ann_before], [bo_before]],
    }


def play_the_last_tile(
    table_server: str, page: Page, ann_before: int, bo_before: int, language: str | None = None
) -> None:
    game = create_from_position(table_server, last_round(ann_before, bo_before))
    hold_seat(page, game, 0, language=language)
    wait_shown(page, game.version())
    page.locator('.htile[data-tile="2-3"]').click()
    page.locator('.train-target.legal[data-train="0"]').click()
    expect(page.locator("#results .winners")).to_be_visible()


def test_a_tie_on_totals_says_how_the_winner_was_decided(table_server: str, page: Page) -> None:
    """The final table says "lowest wins"; when the lowest total is shared and the tie-break
    (most rounds gone out, then the lowest single round) decides, it says so: else two equal
    totals and one winner read as a mistake."""
    play_the_last_tile(table_server, page, 10, 4)  # 10 + 0 and 4 + 6: ann went out once
    expect(page.locator("#results .tie-break")).to_have_text(words("score.tie_break", total=10))


@pytest.mark.parametrize(
    ("language", "heading"), [("en", "You and bo win!"), ("ha", "Kai da bo kun ci nasara!")]
)
def test_shared_winners_are_listed_as_people_write_them(
    table_server: str, new_page: Pages, page: Page, language: str, heading: str
) -> None:
    """A game won by two (equal totals, rounds gone out and lowest round) names them as the
    page's language lists people: "ann and bo win!", not "ann & bo"; to a winner, who is
    "you" (first, as the round's summary has it)."""
    play_the_last_tile(table_server, page, 6, 0, language)  # 6 + 0 and 0 + 6
    expect(page.locator("#results .winners")).to_have_text(heading)
    watcher = new_page(viewport={"width": 1280, "height": 800})
    watcher.goto(page.url)
    both = f"ann {words('list.and')} bo"
    expect(watcher.locator("#results .winners")).to_have_text(
        words("score.winners.other", names=both)
    )


@pytest.mark.parametrize(("language", "heading"), [("en", "You win!"), ("ceb", "Midaog ka!")])
def test_the_final_table_tells_its_winning_reader_you_win(
    table_server: str,
    page: Page,
    screenshot: Callable[..., Path],
    language: str,
    heading: str,
) -> None:
    """The page speaks to its reader in the second person ("you went out"): a winner reads
    "You win!", not their own name in the third person."""
    play_the_last_tile(table_server, page, 9, 4, language)  # 9 against 10
    expect(page.locator("#results .winners")).to_have_text(heading)
    screenshot(page, "1280")
    page.set_viewport_size({"width": 375, "height": 667})
    screenshot(page, "375", full_page=True)


@pytest.mark.parametrize(("rounds", "status"), [(2, "game_over"), (3, "round_over")])
def test_a_round_gone_out_on_a_double_shows_no_open_double_after_it(
    table_server: str, page: Page, screenshot: Callable[..., Path], rounds: int, status: str
) -> None:
    """Going out on a double ends the round at once (rules section 7), leaving the double in
    the view's open_doubles; once the round is over nobody is to cover it, so its train is
    not flagged, at the game's end or a round's."""
    start = last_round(9, 4)
    start["hands"][0] = [[2, 2]]
    start["boneyard"] = [[2, 3], *(tile for tile in start["boneyard"] if tile != [2, 2])]
    start["rules"]["options"]["rounds"] = rounds
    game = create_from_position(table_server, start)
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    page.locator('.htile[data-tile="2-2"]').click()
    page.locator('.train-target.legal[data-train="0"]').click()
    expect(page.locator('.round-summary[data-round="2"]')).to_be_visible()
    view = game.api("GET")
    assert (view["status"], view["open_doubles"]) == (status, ["0"])
    expect(page.locator('.train[data-train="0"] .ttile')).to_have_count(2)
    expect(page.locator(".double-flag, .ttile.open-double, .has-open-double")).to_have_count(0)
    label = page.locator('.train-target[data-train="0"]').get_attribute("aria-label") or ""
    assert words("train.open_double_long") not in label, label
    screenshot(page, "1280", full_page=True)
    page.set_viewport_size({"width": 375, "height": 667})
    screenshot(page, "375", full_page=True)


def test_a_lowest_total_alone_says_nothing_of_ties(table_server: str, page: Page) -> None:
    play_the_last_tile(table_server, page, 9, 4)  # 9 against 10
    expect(page.locator("#results .tie-break")).to_have_count(0)


def test_the_final_table_marks_its_readers_own_row(
    table_server: str, page: Page, screenshot: Callable[..., Path]
) -> None:
    """A reader who did not win looks for their own total in the final table: their row says
    "(you)", as the round's summary below it does, and no one else's does."""
    play_the_last_tile(table_server, page, 20, 4)  # 20 against 10: bo wins
    rows = page.locator("#results tbody th")
    you = re.escape(words("player.you_named", name="ann"))
    expect(rows).to_have_text([re.compile(rf"^\s*{you}$"), re.compile(r"^\s*bo$")])
    expect(page.locator("#results .winners")).to_contain_text("bo")
    screenshot(page, "final")


@pytest.mark.parametrize("language", ["en", "sw"])
def test_a_round_summary_tells_its_reader_they_went_out(
    table_server: str, page: Page, screenshot: Callable[..., Path], language: str
) -> None:
    """The summary's heading speaks to its reader as the move log does: "you went out", not
    the reader's own name in the third person; another player who went out is named."""
    game = create_from_position(table_server, last_round(9, 4))
    hold_seat(page, game, 0, language=language)
    wait_shown(page, game.version())
    page.locator('.htile[data-tile="2-3"]').click()
    page.locator('.train-target.legal[data-train="0"]').click()
    title = page.locator('.round-summary[data-round="2"] h2')
    expect(title).to_have_text(words("summary.you_went_out", language, round=2, rounds=2))
    screenshot(page, "you-went-out")

    hands = [[[2, 3], [1, 4]], [[4, 5]]]
    trains = {"0": [[6, 2]], "1": [[6, 4]], "mexican": None}
    game = create_from_position(table_server, position(hands, trains, []))
    hold_seat(page, game, 0, language=language)
    wait_shown(page, game.version())
    page.locator('.htile[data-tile="2-3"]').click()
    page.locator('.train-target.legal[data-train="0"]').click()
    wait_shown(page, game.version())
    game.api(
        "POST", "/moves", game.tokens[1], json={"action": "play", "tile": [4, 5], "train": "1"}
    )
    rounds = game.api("GET")["rounds"]
    title = page.locator('.round-summary[data-round="1"] h2')
    expect(title).to_have_text(
        words("summary.went_out", language, round=1, rounds=rounds, name="bo")
    )
    screenshot(page, "bo-went-out")


def test_at_the_games_end_the_winner_comes_first_and_takes_the_focus(
    table_server: str, page: Page
) -> None:
    """The last move of a game opens its last round's summary and the final table: who won is
    what a player looks for, so it is above the summaries (on a phone, in view rather than
    below them), and the keyboard's focus goes to it."""
    game = create_from_position(table_server, last_round(9, 4))
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    page.locator('.htile[data-tile="2-3"]').focus()
    page.keyboard.press("Enter")
    expect(page.locator('.train-target.legal[data-train="0"]')).to_be_focused()
    page.keyboard.press("Enter")
    results = page.locator("#results")
    expect(results).to_be_focused()
    expect(page.locator(".round-summary")).to_have_count(1)
    # Read in one go: a render between two reads replaces both panels.
    final_bottom, summary_top = page.evaluate(
        """() => [document.querySelector('#results').getBoundingClientRect().bottom,
                  document.querySelector('.round-summary').getBoundingClientRect().top]"""
    )
    assert final_bottom <= summary_top, (final_bottom, summary_top)


def test_final_scores_that_fail_to_load_say_so_and_a_retry_takes_the_focus(
    table_server: str, page: Page, page_log: PageLog, screenshot: Callable[..., Path]
) -> None:
    """Nothing fetches the scores again once the game is over: when they fail after its last
    move, the final table's place says so and offers to try again, with the keyboard's focus
    (not left on the round's summary); trying again once the server answers shows the final
    table, focused."""
    page_log.allow(r"status of 503")
    game = create_from_position(table_server, last_round(9, 4))
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    refused: list[str] = []
    unavailable = {"title": "Service Unavailable", "status": 503, "code": "unavailable"}

    def refuse(route: Route) -> None:
        refused.append(route.request.url)
        route.fulfill(
            status=503, content_type="application/problem+json", body=json.dumps(unavailable)
        )

    page.route("**/score", refuse)
    page.locator('.htile[data-tile="2-3"]').focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    retry = page.locator("#score-retry")
    expect(retry).to_be_focused()
    expect(retry).to_have_text(words("score.retry"))
    expect(page.locator("#results-failed")).to_contain_text(words("score.failed"))
    expect(page.locator(".round-summary")).to_have_count(1)
    # Above the summary, where the final table goes.
    failed_bottom, summary_top = page.evaluate(
        """() => [document.querySelector('#results-failed').getBoundingClientRect().bottom,
                  document.querySelector('.round-summary').getBoundingClientRect().top]"""
    )
    assert failed_bottom <= summary_top, (failed_bottom, summary_top)
    screenshot(page, "scores-failed-1280")
    # The page tries again by itself, as the words of a 503 say ("the page keeps trying").
    tries = len(refused)
    page.wait_for_event("response", lambda r: r.url.endswith("/score"))
    expect(retry).to_be_focused()
    # Tried again while the server still fails: the failure stays, and so does the focus.
    tries = len(refused)
    with page.expect_response("**/score"):
        page.keyboard.press("Enter")
    assert len(refused) > tries, refused
    expect(retry).to_be_focused()
    page.unroute("**/score")
    page.keyboard.press("Enter")
    results = page.locator("#results")
    expect(results).to_be_focused()
    expect(page.locator("#results .winners")).to_have_text(words("score.you_win"))
    expect(page.locator("#results-failed")).to_have_count(0)
    screenshot(page, "retried-1280")


IN_VIEW = """e => { const r = e.getBoundingClientRect();
  return r.top >= 0 && r.bottom <= innerHeight; }"""


def test_on_a_phone_the_games_end_shows_and_says_who_won(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    """A phone's player taps the last tile at the foot of the page; the final table comes above
    the round's summary. Who won is brought into view, and said by the live region, which
    otherwise says only that the game is over."""
    page = new_page(viewport={"width": 375, "height": 667}, has_touch=True, is_mobile=True)
    game = create_from_position(table_server, last_round(9, 4))
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    # Where a phone's player is when it is their turn: at the foot of the page, by the hand.
    page.evaluate("scrollTo(0, document.documentElement.scrollHeight)")
    assert page.evaluate("scrollY") > 0
    page.locator('.htile[data-tile="2-3"]').tap()
    page.locator('.train-target.legal[data-train="0"]').tap()
    winners = page.locator("#results .winners")
    expect(winners).to_have_text(words("score.you_win"))
    expect(page.locator("#announce")).to_have_text(words("score.you_win"))
    assert winners.evaluate(IN_VIEW), page.evaluate("scrollY")
    screenshot(page, "end-375")


# A focus ring that shows on the paper of a panel: dark (WCAG's relative luminance).
RING_LUMINANCE = """e => {
  const style = getComputedStyle(e);
  if (style.outlineStyle === 'none' || parseFloat(style.outlineWidth) < 2) return 1;
  const [r, g, b] = style.outlineColor.match(/[\\d.]+/g).slice(0, 3).map(Number).map(c => {
    c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}"""


def test_the_keyboards_focus_ring_shows_on_a_panels_buttons(
    table_server: str, page: Page, screenshot: Callable[..., Path]
) -> None:
    """The ring is white with a dark halo, made for the felt; on the paper of the final table a
    white ring is lost, and a primary button's shadow replaces the halo. Tabbing to "Play
    again" after the game's end shows a ring that stands out from the paper."""
    game = create_from_position(table_server, last_round(9, 4))
    hold_seat(page, game, 0)
    wait_shown(page, game.version())
    page.locator('.htile[data-tile="2-3"]').focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    expect(page.locator("#results")).to_be_focused()
    page.keyboard.press("Tab")
    rematch = page.locator("#rematch")
    expect(rematch).to_be_focused()
    # Waited for: on a loaded machine the ring may be drawn a frame after the focus moves.
    page.wait_for_function(f"() => ({RING_LUMINANCE})(document.getElementById('rematch')) < 0.1")
    screenshot(page, "rematch-focused")
