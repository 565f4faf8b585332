"""Driving the web table as a person does: seats held in the browser's storage, moves made by
clicking a tile and then a train, and the API asked what the table should show."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import requests
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, expect

from service.api.table_page import TABLE_DIR

STORAGE_KEY = "mexican-train.seats"
SETTINGS_KEY = "mexican-train.settings"
CATALOGUE = json.loads((TABLE_DIR / "strings.json").read_text())
# Long enough for a bot reply shown one by one, 700 ms apart (three bots' opening chains and
# draws make 40 entries and more), and a reconnect.
CATCH_UP_MS = 60_000
#: How far ahead of the page's time its clock is held (hold_clock): each margin in turn.
HOLD_AHEAD_MS = (250, 1000, 5000)


@dataclass
class Game:
    base: str
    game_id: str
    host_token: str
    tokens: list[str | None]
    table_token: str = ""

    def api(self, method: str, path: str = "", token: str | None = None, **kw: Any) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        resp = requests.request(
            method,
            f"{self.base}/api/v1/games/{self.game_id}{path}",
            headers=headers,
            timeout=10,
            **kw,
        )
        assert resp.ok, resp.text
        return resp.json()

    def version(self) -> int:
        return int(self.api("GET")["version"])


def create_game(base: str, body: dict[str, Any]) -> Game:
    resp = requests.post(base + "/api/v1/games", json=body, timeout=10)
    assert resp.status_code == 201, resp.text
    data = resp.json()
    tokens = [s["token"] for s in data["seats"]]
    return Game(base, data["game_id"], data["host_token"], tokens, data["table_token"])


def hold_seat(
    page: Page, game: Game, seat: int, *, host: bool = False, language: str | None = None
) -> None:
    """Put a seat in the page's storage (as the create form does) and open the table, in
    ``language`` if given."""
    page.goto(game.base + "/")
    held = {"seat": seat, "token": game.tokens[seat], "updated": 1}
    if host:
        held["tableToken"] = game.table_token
    page.evaluate(
        "([key, id, held]) => localStorage.setItem(key, JSON.stringify({[id]: held}))",
        [STORAGE_KEY, game.game_id, held],
    )
    if language:
        page.evaluate(
            "([key, language]) => localStorage.setItem(key, JSON.stringify({language}))",
            [SETTINGS_KEY, language],
        )
    page.goto(f"{game.base}/#/game/{game.game_id}")
    if language:
        page.reload()  # the language is read when the page loads
    expect(page.locator("#app[data-version]")).to_be_visible()


def shown_version(page: Page) -> int:
    return int(page.locator("#app").get_attribute("data-version") or 0)


def wait_shown(page: Page, version: int) -> None:
    """Wait until the table shows ``version`` (the stream, or the poll without one) with the
    legal moves of that version."""
    try:
        page.wait_for_function(
            """v => {
              const app = document.getElementById('app');
              return Number(app.dataset.version) >= v && app.dataset.settled === 'true';
            }""",
            arg=version,
            timeout=CATCH_UP_MS,
        )
    except PlaywrightError as error:
        state = page.evaluate("({...document.getElementById('app').dataset})")
        raise AssertionError(f"the table did not show version {version}: {state}") from error


def my_turn(page: Page) -> bool:
    return page.locator(".turn-banner.mine").count() > 0


def play_turn_by_clicking(page: Page) -> str:
    """One move as a person makes it: a playable tile then a highlighted train, else the one
    enabled button (draw, pass or end turn), shown with what it led to. Returns what was done."""
    before = shown_version(page)
    done = click_a_move(page)
    wait_shown(page, before + 1)
    return done


def click_a_move(page: Page) -> str:
    """The clicks of :func:`play_turn_by_clicking`, without waiting for the table to settle
    after them (a test holding the page's clock steps it through the entries instead)."""
    tile = page.locator(".htile.playable").first
    if tile.count():
        name = tile.get_attribute("data-tile")
        tile.click()
        expect(page.locator(f'.htile.selected[data-tile="{name}"]')).to_be_visible()
        train = page.locator(".train-target.legal").first
        target = train.get_attribute("data-train")
        train.click()
        done = f"play {name} on {target}"
    else:
        button = page.locator("button.action:enabled").first
        done = button.get_attribute("id") or "action"
        button.click()
    return done


def game_of_page(page: Page, base: str) -> Game:
    """The game the page shows (its id from the address; no tokens: the page keeps those)."""
    game_id = page.url.split("#/game/", 1)[1]
    return Game(base, game_id, "", [])


def create_in_page(
    page: Page, base: str, name: str, seats: list[str], *, rounds: str = "1", clock: str = "0"
) -> Game:
    """Fill the create form: ``seats`` holds, for each other seat, a bot level or "open"."""
    page.goto(base + "/")
    form = page.locator("form.create")  # quick play, beside it, has fields of the same names
    form.get_by_label("Your name").fill(name)
    form.get_by_label("Players", exact=True).select_option(str(len(seats) + 1))
    for index, kind in enumerate(seats, start=1):
        if kind == "open":
            page.get_by_label(f"Seat {index + 1} is").select_option("open")
        else:
            page.get_by_label(f"Seat {index + 1} bot level").select_option(kind)
    page.get_by_label("Length").select_option(rounds)
    page.get_by_label("Turn clock").select_option(clock)
    page.get_by_role("button", name="Create game").click()
    page.wait_for_url("**/#/game/*")
    expect(page.locator("#app[data-version]")).to_be_visible()
    return game_of_page(page, base)


def record_shown_versions(page: Page) -> None:
    """From now on the page keeps every version its table showed, in order."""
    page.evaluate(
        """() => {
          const app = document.getElementById('app');
          window.shownVersions = [Number(app.dataset.version)];
          new MutationObserver(() => {
            const v = Number(app.dataset.version);
            const seen = window.shownVersions;
            if (v !== seen[seen.length - 1]) seen.push(v);
          }).observe(app, {attributes: true, attributeFilter: ['data-version']});
        }"""
    )


def shown_versions(page: Page) -> list[int]:
    return list(page.evaluate("window.shownVersions"))


def words(key: str, language: str = "en", **params: object) -> str:
    """The catalogue's text for ``key`` with its placeholders filled, as the page shows it."""
    text: str = CATALOGUE[language][key]
    for name, value in params.items():
        text = text.replace("{" + name + "}", str(value))
    return text


def create_from_position(base: str, position: dict[str, Any]) -> Game:
    """A game started from a position (``POST /games`` with ``position``)."""
    return create_game(base, {"position": position})


def double_six_rest(*placed: list[int]) -> list[list[int]]:
    """Every tile of the double-6 set but the engine 6-6 and those ``placed``: a boneyard."""
    taken = {tuple(sorted(tile)) for tile in placed} | {(6, 6)}
    return [[a, b] for a in range(7) for b in range(a, 7) if (a, b) not in taken]


def wait_settled(page: Page, version: int) -> None:
    """Wait until the table shows ``version`` or later, settled; polled on the test's own
    timer, which the page's held clock does not stop."""
    page.wait_for_function(
        """v => { const app = document.getElementById('app');
                  return Number(app.dataset.version) >= v && app.dataset.settled === 'true'; }""",
        arg=version,
        polling=50,
    )


def seated_at_my_turn(page: Page, base: str) -> tuple[Game, int, int]:
    """A dealt game of ann and bo (seed 1) with ``page`` holding the seat whose turn it is,
    the table showing the game's version: that game, seat and version."""
    game = create_game(base, {"players": ["ann", "bo"], "seed": 1})
    game.api("POST", "/deal", game.host_token)
    me = game.api("GET")["turn"]
    hold_seat(page, game, me)
    version = game.version()
    wait_shown(page, version)
    return game, me, version


def hold_clock(page: Page) -> None:
    """Stop the page's clock: no timer of the page fires until the test steps it. At a moment
    ahead of the page's time, which runs on while the test's call reaches the page and cannot
    be set back: a busy machine may take longer than the first margin (held where the table
    has nothing paced to show, a jump ahead changes nothing it shows)."""
    for ahead_ms in HOLD_AHEAD_MS:
        at_ms = page.evaluate("Date.now()") + ahead_ms
        try:
            page.clock.pause_at(datetime.fromtimestamp(at_ms / 1000, tz=UTC))
            return
        except PlaywrightError as error:
            if "to the past" not in error.message:
                raise
    raise AssertionError(f"the page's clock ran past each of {HOLD_AHEAD_MS} ms ahead")


def release_clock(page: Page) -> None:
    """Let the page's clock run again, set to the real time (the server's clock deadlines are)."""
    page.clock.set_system_time(datetime.now(UTC))
    page.clock.resume()
