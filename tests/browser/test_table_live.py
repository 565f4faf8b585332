"""The web table live: a game against three bots played to its end by clicking, two people at
one table through an invite link, the stream dropped by a restarted server, and moves sent
again, the view polled without a stream, and a new stream's ticket asked for, when the server
did not answer them, as soon as its Retry-After allows."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
from playwright.sync_api import APIResponse, Page, Request, Route, expect

from devstack.redis_server import RedisServer
from service.store import keys as store_keys
from tests.browser.blackhole import BlackHole
from tests.browser.harness import PageLog, Pages
from tests.browser.stack import TableStack
from tests.browser.table import (
    CATALOGUE,
    STORAGE_KEY,
    Game,
    create_from_position,
    create_game,
    create_in_page,
    double_six_rest,
    hold_clock,
    hold_seat,
    my_turn,
    play_turn_by_clicking,
    record_shown_versions,
    release_clock,
    seated_at_my_turn,
    shown_version,
    shown_versions,
    wait_settled,
    wait_shown,
    words,
)
from tests.e2e.nginx import ensure_nginx

# "Each sees the other's move within a second": a liveness bound, not a speed measurement.
SEEN_WITHIN_MS = 1000
# A 5 s turn clock, applied within a second of its deadline, and the entries shown.
CLOCK_MS = 10_000
# Requests a seat's token may make on a game in a minute, in the rate-limited stack below.
TOKEN_LIMIT = 30
# How long the test leaves the seat's rate window to run: the Retry-After the server then sends.
WINDOW_LEFT_S = 6
# Timer slack: a resend may start this much before the wait it honours is over by the clock.
SLACK_MS = 50
# The page's pace between two polls of the view while it has no stream (table.js, POLL_MS),
# and the longest it waits whatever Retry-After says (api.js, RETRY_MAX_MS).
POLL_MS = 3000
RETRY_MAX_MS = 30_000
# The Retry-After of the 429 the countdown test makes up: a wait of 3, 2, 1 s.
COUNTDOWN_S = 3
LANGUAGES = ("en", "sw", "tr", "ha", "ceb", "fi")
# The seat's rate window left when the page polls: its first refused poll comes within
# POLL_MS, so the Retry-After it gets asks for longer than POLL_MS.
POLL_WINDOW_LEFT_S = 9
# The page's wait before it asks again for a stream ticket that was refused, at most (live.js,
# RETRY_MS: 1 s after the stream drops, then 2 s); the seat's window left when its stream is cut
# is longer, so the Retry-After of the ticket refused asks for more than that.
TICKET_BACKOFF_MS = 2000
TICKET_WINDOW_LEFT_S = 9


def test_a_person_plays_three_bots_to_the_end_and_sees_the_apis_scores(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    page = new_page(viewport={"width": 1280, "height": 800})
    game = create_in_page(page, table_server, "ann", ["greedy", "random", "planner"])
    view = game.api("GET")
    assert [p["bot"] for p in view["players"]] == [None, "greedy", "random", "planner"]
    assert view["status"] == "in_round"  # dealt by itself: every seat was filled
    record_shown_versions(page)
    moves = 0
    while game.api("GET")["status"] != "game_over":
        wait_shown(page, game.version())
        if game.api("GET")["status"] == "game_over":
            break
        assert my_turn(page)
        if moves == 4 and page.locator(".htile.playable").count():
            # A tile chosen: the trains it may go to are highlighted.
            page.locator(".htile.playable").first.click()
            screenshot(page, "1280")
            page.keyboard.press("Escape")
            expect(page.locator(".htile.selected")).to_have_count(0)
        play_turn_by_clicking(page)
        moves += 1
    assert moves >= 3
    wait_shown(page, game.version())
    # The bots' replies were shown one after another, not all at once.
    versions = shown_versions(page)
    steps = [b - a for a, b in itertools.pairwise(versions)]
    assert steps.count(1) >= len(steps) * 0.8, (versions, steps)
    score = game.api("GET", "/score")
    results = page.locator("#results")
    expect(results).to_be_visible()
    for player in score["players"]:
        row = results.locator(f'tr[data-seat="{player["seat"]}"]')
        expect(row.locator("td.total")).to_have_text(str(player["total"]))
    # Every entry reached the log, the one that ended the game too.
    expect(page.locator(".log li").last).to_contain_text("The game is over")
    winners = ["You" if s == 0 else score["players"][s]["name"] for s in score["winners"]]
    for name in winners:
        expect(results.locator(".winners")).to_contain_text(name)
    screenshot(page, "final")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "final-390", full_page=True)


def test_two_people_at_one_table_through_an_invite_link(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    host = new_page(viewport={"width": 1280, "height": 800})
    streams: list[str] = []
    host.on(
        "request",
        lambda r: streams.append(r.url) if r.headers.get("accept") == "text/event-stream" else None,
    )
    game = create_in_page(host, table_server, "ann", ["open"], rounds="1")
    # The creator keeps its seat's token and the table token, never the host token: a seated
    # player holding it could read every hand.
    held = host.evaluate("k => JSON.parse(localStorage.getItem(k))", STORAGE_KEY)[game.game_id]
    assert "hostToken" not in held and held["tableToken"] and held["token"]
    assert "hand" not in game.api("GET", token=held["tableToken"])
    position = f"{table_server}/api/v1/games/{game.game_id}/position"
    bearer = {"Authorization": f"Bearer {held['tableToken']}"}
    assert requests.get(position, headers=bearer, timeout=10).status_code == 403
    invite_field = host.get_by_role("textbox", name="Invite for seat 2", exact=True)
    expect(invite_field).to_be_visible()
    expect(host.locator("#start")).to_be_disabled()
    invite = invite_field.input_value()
    assert f"/#/join/{game.game_id}/" in invite
    screenshot(host, "lobby")

    guest = new_page(viewport={"width": 390, "height": 844})
    guest.goto(invite)
    expect(guest.locator(".lead")).to_contain_text("with ann")
    guest.get_by_label("Your name").fill("bo")
    guest.get_by_role("button", name="Take my seat").click()
    guest.wait_for_url(f"**/#/game/{game.game_id}")
    assert "join" not in guest.url
    # The seat survives a reload: the token is in the browser's storage, not the address.
    guest.reload()
    expect(guest.locator(".badge.you")).to_be_visible()
    expect(guest.locator(".player.me .name")).to_have_text("bo")
    # Every seat is taken: the host starts the game (or it was dealt by itself).
    if game.api("GET")["status"] == "waiting_deal":
        host.locator("#start").click()
    pages = {0: host, 1: guest}
    for _ in range(4):  # two moves each way
        view = game.api("GET")
        if view["status"] != "in_round":
            break
        mover, watcher = pages[view["turn"]], pages[1 - view["turn"]]
        wait_shown(mover, view["version"])
        played = play_turn_by_clicking(mover)
        (
            watcher.wait_for_function(
                "v => Number(document.getElementById('app').dataset.version) >= v",
                arg=shown_version(mover),
                timeout=SEEN_WITHIN_MS,
            ),
            played,
        )
    screenshot(guest, "guest-390")
    # Its streams carried single-use tickets, never a token, in their addresses.
    tickets = [re.search(r"access_token=([^&]+)", url) for url in streams]
    assert tickets and all(t is not None and t.group(1).startswith("st.") for t in tickets)

    # The invite seated one person; a second use, or a made-up one, says so.
    third = new_page()
    third.goto(invite)
    third.get_by_label("Your name").fill("cy")
    new_page.log(third).allow(r"status of 409")
    third.get_by_role("button", name="Take my seat").click()
    expect(third.locator("#join-problem")).to_contain_text("already been used")
    new_page.log(third).allow(r"status of 404")
    third.goto(f"{table_server}/#/join/{game.game_id}/not-an-invite")
    third.get_by_label("Your name").fill("cy")
    third.get_by_role("button", name="Take my seat").click()
    expect(third.locator("#join-problem")).to_contain_text("not valid")


def test_a_restarted_server_shows_the_notice_and_the_table_catches_up(
    own_table_server: TableStack, new_page: Pages
) -> None:
    base = own_table_server.url
    page = new_page(viewport={"width": 1280, "height": 800})
    log = new_page.log(page)
    # While the streams pool is down nginx answers the stream with 502/503: the page says so
    # and retries.
    log.allow(r"status of 50[234] .*/events\?")
    log.allow(r"net::ERR_(INCOMPLETE_CHUNKED_ENCODING|EMPTY_RESPONSE|CONNECTION_RESET)")
    game = create_game(base, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)  # seed 1: bo (seat 1) starts
    hold_seat(page, game, 0)
    notice = page.locator("#connection")
    expect(notice).to_contain_text("Live")
    version = shown_version(page)

    own_table_server.stop_streams()
    expect(notice).to_contain_text("Connection lost")
    # bo moves while the stream is down; the table catches up once it is back.
    move = game.api("GET", "/legal-moves", game.tokens[1])["moves"][0]
    game.api("POST", "/moves", game.tokens[1], json=move)
    own_table_server.start_streams()
    wait_shown(page, version + 1)
    expect(notice).to_contain_text("Live")
    expect(notice).not_to_contain_text("Connection lost")
    assert (
        requests.get(f"{base}/api/v1/games/{game.game_id}", timeout=10).json()["version"]
        >= version + 1
    )


def test_a_table_opened_while_no_app_answers_says_so_in_words_and_opens_once_back(
    own_table_server: TableStack, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    """A person who opens (or reloads) the table while no API instance answers reads why in
    words, not nginx's problem body meant for programs, and the table opens by itself, at the
    game in its address, once an instance answers again."""
    base = own_table_server.url
    page = new_page(viewport={"width": 390, "height": 844})
    new_page.log(page).allow(r"status of 503")
    game = create_game(base, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)
    hold_seat(page, game, 0)
    own_table_server.stop_api()
    page.reload()
    heading = page.get_by_role("heading", level=1)
    expect(heading).to_have_text("The game server is not answering")
    expect(page.locator("body")).to_contain_text("tries again by itself")
    expect(page.locator("body")).not_to_contain_text("urn:mexican-train")
    screenshot(page, "down")
    own_table_server.start_api()
    expect(page.locator("#app[data-version]")).to_be_visible(timeout=60_000)
    expect(page.locator(".players")).to_contain_text("bo")
    screenshot(page, "back")


def test_a_move_made_while_the_server_is_away_is_sent_again_or_said_not_played(
    own_table_server: TableStack, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    base = own_table_server.url
    page = new_page(viewport={"width": 1280, "height": 800})
    log = new_page.log(page)
    # While the API pool is down nginx answers every API request 503; the cut moves are aborted.
    log.allow(r"status of 50[234]")
    log.allow(r"status of 409 .*/moves")
    log.allow(r"net::ERR_(FAILED|INCOMPLETE_CHUNKED_ENCODING|EMPTY_RESPONSE|CONNECTION_RESET)")
    keys: list[str] = []
    page.on(
        "request",
        lambda r: (
            keys.append(r.headers.get("idempotency-key", ""))
            if r.method == "POST" and r.url.endswith("/moves")
            else None
        ),
    )
    game, me, version = seated_at_my_turn(page, base)
    problem = page.locator("#problem")

    own_table_server.stop_api()
    tile = page.locator(".htile.playable").first
    name = tile.get_attribute("data-tile") or ""
    tile.click()
    page.locator(".train-target.legal").first.click()
    expect(problem).to_contain_text(f"Your move ({name}, ")
    expect(problem).to_contain_text("sends it again until the server answers")
    expect(page.locator("button.action:enabled")).to_have_count(0)
    expect(page.locator("#hint")).to_have_text(words("hint.sending"))
    screenshot(page, "resending")
    page.wait_for_timeout(3000)  # long enough for a resend into the 503s
    own_table_server.start_api()
    wait_shown(page, version + 1)
    expect(problem).to_be_hidden()
    assert game.version() == version + 1  # applied once
    hand = {f"{a}-{b}" for a, b in game.api("GET", "", game.tokens[me])["hand"]}
    assert name not in hand
    assert len(keys) >= 2 and len(set(keys)) == 1, keys  # every resend under the same key

    # Cut again; meanwhile the table moves on without this page: the resend is refused, and
    # the player is told the move was not played.
    while True:
        view = game.api("GET")
        seat = view["turn"]
        moves = game.api("GET", "/legal-moves", game.tokens[seat])["moves"]
        if seat == me and any(m["action"] == "play" for m in moves):
            break
        game.api("POST", "/moves", game.tokens[seat], json=moves[0])
    wait_shown(page, game.version())
    page.route("**/moves", lambda route: route.abort())
    tile = page.locator(".htile.playable").first
    name = tile.get_attribute("data-tile") or ""
    tile.click()
    train = page.locator(".train-target.legal").first
    target = train.get_attribute("data-train")
    train.click()
    expect(problem).to_contain_text("sends it again until the server answers")
    a, b = (int(x) for x in name.split("-"))
    game.api(
        "POST", "/moves", game.tokens[me], json={"action": "play", "tile": [a, b], "train": target}
    )
    page.unroute("**/moves")
    expect(problem).to_contain_text(f"Your move ({name}, ", timeout=10_000)
    expect(problem).to_contain_text("was not played")
    expect(page.locator(".htile.selected")).to_have_count(0)
    screenshot(page, "not-played")


def test_the_top_bar_says_the_connection_is_lost_while_a_move_gets_no_answer(
    own_table_server: TableStack, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    """With the API pool stopped and the streams pool up, the stream alone would keep the top
    bar at "Live" under a hint that the move has not reached the server: while the move gets no
    answer the bar says the connection is lost, and "Live" again once it is answered."""
    base = own_table_server.url
    page = new_page(viewport={"width": 1280, "height": 800})
    new_page.log(page).allow(r"status of 50[234]")
    _, _, version = seated_at_my_turn(page, base)
    notice = page.locator("#connection")
    expect(notice).to_have_text(words("connection.live"))

    own_table_server.stop_api()
    page.locator(".htile.playable").first.click()
    page.locator(".train-target.legal").first.click()
    expect(page.locator("#problem")).to_contain_text("sends it again until the server answers")
    expect(notice).to_have_text(words("connection.down"))
    screenshot(page, "no-answer")
    own_table_server.start_api()
    wait_shown(page, version + 1)
    expect(notice).to_have_text(words("connection.live"))
    screenshot(page, "answered")


def test_a_move_answered_by_the_apps_own_503_does_not_say_the_connection_is_lost(
    table_server: str, new_page: Pages
) -> None:
    """The app answers the move with a problem of its own (503 storage_full: Redis is out of
    memory): the server was reached, so the top bar stays "Live" while the hint under the
    hand says the move is sent again; nginx's 503 ``unavailable`` (no instance answered) is
    the one that says the connection is lost."""
    page = new_page(viewport={"width": 1280, "height": 800})
    new_page.log(page).allow(r"status of 503")
    _, _, version = seated_at_my_turn(page, table_server)
    notice = page.locator("#connection")
    expect(notice).to_have_text(words("connection.live"))
    full = {"title": "Service Unavailable", "status": 503, "code": "storage_full"}
    answered: list[str] = []

    def storage_full(route: Route) -> None:
        answered.append(route.request.url)
        route.fulfill(status=503, content_type="application/problem+json", body=json.dumps(full))

    page.route("**/moves", storage_full)
    page.locator(".htile.playable").first.click()
    page.locator(".train-target.legal").first.click()
    # The bar is set before the hint says the move is sent again (heardFromServer, resendIn).
    expect(page.locator("#problem")).to_contain_text("sends it again until the server answers")
    assert answered and notice.inner_text() == words("connection.live")
    page.unroute("**/moves")
    wait_shown(page, version + 1)
    expect(notice).to_have_text(words("connection.live"))


def test_a_table_left_while_its_move_gets_no_answer_leaves_the_top_bar_alone(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    """The top bar is the page's, not the table's: a table left (for the leaderboard, here)
    while its move is on its way says nothing there when that move's 503 comes, or the next
    page would read "Connection lost" with no connection of its own."""
    page = new_page(viewport={"width": 1280, "height": 800})
    new_page.log(page).allow(r"status of 503")
    game = create_game(table_server, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)
    me = game.api("GET")["turn"]
    hold_seat(page, game, me)
    wait_shown(page, game.version())
    notice = page.locator("#connection")
    expect(notice).to_have_text(words("connection.live"))
    held: list[Route] = []
    page.route("**/moves", lambda route: held.append(route))
    page.locator(".htile.playable").first.click()
    with page.expect_request("**/moves"):
        page.locator(".train-target.legal").first.click()
    page.locator("#to-leaderboard").click()
    expect(page.locator(".players")).to_have_count(0)
    expect(notice).to_have_text("")
    unavailable = {"title": "Service Unavailable", "status": 503, "code": "unavailable"}
    with page.expect_event("requestfinished"):
        held[0].fulfill(
            status=503, content_type="application/problem+json", body=json.dumps(unavailable)
        )
    page.evaluate("() => new Promise((done) => setTimeout(done, 200))")  # the answer's handling
    screenshot(page, "left")
    assert notice.inner_text() == ""


def test_the_turn_clock_counts_down_and_the_server_plays_an_overdue_turn(
    table_server: str, new_page: Pages
) -> None:
    page = new_page(viewport={"width": 1280, "height": 800})
    game = create_game(
        table_server,
        {
            "players": [{"name": "ann"}, {"name": "cpu", "bot": "greedy"}],
            "turn_seconds": 5,
            "auto_deal": True,
            "seed": 3,
        },
    )
    view = game.api("GET")
    assert view["status"] == "in_round" and view["turn"] == 0 and view["clock"]["deadline"]
    hold_seat(page, game, 0)
    clock = page.locator(".clock-bar.mine .clock-left")
    expect(clock).to_have_text(re.compile(r"0:0[0-5]"))
    first = clock.inner_text()
    expect(clock).not_to_have_text(first)  # it counts down
    # Nobody moves: when the time is up the server plays ann's turn, and the table shows it.
    expect(page.locator(".log")).to_contain_text("(time ran out)", timeout=CLOCK_MS)
    assert game.version() > view["version"]


def test_the_host_hands_an_absent_players_seat_to_a_bot(table_server: str, new_page: Pages) -> None:
    page = new_page(viewport={"width": 1280, "height": 800})
    game = create_game(table_server, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)  # seed 1: bo (seat 1) starts, and is away
    hold_seat(page, game, 0, host=True)
    version = game.version()
    page.get_by_role("button", name="Let a bot play for bo").click()
    # Nothing happens until the host confirms; cancelling leaves the seat as it was.
    confirm = page.locator('.player[data-seat="1"] .confirm')
    expect(confirm).to_contain_text(words("host.take_over_question", name="bo"))
    confirm.get_by_role("button", name=words("host.cancel")).click()
    expect(confirm).to_have_count(0)
    assert game.version() == version and game.api("GET")["players"][1]["bot"] is None
    page.get_by_role("button", name="Let a bot play for bo").click()
    confirm.get_by_role("button", name=words("host.take_over_yes")).click()
    # The bot takes seat 1 and plays bo's turn at once; then it is ann's turn.
    expect(page.locator('.player[data-seat="1"] .badge.bot')).to_contain_text("planner")
    wait_shown(page, version + 2)
    expect(page.locator(".turn-banner")).to_have_text("Your turn")
    assert game.api("GET")["players"][1]["bot"] == "planner"


def finished_posts(page: Page) -> list[dict[str, Any]]:
    """From now on, each move the page POSTs, once answered (as ``finished``)."""
    return finished(page, lambda r: r.method == "POST" and r.url.endswith("/moves"))


def finished(page: Page, wanted: Callable[[Request], bool]) -> list[dict[str, Any]]:
    """From now on, each request ``wanted`` picks, once answered: its Idempotency-Key, its
    status, its Retry-After, and when (the browser's clock, ms) it was sent and its answer
    ended."""
    posts: list[dict[str, Any]] = []

    def done(request: Request) -> None:
        if not wanted(request):
            return
        response = request.response()
        timing = request.timing
        posts.append(
            {
                "key": request.headers.get("idempotency-key"),
                "status": response.status if response else None,
                "retry_after": response.headers.get("retry-after") if response else None,
                "sent": timing["startTime"],
                "answered": timing["startTime"] + timing["responseEnd"],
            }
        )

    page.on("requestfinished", done)
    return posts


@pytest.fixture()
def rate_limited_server(redis_server: RedisServer, tmp_path: Path) -> Iterator[TableStack]:
    """A stack of this test's own that refuses a seat's requests past TOKEN_LIMIT a minute."""
    ensure_nginx()
    limits = {"RATE_LIMIT_PER_MINUTE": str(TOKEN_LIMIT)}
    with TableStack(redis_server.url, tmp_path, limits) as stack:
        yield stack


def spend_the_seats_minute(
    stack: TableStack, redis_server: RedisServer, game: Game, seat: int, left_s: int
) -> None:
    """The seat spends its minute's requests; its window is then brought to end in ``left_s``
    seconds (in this test's own Redis), so the test does not wait a minute."""
    url = f"{stack.url}/api/v1/games/{game.game_id}"
    bearer = {"Authorization": f"Bearer {game.tokens[seat]}"}
    for _ in range(TOKEN_LIMIT + 1):
        if requests.get(url, headers=bearer, timeout=10).status_code == 429:
            break
    else:
        raise AssertionError(f"no 429 after {TOKEN_LIMIT + 1} requests")
    with redis.Redis.from_url(redis_server.url) as client:
        counter = store_keys.rate_key(game.game_id, game.tokens[seat] or "")
        assert client.expire(counter, left_s)


def test_a_move_answered_429_is_sent_again_as_retry_after_says(
    rate_limited_server: TableStack,
    redis_server: RedisServer,
    new_page: Pages,
    screenshot: Callable[..., Path],
) -> None:
    stack = rate_limited_server
    page = new_page(viewport={"width": 1280, "height": 800})
    # The table's own reads are refused too while the seat is over its limit.
    new_page.log(page).allow(r"status of 429")
    game = create_game(stack.url, {"players": ["ann", "bo"], "options": {"set": 6}, "seed": 5})
    game.api("POST", "/deal", game.host_token)
    me = game.api("GET")["turn"]
    hold_seat(page, game, me)
    version = game.version()
    wait_shown(page, version)
    posts = finished_posts(page)
    spend_the_seats_minute(stack, redis_server, game, me, WINDOW_LEFT_S)

    tile = page.locator(".htile.playable").first
    name = tile.get_attribute("data-tile") or ""
    tile.click()
    with page.expect_request_finished(lambda r: r.method == "POST" and "/moves" in r.url):
        page.locator(".train-target.legal").first.click()
    first = posts[0]
    assert first["status"] == 429 and first["retry_after"], first
    asked = int(first["retry_after"])
    assert 1 <= asked <= WINDOW_LEFT_S, first
    # The player is told the move waits, and for how long the server asked.
    problem = page.locator("#problem")
    form = "one" if asked == 1 else "other"
    before, after = words(f"move.resending_after.{form}", n=asked).split("{move}")
    expect(problem).to_contain_text(f"{before}{name}, ")
    expect(problem).to_contain_text(after)
    expect(page.locator("button.action:enabled")).to_have_count(0)
    screenshot(page, "waiting")
    if asked > 1:  # the wait shown counts down (a wait of 1 s has nothing to count)
        expect(problem).to_contain_text(resend_text("en", asked - 1))

    wait_shown(page, version + 1)
    expect(problem).to_be_hidden()
    assert game.version() == version + 1  # applied once
    hand = {f"{a}-{b}" for a, b in game.api("GET", "", game.tokens[me])["hand"]}
    assert name not in hand
    assert posts[-1]["status"] in (200, 201), posts
    assert len({p["key"] for p in posts}) == 1, posts  # every resend under the same key
    # Each resend waited as long as the answer before it asked: the usual 2 s pace would not
    # wait out a 6 s Retry-After.
    for earlier, later in itertools.pairwise(posts):
        assert earlier["status"] == 429, posts
        waited = later["sent"] - earlier["answered"]
        assert waited >= int(earlier["retry_after"]) * 1000 - SLACK_MS, posts


def test_without_a_stream_a_poll_answered_429_waits_as_retry_after_says(
    rate_limited_server: TableStack,
    redis_server: RedisServer,
    new_page: Pages,
    screenshot: Callable[..., Path],
) -> None:
    stack = rate_limited_server
    page = new_page(viewport={"width": 1280, "height": 800})
    log = new_page.log(page)
    log.allow(r"status of 429")
    log.allow(r"net::ERR_FAILED")  # the streams cut below
    # Every stream the page opens (with its ticket) is cut: the page polls the view instead.
    page.route(re.compile(r"/events\?.*access_token="), lambda route: route.abort())
    game = create_game(stack.url, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)  # seed 1: bo (seat 1) starts
    hold_seat(page, game, 0)
    expect(page.locator("#connection")).to_have_text(words("connection.down"))
    # From now on no ticket reaches the server either: the seat's limit is met by a poll (a
    # ticket refused would hold the polls back without one being refused).
    page.route("**/stream-tickets", lambda route: route.abort())
    version = game.version()
    view_url = f"{stack.url}/api/v1/games/{game.game_id}"
    polls = finished(page, lambda r: r.method == "GET" and r.url == view_url)
    spend_the_seats_minute(stack, redis_server, game, 0, POLL_WINDOW_LEFT_S)
    # bo moves meanwhile: the table shows it once a poll is answered again.
    move = game.api("GET", "/legal-moves", game.tokens[1])["moves"][0]
    game.api("POST", "/moves", game.tokens[1], json=move)
    expect(page.locator("#problem")).to_have_text(words("refuse.rate_limited"))
    screenshot(page, "refused")
    wait_shown(page, version + 1)
    expect(page.locator("#problem")).to_be_hidden()
    refused = [p for p in polls if p["status"] == 429]
    assert refused and int(refused[0]["retry_after"]) * 1000 > POLL_MS, polls
    # The table may show the view before the browser reports its request finished.
    wait_until(page, lambda: polls[-1]["status"] == 200, 10_000)
    # The usual pace would poll into the same window again.
    assert_each_waited_as_asked(polls)


def test_a_stream_ticket_answered_429_is_asked_again_as_retry_after_says(
    rate_limited_server: TableStack, redis_server: RedisServer, new_page: Pages
) -> None:
    stack = rate_limited_server
    page = new_page(viewport={"width": 1280, "height": 800})
    log = new_page.log(page)
    log.allow(r"status of 429")
    # While the streams pool is down nginx answers the stream with 502/503.
    log.allow(r"status of 50[234] .*/events\?")
    log.allow(r"net::ERR_(INCOMPLETE_CHUNKED_ENCODING|EMPTY_RESPONSE|CONNECTION_RESET)")
    game = create_game(stack.url, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)
    hold_seat(page, game, 0)
    notice = page.locator("#connection")
    expect(notice).to_have_text(words("connection.live"))
    tickets = finished(page, lambda r: r.method == "POST" and r.url.endswith("/stream-tickets"))
    spend_the_seats_minute(stack, redis_server, game, 0, TICKET_WINDOW_LEFT_S)
    # The stream cut: the page asks for a new ticket, which is refused until the window ends.
    stack.stop_streams()
    expect(notice).to_have_text(words("connection.down"))
    stack.start_streams()
    expect(notice).to_have_text(words("connection.live"), timeout=RETRY_MAX_MS)
    refused = [t for t in tickets if t["status"] == 429]
    assert refused and int(refused[0]["retry_after"]) * 1000 > TICKET_BACKOFF_MS, tickets
    assert tickets[-1]["status"] == 201, tickets
    # The usual backoff would ask into the same window again, and count against the seat's limit.
    assert_each_waited_as_asked(tickets)


def assert_each_waited_as_asked(requests_made: list[dict[str, Any]]) -> None:
    """Each request after a 429 went out no sooner than its Retry-After asked (up to the
    page's bound)."""
    for earlier, later in itertools.pairwise(requests_made):
        if earlier["status"] == 429:
            asked = min(int(earlier["retry_after"]) * 1000, RETRY_MAX_MS)
            assert later["sent"] - earlier["answered"] >= asked - SLACK_MS, requests_made


def resend_text(language: str, n: int) -> re.Pattern[str]:
    """The words of a move waiting ``n`` more seconds to be sent again, whatever the move."""
    text = re.escape(CATALOGUE[language][f"move.resending_after.{'one' if n == 1 else 'other'}"])
    return re.compile(text.replace(r"\{move\}", "[^)]+").replace(r"\{n\}", str(n)))


def test_the_wait_before_a_resend_counts_down_and_the_hint_waits_in_every_language(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    page = new_page(viewport={"width": 1280, "height": 800})
    new_page.log(page).allow(r"status of 429")
    problem = {"title": "Too Many Requests", "status": 429, "code": "rate_limited"}
    page.route(
        "**/moves",
        lambda route: route.fulfill(
            status=429,
            headers={"Retry-After": str(COUNTDOWN_S)},
            content_type="application/problem+json",
            body=json.dumps(problem),
        ),
    )
    for language in LANGUAGES:
        game = create_game(
            table_server, {"players": ["ann", "bo"], "options": {"set": 6}, "seed": 5}
        )
        game.api("POST", "/deal", game.host_token)
        me = game.api("GET")["turn"]
        hold_seat(page, game, me, language=language)
        wait_shown(page, game.version())
        page.locator(".htile.playable").first.click()
        page.locator(".train-target.legal").first.click()
        # The tile stays chosen while its move waits: the hint says the move is on its way,
        # not to choose a train for it.
        expect(page.locator("#hint")).to_have_text(words("hint.sending", language))
        for left in range(COUNTDOWN_S, 0, -1):
            expect(page.locator("#problem")).to_contain_text(resend_text(language, left))
            if left == 2:
                screenshot(page, f"countdown-{language}")
        # Read out once, with the wait first asked: not again every second.
        said = page.locator("#problem .visually-hidden")
        expect(said).to_have_text(resend_text(language, COUNTDOWN_S))


def test_retry_after_is_read_as_seconds_or_a_date_and_bounded(
    table_server: str, page: Page
) -> None:
    """The page's reading of Retry-After, in the browser: the server sends seconds (above);
    proxies may send an HTTP-date, read against the answer's Date, or absurd waits. A wait
    shorter than the page's own 2 s between resends (nginx's 503 asks 1 s) keeps that pace."""
    page.goto(table_server + "/")
    read = page.evaluate(
        """async () => {
          const api = await import('/table/api.js');
          const date = 'Wed, 21 Oct 2015 07:28:00 GMT';
          return {
            seconds: api.retryAfterMs(' 7 ', null),
            date: api.retryAfterMs('Wed, 21 Oct 2015 07:28:12 GMT', date),
            past: api.retryAfterMs('Wed, 21 Oct 2015 07:27:00 GMT', date),
            junk: api.retryAfterMs('soon', date),
            none: api.retryAfterMs(null, date),
            long: api.retryWait({retryAfter: 3600 * 1000}, 2000),
            short: api.retryWait({retryAfter: 1000}, 2000),
            asked: api.retryWait({retryAfter: 7000}, 2000),
            without: api.retryWait({retryAfter: null}, 2000),
            most: api.RETRY_MAX_MS,
          };
        }"""
    )
    assert read == {
        "seconds": 7000,
        "date": 12000,
        "past": 0,
        "junk": None,
        "none": None,
        "long": 30000,
        "short": 2000,
        "asked": 7000,
        "without": 2000,
        "most": 30000,
    }


# The made-up Retry-After of each case, longer than the longest wait of the request kind that
# must honour it: a 429 on a poll holds back stream tickets, which the page asks for again up to
# 15 s apart (live.js, RETRY_MS); a 429 on a ticket holds back polls, which go out every POLL_MS.
# Twice POLL_MS: a poll that ignored the pause would go out within its first half.
SHARED_PAUSE_S = {"poll": 16, "ticket": 2 * POLL_MS // 1000}
# A request the page sent before its script had read the 429 (the answer's end is timed by the
# network stack, a little earlier) could not be held back by it.
READ_MS = 250


@pytest.mark.parametrize("refused", ["poll", "ticket"])
def test_a_429_holds_back_every_request_counted_against_the_seats_limit(
    table_server: str, new_page: Pages, refused: str
) -> None:
    """The view polled and the stream's tickets count against one limit (the seat's token on
    the game): a 429 on either holds back both for as long as its Retry-After asks."""
    pause_s = SHARED_PAUSE_S[refused]
    page = new_page(viewport={"width": 1280, "height": 800})
    log = new_page.log(page)
    log.allow(r"status of 429")
    log.allow(r"net::ERR_FAILED")  # the streams cut below
    # Every stream is cut, so the page both polls the view and keeps asking for a new ticket.
    page.route(re.compile(r"/events\?.*access_token="), lambda route: route.abort())
    game = create_game(table_server, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)
    hold_seat(page, game, 0)
    expect(page.locator("#connection")).to_have_text(words("connection.down"))
    view_url = f"{table_server}/api/v1/games/{game.game_id}"

    def poll(request: Request) -> bool:
        return request.method == "GET" and request.url == view_url

    def ticket(request: Request) -> bool:
        return request.method == "POST" and request.url.endswith("/stream-tickets")

    counted = finished(page, lambda r: poll(r) or ticket(r))
    refuse = poll if refused == "poll" else ticket
    problem = {"title": "Too Many Requests", "status": 429, "code": "rate_limited"}
    refusals: list[str] = []

    def refuse_once(route: Route) -> None:
        if refusals or not refuse(route.request):
            route.fallback()
            return
        refusals.append(route.request.url)
        route.fulfill(
            status=429,
            headers={"Retry-After": str(pause_s)},
            content_type="application/problem+json",
            body=json.dumps(problem),
        )

    def refused_now(request: Request) -> bool:
        response = request.response()
        return refuse(request) and response is not None and response.status == 429

    page.route(re.compile(r"/api/v1/games/"), refuse_once)
    page.wait_for_event("requestfinished", refused_now, timeout=30_000)
    answered = next(r["answered"] for r in counted if r["status"] == 429)
    # The next request either kind sends after that answer waits out its Retry-After.
    page.wait_for_event(
        "requestfinished",
        lambda r: (poll(r) or ticket(r)) and r.timing["startTime"] > answered + READ_MS,
        timeout=(pause_s + 20) * 1000,
    )
    after = [r for r in counted if r["sent"] > answered + READ_MS]
    assert after, counted
    assert after[0]["sent"] - answered >= pause_s * 1000 - SLACK_MS, counted


def test_a_move_in_flight_reads_as_on_its_way_and_offers_no_train(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    """Until the server answers a move, its tile says the move is on its way, and no train says
    "play here" and no other tile looks or reads as playable: a click there could do nothing
    (one move at a time)."""
    page = new_page(viewport={"width": 1280, "height": 800})
    game = create_game(table_server, {"players": ["ann", "bo"], "options": {"set": 6}, "seed": 5})
    game.api("POST", "/deal", game.host_token)
    me = game.api("GET")["turn"]
    hold_seat(page, game, me)
    version = game.version()
    wait_shown(page, version)
    held: list[Route] = []
    # The server's answer waits until the test lets the move go on.
    page.route("**/moves", lambda route: held.append(route))
    playable = page.locator(".htile.playable")
    # Another playable tile stays in the hand while the first is on its way.
    assert playable.count() >= 2, playable.count()
    tile = playable.first
    name = tile.get_attribute("data-tile") or ""
    tile.click()
    target = page.locator(".train-target.legal").first
    train = target.get_attribute("data-train") or ""
    with page.expect_request("**/moves"):
        target.click()
    expect(page.locator("#hint")).to_have_text(words("hint.sending"))
    expect(page.locator(".train-target.legal")).to_have_count(0)
    expect(page.locator(".play-flag")).to_have_count(0)
    sent = page.locator(f'.htile[data-tile="{name}"]')
    expect(sent).to_have_class(re.compile(r"\bsending\b"))
    expect(sent).to_have_attribute("aria-label", re.compile(re.escape(words("tile.sending"))))
    expect(page.locator(f'.train[data-train="{train}"] .sending-flag')).to_have_text(
        words("train.sending")
    )
    expect(playable).to_have_count(0)
    expect(page.locator(".htile .tick")).to_have_count(0)
    labels = page.locator(".htile").evaluate_all("tiles => tiles.map(t => t.ariaLabel)")
    assert not [label for label in labels if words("tile.playable") in label.split(", ")], labels
    screenshot(page, "in-flight")
    assert len(held) == 1, held
    held[0].fallback()
    wait_shown(page, version + 1)
    expect(page.locator(".htile.sending, .sending-flag")).to_have_count(0)
    assert game.version() == version + 1


def test_a_table_whose_first_stream_ticket_is_refused_says_so_and_polls(
    table_server: str, new_page: Pages
) -> None:
    """A table opened while the server issues no stream ticket is not left showing the view it
    opened with: it says the connection is lost and fetches the view until a stream opens."""
    page = new_page(viewport={"width": 1280, "height": 800})
    new_page.log(page).allow(r"status of 503")
    unavailable = {"title": "Service Unavailable", "status": 503, "code": "unavailable"}
    page.route(
        "**/stream-tickets",
        lambda route: route.fulfill(
            status=503, content_type="application/problem+json", body=json.dumps(unavailable)
        ),
    )
    game = create_game(table_server, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)  # seed 1: bo (seat 1) starts
    hold_seat(page, game, 0)
    version = game.version()
    wait_shown(page, version)
    expect(page.locator("#connection")).to_have_text(words("connection.down"))
    move = game.api("GET", "/legal-moves", game.tokens[1])["moves"][0]
    game.api("POST", "/moves", game.tokens[1], json=move)
    wait_shown(page, version + 1)


def test_a_device_gone_offline_says_so_and_catches_up_once_back_online(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    """The browser knows when the device loses its network: the table says the connection is
    lost then, rather than "Live" over a stream that brings nothing, and it reconnects as soon
    as the network is back, not at the next step of its backoff."""
    page = new_page(viewport={"width": 1280, "height": 800})
    log = new_page.log(page)
    log.allow(r"net::ERR_INTERNET_DISCONNECTED")
    game = create_game(table_server, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)  # seed 1: bo (seat 1) starts
    hold_seat(page, game, 0)
    notice = page.locator("#connection")
    expect(notice).to_have_text(words("connection.live"))
    version = game.version()
    page.context.set_offline(True)
    expect(notice).to_have_text(words("connection.down"))
    move = game.api("GET", "/legal-moves", game.tokens[1])["moves"][0]
    game.api("POST", "/moves", game.tokens[1], json=move)
    screenshot(page, "offline")
    page.context.set_offline(False)
    expect(notice).to_have_text(words("connection.live"))
    wait_shown(page, version + 1)
    screenshot(page, "back-online")


# How long a stream may bring nothing before the page takes it for dead (live.js, SILENT_MS),
# and the server's longest quiet on a stream (formats.py, KEEPALIVE_SECONDS): a live stream is
# never silent that long, and a dead one is found within SILENT_MS of its last keep-alive.
SILENT_MS = 35_000
KEEPALIVE_MS = 10_000


def test_a_stream_gone_silent_without_closing_is_opened_again_with_a_new_ticket(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    """A connection dropped on the way (a NAT's, with no FIN) leaves an open stream that brings
    nothing and never fails, and the browser does not go offline. The page opens another, with
    a new ticket, once nothing (not even the server's keep-alive) has come for SILENT_MS; a
    quiet but live stream, kept alive by those comments, is left alone."""
    with BlackHole(table_server) as hole:
        page = new_page(viewport={"width": 1280, "height": 800})
        tickets = finished(page, lambda r: r.method == "POST" and r.url.endswith("/stream-tickets"))
        game = create_game(hole.url, {"players": ["ann", "bo"], "seed": 1})
        game.api("POST", "/deal", game.host_token)  # seed 1: bo (seat 1) starts
        hold_seat(page, game, 0)
        notice = page.locator("#connection")
        expect(notice).to_have_text(words("connection.live"))
        version = game.version()
        wait_shown(page, version)
        opened = len(tickets)
        # Nothing happens at the table for longer than SILENT_MS: only keep-alives come.
        page.wait_for_timeout(SILENT_MS + KEEPALIVE_MS // 2)
        assert len(tickets) == opened, tickets
        expect(notice).to_have_text(words("connection.live"))
        assert hole.silence_streams() == 1
        move = game.api("GET", "/legal-moves", game.tokens[1])["moves"][0]
        game.api("POST", "/moves", game.tokens[1], json=move)
        screenshot(page, "silenced")
        # Seen only through a new stream (nothing polls while the page believes it is live).
        wait_shown(page, version + 1)
        assert len(tickets) == opened + 1 and tickets[-1]["status"] == 201, tickets
        expect(notice).to_have_text(words("connection.live"))
        screenshot(page, "opened-again")


# How long the test counts the streams that end at once, and the most the page may open in that
# time: its backoff (live.js, RETRY_MS) opens them 1, 3 and 7 s after the first drop, where one
# reopened every second would be 9 or 10.
EMPTY_STREAMS_S = 10
EMPTY_STREAMS_MOST = 4


def test_streams_answered_200_and_closed_at_once_are_reopened_at_the_backoffs_pace(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    """A stream that ends as soon as it is answered 200 (a proxy cutting long answers) has not
    worked: the page does not start its backoff over on that answer, so it opens such streams
    1, 2, 4 s... apart, not every second. A stream that brings an entry has worked: dropped after
    that, it is reopened after the first step, 1 s."""
    with BlackHole(table_server) as hole:
        page = new_page(viewport={"width": 1280, "height": 800})
        new_page.log(page).allow(r"ERR_INCOMPLETE_CHUNKED_ENCODING")  # the streams cut here
        game = create_game(hole.url, {"players": ["ann", "bo"], "seed": 1})
        game.api("POST", "/deal", game.host_token)  # seed 1: bo (seat 1) starts
        hold_seat(page, game, 0)
        notice = page.locator("#connection")
        expect(notice).to_have_text(words("connection.live"))
        assert hole.end_streams() == 1
        page.wait_for_timeout(EMPTY_STREAMS_S * 1000)
        ended = hole.ended_streams
        assert 2 <= ended <= EMPTY_STREAMS_MOST, ended
        expect(notice).to_have_text(words("connection.down"))
        screenshot(page, "ended-at-once")
        # Streams work again: the next step of the backoff (8 s after the last) opens one.
        hole.end_streams(from_now=False)
        expect(notice).to_have_text(words("connection.live"), timeout=20_000)
        assert hole.ended_streams == ended
        version = game.version()
        move = game.api("GET", "/legal-moves", game.tokens[1])["moves"][0]
        game.api("POST", "/moves", game.tokens[1], json=move)
        wait_shown(page, version + 1)  # an entry came through the stream
        # Dropped now, the stream is opened again after the backoff's first step.
        assert hole.end_streams(from_now=False) == 1
        expect(notice).to_have_text(words("connection.down"))
        expect(notice).to_have_text(words("connection.live"), timeout=4_000)


# A made-up Retry-After on a poll, longer than the page's own 2 s between resends, so that the
# wait of a move made meanwhile is said in seconds.
MOVE_PAUSE_S = 8


def test_a_move_made_while_a_429_pauses_the_seat_waits_it_out_and_says_so(
    table_server: str, new_page: Pages
) -> None:
    """A poll of the view refused 429 closes the seat's window for its moves too (one limit):
    a move chosen meanwhile is not sent into it, the page says it waits and how long, and
    sends it once the pause is over."""
    page = new_page(viewport={"width": 1280, "height": 800})
    log = new_page.log(page)
    log.allow(r"status of 429")
    log.allow(r"net::ERR_FAILED")  # the streams cut below
    page.route(re.compile(r"/events\?.*access_token="), lambda route: route.abort())
    game = create_game(table_server, {"players": ["ann", "bo"], "options": {"set": 6}, "seed": 5})
    game.api("POST", "/deal", game.host_token)
    me = game.api("GET")["turn"]
    hold_seat(page, game, me)
    version = game.version()
    wait_shown(page, version)
    expect(page.locator("#connection")).to_have_text(words("connection.down"))
    view_url = f"{table_server}/api/v1/games/{game.game_id}"
    polls = finished(page, lambda r: r.method == "GET" and r.url == view_url)
    posts = finished_posts(page)
    problem = {"title": "Too Many Requests", "status": 429, "code": "rate_limited"}
    refusals: list[str] = []

    def refuse_once(route: Route) -> None:
        if refusals or route.request.method != "GET":
            route.fallback()
            return
        refusals.append(route.request.url)
        route.fulfill(
            status=429,
            headers={"Retry-After": str(MOVE_PAUSE_S)},
            content_type="application/problem+json",
            body=json.dumps(problem),
        )

    def refused_now(request: Request) -> bool:
        response = request.response()
        return request.url == view_url and response is not None and response.status == 429

    page.route(view_url, refuse_once)
    page.wait_for_event("requestfinished", refused_now, timeout=POLL_MS * 3)
    # When the refused poll was sent: the page's pause starts later, once its answer is read,
    # and the browser's times of an answer the test fulfils can fall after that moment.
    refused_sent = next(p["sent"] for p in polls if p["status"] == 429)
    page.locator(".htile.playable").first.click()
    page.locator(".train-target.legal").first.click()
    waiting = re.escape(words("move.resending_after.other")).replace(r"\{n\}", r"\d+")
    expect(page.locator("#problem")).to_contain_text(
        re.compile(waiting.replace(r"\{move\}", "[^)]+"))
    )
    wait_shown(page, version + 1)
    # The table may show the move before the browser reports its request finished.
    wait_until(page, lambda: bool(posts), 10_000)
    assert posts[0]["status"] in (200, 201), posts
    assert posts[0]["sent"] - refused_sent >= MOVE_PAUSE_S * 1000 - SLACK_MS, (posts, polls)


def test_a_429_pauses_the_token_on_its_own_game_only(
    table_server: str, page: Page, page_log: PageLog
) -> None:
    """The server counts a token's requests per game, and a rematch gives each seat (and the
    table) the same token in the next game: a 429 in the finished game must not hold back the
    requests of the next one, whose window is its own."""
    page_log.allow(r"status of 429")
    problem = {"title": "Too Many Requests", "status": 429, "code": "rate_limited"}
    page.route(
        "**/api/v1/games/finished",
        lambda route: route.fulfill(
            status=429,
            headers={"Retry-After": "20"},
            content_type="application/problem+json",
            body=json.dumps(problem),
        ),
    )
    page.goto(table_server + "/")
    held = page.evaluate(
        """async () => {
          const api = await import('/table/api.js');
          try { await api.call('GET', '/games/finished', {token: 'same-token'}); } catch (e) {}
          return {finished: api.pausedFor('finished', 'same-token') > 0,
                  next: api.pausedFor('next', 'same-token')};
        }"""
    )
    assert held == {"finished": True, "next": 0}


def test_a_table_left_before_its_first_view_came_sends_nothing_more(
    table_server: str, new_page: Pages
) -> None:
    """A table left (the address moved on) while its first view is on its way stays stopped
    when that view comes: it opens no stream and polls nothing, beside the page shown now (a
    second table of the same game would fetch the view beside the first, both into one
    Retry-After)."""
    page = new_page(viewport={"width": 1280, "height": 800})
    game = create_game(table_server, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)
    view_url = f"{table_server}/api/v1/games/{game.game_id}"
    held: list[Route] = []

    def hold_the_first(route: Route) -> None:
        if held:
            route.fallback()
        else:
            held.append(route)

    page.route(view_url, hold_the_first)
    page.goto(table_server + "/")
    held_seat = {"seat": 0, "token": game.tokens[0], "updated": 1}
    page.evaluate(
        "([key, id, held]) => localStorage.setItem(key, JSON.stringify({[id]: held}))",
        [STORAGE_KEY, game.game_id, held_seat],
    )
    with page.expect_request(view_url):
        page.goto(f"{table_server}/#/game/{game.game_id}")
    page.evaluate("location.hash = '#/leaderboard'")
    expect(page.locator("#board-title, .leaderboard h1").first).to_be_visible()
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if game.game_id in r.url else None)
    held[0].fallback()
    # Longer than the stream's first ticket takes, and than the page's pace between polls.
    page.wait_for_timeout(POLL_MS + 1000)
    assert sent == [], sent


def wait_until(page: Page, condition: Callable[[], bool], timeout_ms: int) -> None:
    """Wait, letting the page's events (routes, requests) come, until ``condition`` holds."""
    for _ in range(timeout_ms // 100):
        if condition():
            return
        page.wait_for_timeout(100)
    assert condition(), f"not within {timeout_ms} ms"


# The window in which a second request for the view, if one were sent, would show: longer than
# the browser takes to send a request the page has made.
SECOND_REQUEST_WINDOW_MS = 1000


def test_the_view_asked_for_by_two_paths_at_once_is_one_request(
    table_server: str, new_page: Pages
) -> None:
    """The stream comes back while a poll's request for the view is on its way: the fetch the
    stream's return makes joins it rather than sending a second, which would count against
    the seat's limit beside the first, and before the first's 429 could hold it back."""
    page = new_page(viewport={"width": 1280, "height": 800})
    new_page.log(page).allow(r"net::ERR_FAILED")  # the streams cut below
    cut = re.compile(r"/events\?.*access_token=")
    page.route(cut, lambda route: route.abort())
    game = create_game(table_server, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)
    hold_seat(page, game, 0)
    notice = page.locator("#connection")
    expect(notice).to_have_text(words("connection.down"))
    view_url = f"{table_server}/api/v1/games/{game.game_id}"
    held: list[Route] = []
    page.route(view_url, lambda route: held.append(route))
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.url == view_url else None)
    # The next poll's request waits for the test; the stream then comes back meanwhile.
    wait_until(page, lambda: len(held) == 1, 2 * POLL_MS)
    page.unroute(cut)
    expect(notice).to_have_text(words("connection.live"), timeout=RETRY_MAX_MS)
    page.wait_for_timeout(SECOND_REQUEST_WINDOW_MS)
    assert len(sent) == 1, sent
    for route in held:
        route.fallback()
    wait_shown(page, game.version())


def test_the_view_asked_for_after_an_entry_is_not_an_answer_sent_before_it(
    table_server: str, new_page: Pages
) -> None:
    """The stream comes back, and its view request is on its way when the next entry is shown:
    the view asked for after that entry is not that request's answer, older than the table,
    but a request of its own sent once that one is answered; the table then settles on the
    entry with no timer of the page left to fire (its clock held by the test), where it would
    wait CATCH_UP_MS without its legal moves. The older answer, with that request behind it,
    asks nothing of its own: no look at the log for a rewind, no view again CATCH_UP_MS later."""
    page = new_page(viewport={"width": 1280, "height": 800})
    new_page.log(page).allow(r"net::ERR_INTERNET_DISCONNECTED")  # the stream cut below
    page.clock.install()
    game = create_game(table_server, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)
    hold_seat(page, game, 0)
    notice = page.locator("#connection")
    expect(notice).to_have_text(words("connection.live"))
    wait_shown(page, game.version())
    hold_clock(page)
    view_url = f"{table_server}/api/v1/games/{game.game_id}"
    held: list[tuple[Route, APIResponse]] = []
    sent: list[str] = []
    looked: list[str] = []

    def hold_first(route: Route) -> None:
        sent.append(route.request.url)
        if held:
            route.fallback()
        else:
            held.append((route, route.fetch()))  # answered now, handed to the page later

    def count_look(route: Route) -> None:
        looked.append(route.request.url)
        route.fallback()

    page.route(view_url, hold_first)
    page.context.set_offline(True)
    expect(notice).to_have_text(words("connection.down"))
    page.context.set_offline(False)
    expect(notice).to_have_text(words("connection.live"))
    wait_until(page, lambda: len(held) == 1, 10_000)
    page.route(re.compile(r"/events\?(?!.*access_token=)"), count_look)  # not the stream
    before = game.version()
    move_for_whoever_plays(game)
    wait_until(page, lambda: shown_version(page) == before + 1, 10_000)
    route, answer = held[0]
    route.fulfill(response=answer)
    wait_settled(page, before + 1)
    assert len(sent) == 2, sent
    page.wait_for_timeout(300)  # on the test's own timer: whatever the older answer asks is sent
    page.clock.run_for(2_500)  # past CATCH_UP_MS
    page.wait_for_timeout(300)
    assert (len(sent), looked) == (2, []), (sent, looked)
    release_clock(page)


def test_a_score_fetched_for_a_view_older_than_the_table_does_not_replace_its_final_table(
    table_server: str, new_page: Pages
) -> None:
    """The last round of two: the stream comes back and the view it asks for is answered, its
    scores still on their way while bo moves, ann goes out, and the table shows the game's end
    with the final table. Those scores, of the game still playing, come last: the table does
    not take them for its own, and closing the round's summary still shows the final table."""
    page = new_page(viewport={"width": 1280, "height": 800})
    new_page.log(page).allow(r"net::ERR_INTERNET_DISCONNECTED")  # the stream cut below
    page.clock.install()
    game = create_from_position(table_server, last_round_of_two())
    hold_seat(page, game, 0)
    wait_settled(page, game.version())
    notice = page.locator("#connection")
    expect(notice).to_have_text(words("connection.live"))
    held: list[tuple[Route, APIResponse]] = []

    def hold_first(route: Route) -> None:
        if held:
            route.fallback()
        else:
            held.append((route, route.fetch()))  # answered now, handed to the page later

    page.route(f"{table_server}/api/v1/games/{game.game_id}/score", hold_first)
    page.context.set_offline(True)
    expect(notice).to_have_text(words("connection.down"))
    page.context.set_offline(False)
    expect(notice).to_have_text(words("connection.live"))
    wait_until(page, lambda: len(held) == 1, 10_000)
    before = game.version()
    bo = {"action": "play", "tile": [5, 2], "train": "1"}
    game.api("POST", "/moves", game.tokens[1], json=bo)
    ann = {"action": "play", "tile": [5, 0], "train": "0"}
    game.api("POST", "/moves", game.tokens[0], json=ann)
    assert game.api("GET")["status"] == "game_over"
    wait_settled(page, game.version())
    results = page.locator("#results")
    expect(results).to_be_visible()
    assert game.version() > before + 1
    hold_clock(page)  # no view asked again on a timer meanwhile
    route, answer = held[0]
    with page.expect_request(re.compile(r"/events\?after=")):  # the table asks for a rewind
        route.fulfill(response=answer)
    page.wait_for_timeout(300)  # on the test's own timer: the older answer handled
    page.get_by_role("button", name=words("summary.dismiss")).click()
    expect(results).to_be_visible(timeout=1000)
    release_clock(page)


def last_round_of_two() -> dict[str, Any]:
    """A double-6 game of ann and bo in its last round (engine 5), bo to move: bo plays 5-2
    on his train, then ann goes out with 5-0 on hers, and the game is over."""
    hands = [[[5, 0]], [[5, 2], [3, 3]]]
    placed = [tile for hand in hands for tile in hand] + [[5, 5]]
    return {
        "format": "mexican-train-position/1",
        "players": ["ann", "bo"],
        "rules": {"preset": "standard", "options": {"set": 6, "rounds": 2}},
        "round": 2,
        "engine": 5,
        "turn": 1,
        "opened": [True, True],
        "hands": hands,
        "boneyard": [*double_six_rest(*placed), [6, 6]],  # every tile but the engine 5-5
        "trains": {"0": [], "1": [], "mexican": None},
        "marked": [False, False],
        "open_doubles": [],
        "scores": [[0], [20]],
    }


def move_for_whoever_plays(game: Game) -> None:
    turn = game.api("GET")["turn"]
    move = game.api("GET", "/legal-moves", game.tokens[turn])["moves"][0]
    game.api("POST", "/moves", game.tokens[turn], json=move)


def test_a_429_holds_back_the_view_the_streams_entries_ask_for(
    table_server: str, new_page: Pages
) -> None:
    """The view fetched after the entries a stream brings is held back by a 429's Retry-After
    like the poll: sent sooner, it would only be refused again."""
    pause_s = 8
    page = new_page(viewport={"width": 1280, "height": 800})
    new_page.log(page).allow(r"status of 429")
    game = create_game(table_server, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)
    hold_seat(page, game, 0)
    expect(page.locator("#connection")).to_have_text(words("connection.live"))
    wait_shown(page, game.version())
    view_url = f"{table_server}/api/v1/games/{game.game_id}"
    views = finished(page, lambda r: r.method == "GET" and r.url == view_url)
    problem = {"title": "Too Many Requests", "status": 429, "code": "rate_limited"}
    refusals: list[str] = []

    def refuse_once(route: Route) -> None:
        if refusals:
            route.fallback()
            return
        refusals.append(route.request.url)
        route.fulfill(
            status=429,
            headers={"Retry-After": str(pause_s)},
            content_type="application/problem+json",
            body=json.dumps(problem),
        )

    page.route(view_url, refuse_once)

    def move_for_whoever_plays() -> None:
        turn = game.api("GET")["turn"]
        move = game.api("GET", "/legal-moves", game.tokens[turn])["moves"][0]
        game.api("POST", "/moves", game.tokens[turn], json=move)

    # The first move's entry is shown, and the view it leads to refused; the second's comes
    # during the pause.
    move_for_whoever_plays()
    wait_until(page, lambda: len(refusals) == 1, 10_000)
    move_for_whoever_plays()
    wait_shown(page, game.version())
    # The table may show the view before the browser reports its request finished.
    wait_until(page, lambda: len(views) >= 2, 10_000)
    assert views[0]["status"] == 429, views
    assert_each_waited_as_asked(views)


@pytest.mark.parametrize("language", ["en", "ceb"])
def test_an_invite_names_the_players_seated_as_people_write_them(
    table_server: str, new_page: Pages, language: str
) -> None:
    """The join page's lead lists who is at the table as the page's language lists people:
    "with ann and cpu (bot)", not "with ann, cpu (bot)"."""
    game = create_game(
        table_server, {"players": ["ann", {"open": True}, {"name": "cpu", "bot": "random"}]}
    )
    page = new_page(locale=language)
    page.goto(f"{table_server}/#/join/{game.game_id}/any-invite")
    cpu = words("join.bot_name", language, name="cpu")
    names = f"ann {words('list.and', language)} {cpu}"
    expect(page.locator(".lead").first).to_have_text(words("join.lead_with", language, names=names))


def test_a_table_left_before_its_first_view_failed_leaves_the_page_alone(
    table_server: str, new_page: Pages
) -> None:
    """A table left while its first view is on its way, that view then answered 503, neither
    puts its failure over the page shown now nor tries the game again."""
    page = new_page(viewport={"width": 1280, "height": 800})
    new_page.log(page).allow(r"status of 503")
    game = create_game(table_server, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)
    view_url = f"{table_server}/api/v1/games/{game.game_id}"
    held: list[Route] = []
    page.route(view_url, lambda route: held.append(route))
    page.goto(table_server + "/")
    with page.expect_request(view_url):
        page.goto(f"{table_server}/#/game/{game.game_id}")
    page.evaluate("location.hash = '#/leaderboard'")
    expect(page.locator("#board-title, .leaderboard h1").first).to_be_visible()
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if game.game_id in r.url else None)
    problem = {"title": "Service Unavailable", "status": 503, "code": "unavailable"}
    held[0].fulfill(status=503, content_type="application/problem+json", body=json.dumps(problem))
    # Longer than the page's pace before it asks for a game it could not load again.
    page.wait_for_timeout(POLL_MS + 1000)
    expect(page.locator(".gone")).to_have_count(0)
    expect(page.locator("#board-title, .leaderboard h1").first).to_be_visible()
    assert sent == [], sent
