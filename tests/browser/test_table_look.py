"""How the table looks and reads: every screen at two sizes in English and Swahili (the browser's
language) checked by axe-core and photographed, the table in each of the six languages, the
picker, pip colours told apart under colour-vision deficiencies, tiles that scale and show
numbers, moves and "your turn" announced, a focus ring unlike the playable mark, the hand
and its buttons in view without scrolling on a desktop's turn, and a cue naming the trains
scrolled out of the table's view."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, expect

from service.api.table_page import TABLE_DIR
from tests.browser.harness import SCREENSHOTS, Pages
from tests.browser.table import (
    SETTINGS_KEY,
    STORAGE_KEY,
    Game,
    create_from_position,
    create_game,
    double_six_rest,
    my_turn,
    play_turn_by_clicking,
    shown_version,
    wait_shown,
    words,
)

SIZES = {"1280": {"width": 1280, "height": 800}, "390": {"width": 390, "height": 844}}
LOCALES = {"en": "en-GB", "sw": "sw-KE"}
ALL_LANGUAGES = ("en", "sw", "tr", "ha", "ceb", "fi")
Axe = Callable[[Page, str], list[dict[str, Any]]]


def finished(status: str, rounds: int) -> dict[str, Any]:
    """A double-6 game of ann and bo whose first round ended with ann out."""
    hands = [[], [[0, 0], [4, 4], [2, 3]]]
    trains = {"0": [[6, 1], [1, 2]], "1": [[6, 3]], "mexican": [[6, 5]]}
    placed = [t for h in hands for t in h] + [t for tr in trains.values() for t in tr]
    return {
        "format": "mexican-train-position/1",
        "players": ["ann", "bo"],
        "rules": {"preset": "standard", "options": {"set": 6, "rounds": rounds}},
        "status": status,
        "round": 1,
        "engine": 6,
        "turn": None,
        "opened": [True, True],
        "hands": hands,
        "boneyard": double_six_rest(*placed),
        "trains": trains,
        "marked": [False, False],
        "open_doubles": [],
        "scores": [[0], [63]],
    }


class Screens:
    """The games behind every screen, made once for all languages and sizes."""

    def __init__(self, base: str, prep: Page) -> None:
        self.base = base
        bots = [{"name": f"cpu{i}", "bot": "greedy"} for i in (1, 2, 3)]
        self.play = create_game(
            base, {"players": ["ann", *bots], "options": {"rounds": 2}, "auto_deal": True}
        )
        hold(prep, self.play, 0, "en")
        for _ in range(3):
            wait_shown(prep, self.play.version())
            play_turn_by_clicking(prep)
        wait_shown(prep, self.play.version())
        self.lobby = create_game(
            base, {"players": ["ann", {"open": True}, {"name": "cpu", "bot": "random"}]}
        )
        self.join = create_game(base, {"players": ["ann", {"open": True}]})
        self.summary = create_from_position(base, finished("round_over", 3))
        self.final = create_from_position(base, finished("game_over", 1))


def hold(page: Page, game: Game, seat: int | None, language: str, **extra: Any) -> None:
    """Open the game's table in ``language`` holding ``seat`` (None: as a spectator)."""
    page.goto(game.base + "/")
    held = (
        {}
        if seat is None
        else {game.game_id: {"seat": seat, "token": game.tokens[seat], "updated": 1, **extra}}
    )
    page.evaluate(
        "([k, held, s, lang]) => { localStorage.setItem(k, JSON.stringify(held));"
        " localStorage.setItem(s, JSON.stringify({language: lang})); }",
        [STORAGE_KEY, held, SETTINGS_KEY, language],
    )
    page.goto(f"{game.base}/#/game/{game.game_id}")
    page.reload()  # the language is read when the page loads
    expect(page.locator("#app[data-version]")).to_be_visible()
    page.wait_for_function("document.getElementById('app').dataset.settled === 'true'")


def look(
    page: Page, axe: Axe, shots: list[Path], screenshot: Callable[..., Path], label: str
) -> None:
    axe(page, label)
    shots.append(screenshot(page, label, full_page=True))


@pytest.mark.parametrize("language", list(LOCALES))
def test_every_screen_in_two_sizes_passes_axe(
    table_server: str, new_page: Pages, axe: Axe, screenshot: Callable[..., Path], language: str
) -> None:
    screens = Screens(table_server, new_page(viewport=SIZES["1280"]))
    shots: list[Path] = []
    for size, viewport in SIZES.items():
        page = new_page(viewport=viewport, locale=LOCALES[language])
        new_page.log(page).allow(r"status of 404")
        tag = f"{language}-{size}"
        # The create form, in the browser's language, with the games this browser holds.
        hold(page, screens.play, 0, language)
        page.goto(table_server + "/")
        expect(page.locator(".my-game .game-state")).not_to_have_text(
            words("games.asking", language)
        )
        expect(page.locator("#create-title")).to_have_text(words("create.title", language))
        look(page, axe, shots, screenshot, f"create-{tag}")
        # The table in play, a tile chosen, then the seat transfer.
        hold(page, screens.play, 0, language)
        if page.locator(".htile.playable").count():
            page.locator(".htile.playable").first.click()
        look(page, axe, shots, screenshot, f"table-{tag}")
        page.locator("#move-seat").click()
        expect(page.locator("#transfer svg.qr")).to_be_visible()
        look(page, axe, shots, screenshot, f"transfer-{tag}")
        # A spectator.
        hold(page, screens.play, None, language)
        expect(page.locator(".spectating")).to_have_text(words("table.watching_text", language))
        look(page, axe, shots, screenshot, f"spectator-{tag}")
        # The lobby of a host with an open seat.
        invite = f"{table_server}/#/join/{screens.lobby.game_id}/made-up-for-the-look"
        hold(
            page,
            screens.lobby,
            0,
            language,
            tableToken=screens.lobby.table_token,
            invites={"1": invite},
        )
        expect(page.locator(".lobby")).to_be_visible()
        look(page, axe, shots, screenshot, f"lobby-{tag}")
        # The join form.
        page.goto(f"{table_server}/#/join/{screens.join.game_id}/any-invite")
        expect(page.locator("#join-title")).to_have_text(words("join.title", language))
        look(page, axe, shots, screenshot, f"join-{tag}")
        # A round's summary, and the end of a game.
        hold(page, screens.summary, 0, language)
        expect(page.locator(".round-summary")).to_be_visible()
        look(page, axe, shots, screenshot, f"summary-{tag}")
        hold(page, screens.final, 0, language)
        expect(page.locator("#results")).to_be_visible()
        look(page, axe, shots, screenshot, f"final-{tag}")
        # The leaderboard of bots.
        page.goto(f"{table_server}/#/leaderboard/bots")
        expect(page.locator("#board-title")).to_have_text(words("board.title", language))
        expect(page.locator(".board-body [role=status]")).to_have_count(0)
        look(page, axe, shots, screenshot, f"leaderboard-{tag}")
        # A game that is not there.
        page.goto(f"{table_server}/#/game/NoSuchGame01")
        expect(page.locator(".gone h1")).to_have_text(words("table.not_found_title", language))
        look(page, axe, shots, screenshot, f"gone-{tag}")
    assert len(shots) == 20


def test_score_headers_break_between_words_on_a_phone(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    # A round played to its end: the hands left are shown at the game's end (replayed from the
    # history) in the first column, which then takes most of the width.
    game = create_game(
        table_server,
        {"players": ["ann", "bo"], "options": {"set": 6, "rounds": 1}, "seed": 11},
    )
    game.api("POST", "/deal", game.host_token)
    while (view := game.api("GET"))["status"] == "in_round":
        seat = view["turn"]
        move = game.api("GET", "/legal-moves", game.tokens[seat])["moves"][0]
        game.api("POST", "/moves", game.tokens[seat], json=move)
    for language in ("en", "fi"):
        page = new_page(viewport=SIZES["390"])
        hold(page, game, 0, language)
        expect(page.locator(".round-summary .row-tiles .stile").nth(3)).to_be_attached()
        screenshot(page, f"scores-{language}-390", full_page=True)
        # A word cut over two lines shows as two boxes of one range.
        broken = page.evaluate(
            """() => [...document.querySelectorAll('.scores thead th')].flatMap(th => {
              const text = th.firstChild;
              if (!text || text.nodeType !== Node.TEXT_NODE) return [];
              const found = [];
              for (const m of text.data.matchAll(/\\S+/g)) {
                const range = document.createRange();
                range.setStart(text, m.index);
                range.setEnd(text, m.index + m[0].length);
                if (range.getClientRects().length > 1) found.push(m[0]);
              }
              return found;
            })"""
        )
        assert broken == [], (language, broken)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390


# The trains' labels whose text does not fit their box: cut short by an ellipsis or clipped.
CUT_TRAIN_LABELS = """() => [...document.querySelectorAll('.train-name')]
  .filter(e => e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight)
  .map(e => e.textContent)"""


def test_the_table_in_every_language_and_the_picker(
    table_server: str, new_page: Pages, axe: Axe, screenshot: Callable[..., Path]
) -> None:
    game = create_game(table_server, {"players": ["ann", "bo"], "options": {"set": 6}, "seed": 4})
    game.api("POST", "/deal", game.host_token)
    page = new_page(viewport=SIZES["1280"])
    for language in ALL_LANGUAGES:
        hold(page, game, 0, language)
        expect(page.locator("html")).to_have_attribute("lang", language)
        expect(page.locator(".rack h2")).to_have_text(
            words("rack.title.other", language, n=len(game.api("GET", "", game.tokens[0])["hand"]))
        )
        axe(page, language)
        screenshot(page, language)
        # Every train's label is read whole ("Meksikolainen juna" too), on a phone as well.
        for size, viewport in SIZES.items():
            page.set_viewport_size(viewport)
            assert page.evaluate(CUT_TRAIN_LABELS) == [], (language, size)
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        screenshot(page, f"{language}-390", full_page=True)
        page.set_viewport_size(SIZES["1280"])
    # The picker changes the language at once and keeps the choice.
    page.locator("#language").select_option("tr")
    expect(page.locator(".turn-banner")).to_have_text(
        re.compile(f"{words('status.your_turn', 'tr')}|{words('status.to_play', 'tr', name='bo')}")
    )
    page.reload()
    expect(page.locator("#language")).to_have_value("tr")


# Machado, Oliveira and Fernandes (2009), full severity, on linear RGB.
DEFICIENCIES = {
    "protanopia": (
        (0.152286, 1.052583, -0.204868),
        (0.114503, 0.786281, 0.099216),
        (-0.003882, -0.048116, 1.051998),
    ),
    "deuteranopia": (
        (0.367322, 0.860646, -0.227968),
        (0.280085, 0.672501, 0.047413),
        (-0.011820, 0.042940, 0.968881),
    ),
    "tritanopia": (
        (1.255528, -0.076749, -0.178779),
        (-0.078411, 0.930809, 0.147602),
        (0.004733, 0.691367, 0.303900),
    ),
}
# CIE76 distance two pip colours keep at least, under each deficiency.
MIN_DELTA_E = 15


def lab(rgb: tuple[float, float, float]) -> tuple[float, float, float]:
    r, g, b = rgb
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))


def seen(hex_colour: str, matrix: tuple[tuple[float, ...], ...]) -> tuple[float, float, float]:
    def linear(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    rgb = [linear(int(hex_colour[i : i + 2], 16)) for i in (1, 3, 5)]
    out = [max(0.0, min(1.0, sum(m * c for m, c in zip(row, rgb, strict=True)))) for row in matrix]
    return lab((out[0], out[1], out[2]))


def pip_colours() -> dict[int, str]:
    css = (TABLE_DIR / "table.css").read_text()
    colours = {}
    for selectors, colour in re.findall(r"((?:\.pip-\d+,?\s*)+)\{ fill: (#[0-9a-f]{6}); \}", css):
        for number in re.findall(r"\.pip-(\d+)", selectors):
            colours[int(number)] = colour
    return colours


def test_pip_colours_are_told_apart_under_colour_vision_deficiencies() -> None:
    colours = pip_colours()
    assert set(colours) == set(range(1, 13))
    # 1 to 7 are solid, 8 to 12 rings: each group must be told apart by colour alone.
    for group in (range(1, 8), range(8, 13)):
        for name, matrix in DEFICIENCIES.items():
            for a, b in itertools.combinations(group, 2):
                distance = math.dist(seen(colours[a], matrix), seen(colours[b], matrix))
                assert distance >= MIN_DELTA_E, (name, a, b, round(distance, 1))


def tile_width(page: Page) -> float:
    """A train tile's laid-out width (the last one played may be mid-animation)."""
    return float(page.locator(".ttile:not(.double)").first.evaluate("e => e.offsetWidth"))


def test_tiles_scale_zoom_and_show_numbers(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    game = create_game(table_server, {"players": ["ann", "bo"], "options": {"set": 6}, "seed": 4})
    game.api("POST", "/deal", game.host_token)
    starter = game.api("GET")["turn"]
    page = new_page(viewport=SIZES["1280"])
    hold(page, game, starter, "en")
    play_turn_by_clicking(page)
    wait_shown(page, game.version())
    wide = tile_width(page)
    page.set_viewport_size(SIZES["390"])
    narrow = tile_width(page)
    assert wide >= 80 and narrow >= 60, (wide, narrow)  # were 54 and 40
    page.locator("#zoom-in").click()
    page.locator("#zoom-in").click()
    assert tile_width(page) >= narrow * 1.45
    zoomed = tile_width(page)
    print(f"\ntrain tiles: {wide:.0f} px wide at 1280, {narrow:.0f} at 390, {zoomed:.0f} zoomed")
    page.locator("#numbers").click()
    expect(page.locator("#numbers")).to_have_attribute("aria-pressed", "true")
    number = page.locator(".htile .face .number").first
    expect(number).to_be_visible()
    expect(page.locator(".htile .face .pips").first).to_be_hidden()
    tile = page.locator(".htile").first.get_attribute("data-tile") or ""
    shown = (
        page.locator(".htile")
        .first.locator(".number")
        .evaluate_all("els => els.map(e => e.textContent)")
    )
    assert "-".join(shown) == tile
    screenshot(page, "numbers-390")
    page.reload()
    expect(page.locator(".htile .face .number").first).to_be_visible()


def test_moves_and_your_turn_are_announced_and_focus_stays_in_play(
    table_server: str, page: Page
) -> None:
    game = create_game(
        table_server,
        {
            "players": ["ann", {"name": "cpu", "bot": "greedy"}],
            "options": {"set": 6},
            "auto_deal": True,
        },
    )
    hold(page, game, 0, "en")
    page.evaluate(
        """() => { window.said = [];
          const region = document.getElementById('announce');
          new MutationObserver(() => window.said.push(region.textContent))
            .observe(region, {childList: true, characterData: true, subtree: true}); }"""
    )
    your_turn = words("announce.your_turn")
    said: list[str] = []
    for _ in range(40):
        wait_shown(page, game.version())
        said = page.evaluate("window.said")
        if any("cpu" in line and line.endswith(your_turn) for line in said):
            break
        if not page.locator(".turn-banner.mine").count():
            continue
        # Keyboard only: the focus goes to a playable tile or an action, never back to the top.
        before = shown_version(page)
        if page.locator(".htile.playable").count():
            page.locator(".htile.playable").first.focus()
            page.keyboard.press("Enter")
            page.keyboard.press("Enter")
        else:
            page.locator("button.action:enabled").first.focus()
            page.keyboard.press("Enter")
        wait_shown(page, before + 1)
        focused = page.evaluate("document.activeElement.outerHTML")
        # In the hand, or on the summary of a round this move ended (its key keeps the focus
        # there through the renders of the entries that follow), or the game's final table.
        in_play = "!!document.activeElement.closest('.rack, .round-summary, #results')"
        assert page.evaluate(in_play), focused
    said = page.evaluate("window.said")
    # The bot's move that hands over the turn is heard with "your turn", not overwritten by it.
    assert any("cpu" in line and line.endswith(your_turn) for line in said), (
        said,
        page.locator(".log-lines").inner_text(),
    )
    # The focus ring is not the playable tile's border: white outline and a dark halo.
    page.locator(".htile").first.focus()
    ring = page.evaluate("getComputedStyle(document.activeElement).outlineColor")
    assert ring == "rgb(255, 255, 255)", ring


DESKTOPS = ((1280, 800), (1366, 768), (1440, 900))
BOXES = """sel => [...document.querySelectorAll(sel)].map(e => {
  const b = e.getBoundingClientRect();
  return {left: b.left, top: b.top, right: b.right, bottom: b.bottom};
})"""


def boxes(page: Page, selector: str) -> list[dict[str, float]]:
    return list(page.evaluate(BOXES, selector))


def out_of_view(page: Page, selector: str) -> list[dict[str, float]]:
    width, height = page.evaluate("[innerWidth, innerHeight]")
    return [
        b
        for b in boxes(page, selector)
        if b["left"] < 0 or b["top"] < 0 or b["right"] > width or b["bottom"] > height
    ]


# A scrollTop of the trains (``e``) at which none of the rows of ``ids`` is wholly in view (the
# page's test of a row shown, with a margin), or null when every position shows one.
HIDING_TOP = """(e, ids) => {
  const box = e.getBoundingClientRect(), now = e.scrollTop;
  const rows = ids.map(id => e.querySelector(`.train[data-train="${id}"]`).getBoundingClientRect());
  const shown = (r, top) =>
    r.top + now - top >= box.top - 8 && r.bottom + now - top <= box.bottom + 8;
  for (let top = 0; top <= e.scrollHeight - e.clientHeight; top += 1) {
    if (!rows.some(r => shown(r, top))) return top;
  }
  return null;
}"""


def trains_for(game: Game, seat: int, tile: str) -> list[str]:
    """The trains the seat may play ``tile`` ("a-b") on, as its legal moves say."""
    wanted = sorted(int(x) for x in tile.split("-"))
    moves = game.api("GET", "/legal-moves", game.tokens[seat])["moves"]
    return sorted(
        {m["train"] for m in moves if m["action"] == "play" and sorted(m["tile"]) == wanted}
    )


def test_on_a_desktop_turn_the_hand_and_its_buttons_are_in_view_without_scrolling(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    # Four players and a turn clock (its bar takes room too), some turns in, so that the
    # trains hold tiles.
    bots = [{"name": f"cpu{i}", "bot": "greedy"} for i in (1, 2, 3)]
    game = create_game(
        table_server,
        {"players": ["ann", *bots], "turn_seconds": 60, "auto_deal": True, "seed": 7},
    )
    page = new_page(viewport={"width": DESKTOPS[0][0], "height": DESKTOPS[0][1]})
    hold(page, game, 0, "en")
    for _ in range(40):
        wait_shown(page, game.version())
        started = sum(1 for t in game.api("GET")["trains"] if t["tiles"])
        playable = page.locator(".htile.playable").count()
        if my_turn(page) and started >= 3 and playable:
            break
        if my_turn(page):
            play_turn_by_clicking(page)
    assert my_turn(page) and started >= 3 and playable
    hidden_at: list[str] = []  # the sizes whose trains scroll far enough to hide a train
    for width, height in DESKTOPS:
        page.set_viewport_size({"width": width, "height": height})
        size = f"{width}x{height}"
        # The window as it opens on a turn: at the top (the clicks above scrolled it).
        page.evaluate("scrollTo(0, 0)")
        page.wait_for_timeout(300)  # the layout after the resize
        assert page.locator(".htile").count() >= 5 and page.locator("button.action").count() == 3
        assert out_of_view(page, ".htile") == [], size
        assert out_of_view(page, "button.action") == [], size
        # Nothing overlaps: the table is above the rack, the log beside both.
        felt, rack, log = (boxes(page, s)[0] for s in (".felt", ".rack", "aside.log"))
        assert felt["bottom"] <= rack["top"] and log["left"] >= felt["right"], size
        # Every train can still be read: when they do not all fit, they scroll in the table,
        # and at least two whole rows show at once.
        shown = boxes(page, ".felt .trains")[0]
        rows = boxes(page, ".felt .train")
        tallest = max(r["bottom"] - r["top"] for r in rows)
        assert shown["bottom"] - shown["top"] >= 2 * tallest, size
        scroll = page.locator(".felt .trains").evaluate("e => e.scrollHeight - e.clientHeight")
        assert rows[-1]["bottom"] <= shown["bottom"] + 1 or scroll > 0, size
        screenshot(page, f"turn-{size}")
        # A tile chosen where it is, with no scrolling: a train it may go to is in view, in
        # the table and in the window. The trains are first scrolled (where they scroll) to
        # hide every train it may go to, so that the table has to bring one into view.
        trains = page.locator(".felt .trains")
        name = page.locator(".htile.playable").first.get_attribute("data-tile") or ""
        hiding = trains.evaluate(HIDING_TOP, trains_for(game, 0, name))
        if hiding is not None:
            trains.evaluate("(e, top) => { e.scrollTop = top; }", hiding)
            hidden_at.append(size)
        where = trains.evaluate("e => e.scrollTop")
        tile = boxes(page, ".htile.playable")[0]
        page.mouse.click((tile["left"] + tile["right"]) / 2, (tile["top"] + tile["bottom"]) / 2)
        expect(page.locator(".htile.selected")).to_have_count(1)
        assert page.evaluate("scrollY") == 0
        if hiding is not None:  # the trains moved to show one
            assert trains.evaluate("e => e.scrollTop") != where, size
        legal = page.locator(".train-target.legal").first
        expect(legal).to_be_visible()
        target = legal.evaluate(
            "e => { const b = e.getBoundingClientRect(), l = e.closest('.trains')"
            ".getBoundingClientRect(); return b.top >= l.top - 1 && b.bottom <= l.bottom + 1"
            " && b.bottom <= innerHeight; }"
        )
        assert target, size
        screenshot(page, f"chosen-{size}")
        page.keyboard.press("Escape")  # the tile put back: the trains where they were
        expect(page.locator(".htile.selected")).to_have_count(0)
        assert trains.evaluate("e => e.scrollTop") == where, size
    assert f"{DESKTOPS[0][0]}x{DESKTOPS[0][1]}" in hidden_at, hidden_at
    # Larger tiles make a taller rack: the trains make room again.
    page.set_viewport_size({"width": DESKTOPS[0][0], "height": DESKTOPS[0][1]})
    page.locator("#zoom-in").click()
    page.locator("#zoom-in").click()
    page.evaluate("scrollTo(0, 0)")
    page.wait_for_timeout(300)
    assert out_of_view(page, ".htile") == [] and out_of_view(page, "button.action") == []
    screenshot(page, "zoomed-1280x800")


def test_the_last_tile_arrives_once_and_not_again_on_every_redraw(
    table_server: str, new_page: Pages
) -> None:
    bots = [{"name": f"cpu{i}", "bot": "greedy"} for i in (1, 2)]
    game = create_game(table_server, {"players": ["ann", *bots], "auto_deal": True, "seed": 7})
    page = new_page()
    hold(page, game, 0, "en")
    for _ in range(40):
        wait_shown(page, game.version())
        playable = page.locator(".htile.playable").count()
        if my_turn(page) and playable and page.locator(".ttile.last-play").count():
            break
        if my_turn(page):
            play_turn_by_clicking(page)
    last = page.locator(".ttile.last-play")
    expect(last).to_have_count(1)
    page.wait_for_timeout(1000)  # its arrival is over
    page.locator(".htile.playable").first.click()  # the table is drawn again
    expect(page.locator(".htile.selected")).to_have_count(1)
    assert last.evaluate("e => e.getAnimations().length") == 0


# A finger's target on a touch screen: 44 CSS px (Apple's guidelines; WCAG 2.5.5's enhanced
# size), the hand's tiles included.
FINGER_PX = 44
SMALL_TARGETS = """min => [...document.querySelectorAll(
    'button, select, input, a.button, a.control, a.brand, [role=button]')]
  .filter(e => !e.closest('.row-tiles') && e.offsetParent !== null)
  .map(e => { const r = e.getBoundingClientRect();
    return {what: e.id || e.className || e.tagName, text: e.textContent.trim().slice(0, 24),
            width: Math.round(r.width), height: Math.round(r.height)}; })
  .filter(b => b.width < min || b.height < min)"""


def test_on_a_touch_screen_every_control_is_a_finger_wide(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    """On a phone every button, picker and link button of the table, a round's summary and a
    game's end is at least a finger's size."""
    page = new_page(viewport=SIZES["390"], has_touch=True, is_mobile=True)
    game = create_game(table_server, {"players": ["ann", "bo"], "options": {"set": 6}, "seed": 4})
    game.api("POST", "/deal", game.host_token)
    hold(page, game, game.api("GET")["turn"], "en")
    page.locator(".htile.playable").first.click()
    expect(page.locator(".train-target.legal").first).to_be_visible()
    small = {"table": page.evaluate(SMALL_TARGETS, FINGER_PX)}
    screenshot(page, "table-touch-390", full_page=True)
    hold(page, create_from_position(table_server, finished("round_over", 3)), 0, "en")
    expect(page.locator(".round-summary")).to_be_visible()
    small["summary"] = page.evaluate(SMALL_TARGETS, FINGER_PX)
    hold(page, create_from_position(table_server, finished("game_over", 1)), 0, "en")
    expect(page.locator("#results")).to_be_visible()
    small["final"] = page.evaluate(SMALL_TARGETS, FINGER_PX)
    screenshot(page, "final-touch-390", full_page=True)
    too_small = [f"{screen}: {box}" for screen, boxes in small.items() for box in boxes]
    assert not too_small, "\n".join(too_small)


def test_on_a_phone_the_turn_clock_stays_in_view_over_the_hand(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    """A phone scrolls down to the hand to play: the turn's clock must not scroll away with the
    top of the page, or the player chooses a tile without seeing the time run out."""
    game = create_game(
        table_server,
        {"players": ["ann", "bo", "cy", "di"], "seed": 4, "turn_seconds": 120},
    )
    game.api("POST", "/deal", game.host_token)
    page = new_page(viewport=SIZES["390"])
    hold(page, game, game.api("GET")["turn"], "en")
    page.locator(".htile.playable").first.click()
    # Where a player's thumb takes the page to play: the hand and its buttons at the bottom.
    page.locator(".actions").evaluate("e => e.scrollIntoView({block: 'end'})")
    assert page.evaluate("window.scrollY") > 0  # the page did scroll
    bar = page.locator(".clock-bar").bounding_box()
    assert bar is not None and bar["y"] >= 0 and bar["y"] + bar["height"] <= SIZES["390"]["height"]
    # Nothing of the hand hides under it: the chosen tile is in view below it.
    tile = page.locator(".htile.selected").bounding_box()
    assert tile is not None and tile["y"] >= bar["y"] + bar["height"], (bar, tile)
    screenshot(page, "clock-over-the-hand-390")


PHONE = {"width": 375, "height": 667}
# The hand's box within the window, below the clock bar that stays at its top.
HAND_IN_VIEW = """() => {
  const hand = document.querySelector('.hand').getBoundingClientRect();
  const bar = document.querySelector('.clock-bar');
  const top = bar ? bar.getBoundingClientRect().bottom : 0;
  return hand.top >= top && hand.bottom <= innerHeight;
}"""
HAND_BOX = "() => JSON.stringify(document.querySelector('.hand').getBoundingClientRect())"


def hand_comes_into_view(page: Page) -> None:
    try:
        page.wait_for_function(HAND_IN_VIEW, timeout=5000)
    except PlaywrightError as error:
        raise AssertionError(f"hand out of view: {page.evaluate(HAND_BOX)}") from error
    page.wait_for_timeout(1000)  # a smooth scroll's end, and the renders after it
    assert page.evaluate(HAND_IN_VIEW), page.evaluate(HAND_BOX)


def test_on_a_phone_the_turn_brings_the_hand_into_view(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    """On a 375x667 phone the rack is under the players and every train, below the window's
    edge: when the turn comes (the table opened on it, or another player's move handing it
    over), the hand is scrolled into view, and the focus is left where it was."""
    game = create_game(
        table_server, {"players": ["ann", "bo", "cy", "di"], "seed": 4, "turn_seconds": 120}
    )
    game.api("POST", "/deal", game.host_token)
    turn = game.api("GET")["turn"]
    page = new_page(viewport=PHONE, has_touch=True, is_mobile=True)
    hold(page, game, turn, "en")
    hand_comes_into_view(page)
    assert page.evaluate("scrollY") > 0  # it was below the fold: the page scrolled
    assert page.evaluate("document.activeElement === document.body")
    screenshot(page, "turn-opened-375")

    # The next seat, watching from the top of the page while the turn is not theirs.
    after = (turn + 1) % 4
    other = new_page(viewport=PHONE, has_touch=True, is_mobile=True)
    hold(other, game, after, "en")
    assert other.evaluate("scrollY") == 0
    assert not other.evaluate(HAND_IN_VIEW), other.evaluate(HAND_BOX)
    screenshot(other, "turn-not-yet-375")
    moves = game.api("GET", "/legal-moves", game.tokens[turn])["moves"]
    play = next(m for m in moves if m["action"] == "play")
    game.api("POST", "/moves", game.tokens[turn], json=play)
    game.api("POST", "/moves", game.tokens[turn], json={"action": "end_turn"})
    expect(other.locator(".turn-banner.mine")).to_be_visible()
    hand_comes_into_view(other)
    assert other.evaluate("document.activeElement === document.body")
    screenshot(other, "turn-came-375")
    other.set_viewport_size(SIZES["1280"])
    hand_comes_into_view(other)
    screenshot(other, "turn-came-1280")


def test_while_the_turns_view_is_refused_renders_do_not_pull_the_page_back_to_the_hand(
    table_server: str, new_page: Pages
) -> None:
    """The hand is brought into view once per turn, when the turn's view has come: while the
    view is refused (a 503), the renders that come meanwhile (another seat arriving) leave a
    player who scrolled up to read the trains where they are."""
    game = create_game(
        table_server, {"players": ["ann", "bo", "cy", "di"], "seed": 4, "turn_seconds": 120}
    )
    game.api("POST", "/deal", game.host_token)
    turn = game.api("GET")["turn"]
    after = (turn + 1) % 4
    other = new_page(viewport=PHONE, has_touch=True, is_mobile=True)
    new_page.log(other).allow(r"status of 503")
    hold(other, game, after, "en")
    assert other.evaluate("scrollY") == 0
    view = re.compile(rf"/api/v1/games/{game.game_id}(\\?.*)?$")
    refused = '{"type": "about:blank", "title": "Service Unavailable", "status": 503}'
    other.route(
        view,
        lambda route: route.fulfill(
            status=503, body=refused, content_type="application/problem+json"
        ),
    )
    moves = game.api("GET", "/legal-moves", game.tokens[turn])["moves"]
    play = next(m for m in moves if m["action"] == "play")
    game.api("POST", "/moves", game.tokens[turn], json=play)
    game.api("POST", "/moves", game.tokens[turn], json={"action": "end_turn"})
    expect(other.locator(".turn-banner.mine")).to_be_visible()
    other.wait_for_timeout(1500)  # the view asked for and refused; a smooth scroll's end
    other.evaluate("window.scrollTo({top: 0, behavior: 'instant'})")
    third = new_page(viewport=PHONE)
    hold(third, game, (after + 1) % 4, "en")  # its presence reaches the table: a render
    other.wait_for_timeout(3000)
    assert other.evaluate("scrollY") == 0
    other.unroute(view)


def marked_trains() -> dict[str, Any]:
    """A double-6 round of ann and bo, ann to play, both trains marked open to all."""
    trains = {"0": [[6, 2], [2, 2]], "1": [[6, 4]], "mexican": [[6, 5]]}
    hands = [[[2, 3], [1, 4]], [[4, 5], [0, 0]]]
    placed = [t for h in hands for t in h] + [t for tr in trains.values() for t in tr]
    return {
        "format": "mexican-train-position/1",
        "players": ["ann", "bo"],
        "rules": {"preset": "standard", "options": {"set": 6, "rounds": 3}},
        "round": 1,
        "engine": 6,
        "turn": 0,
        "opened": [True, True],
        "hands": hands,
        "boneyard": double_six_rest(*placed),
        "trains": trains,
        "marked": [True, True],
        "open_doubles": ["0"],
        "scores": [[], []],
    }


# Each marked train's flag, its height against its font's size: one line is under 1.5 of it.
MARKED_FLAGS = """() => [...document.querySelectorAll('.train-flags .marked-flag')].map(e => ({
  text: e.textContent, height: e.getBoundingClientRect().height,
  font: parseFloat(getComputedStyle(e).fontSize)}))"""


def test_a_marked_trains_flag_keeps_to_one_line_on_a_phone(
    table_server: str, new_page: Pages
) -> None:
    """At 375 px the marked train's "open to all" broke after "open to", which then read as
    two flags: in every language it is one line, at 375 px and on a desktop."""
    game = create_from_position(table_server, marked_trains())
    page = new_page(viewport=PHONE, has_touch=True, is_mobile=True)
    for language in ALL_LANGUAGES:
        hold(page, game, 0, language)
        for size, viewport in (("375", PHONE), ("1280", SIZES["1280"])):
            page.set_viewport_size(viewport)
            flags = page.evaluate(MARKED_FLAGS)
            assert len(flags) == 2, flags
            assert flags[0]["text"].strip() == words("train.marked_short", language)
            wrapped = [f for f in flags if f["height"] >= 1.5 * f["font"]]
            assert not wrapped, (language, size, wrapped)
            assert page.evaluate(CUT_TRAIN_LABELS) == [], (language, size)
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
            shot = (
                SCREENSHOTS / f"test_a_marked_trains_flag_keeps_to_one_line-{language}-{size}.png"
            )
            # Clipped from the page: the table is redrawn under an element's own screenshot.
            page.evaluate("document.querySelector('.felt').scrollIntoView()")
            felt = page.evaluate(
                "JSON.parse(JSON.stringify(document.querySelector('.felt').getBoundingClientRect()))"
            )
            clip = {k: felt[k] for k in ("x", "y", "width", "height")}
            page.screenshot(path=str(shot), clip=clip)
        page.set_viewport_size(PHONE)


# A hand bigger than any deal (18 tiles: drawn for turns on end), for a phone's rows of tiles.
FULL_HAND = 18
HAND_BOXES = """() => [...document.querySelectorAll('.htile')].map(e => {
  const r = e.getBoundingClientRect();
  return {tile: e.dataset.tile, left: r.left, right: r.right, width: r.width, height: r.height,
          top: Math.round(r.top + window.scrollY)}; })"""


def full_hand() -> dict[str, Any]:
    """A double-6 round where ann, to play, holds FULL_HAND tiles."""
    trains = {"0": [[6, 1]], "1": [[6, 3]], "mexican": [[6, 5]]}
    rest = double_six_rest(*[t for tr in trains.values() for t in tr])
    hands = [rest[:FULL_HAND], rest[FULL_HAND : FULL_HAND + 3]]
    return {
        "format": "mexican-train-position/1",
        "players": ["ann", "bo"],
        "rules": {"preset": "standard", "options": {"set": 6, "rounds": 3}},
        "round": 1,
        "engine": 6,
        "turn": 0,
        "opened": [True, True],
        "hands": hands,
        "boneyard": rest[FULL_HAND + 3 :],
        "trains": trains,
        "marked": [False, False],
        "open_doubles": [],
        "scores": [[], []],
    }


def test_on_a_touch_screen_a_full_hand_wraps_in_tiles_a_finger_wide(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    """On a phone each tile of the hand is a finger's target at every zoom, and a hand of many
    tiles wraps to more rows rather than pushing the page wider than the screen."""
    page = new_page(viewport=SIZES["390"], has_touch=True, is_mobile=True)
    hold(page, create_from_position(table_server, full_hand()), 0, "en")
    # From 1, one step down to the smallest zoom, then four up to the largest.
    for label, button, presses in (
        ("1", "#zoom-out", 0),
        ("0.8", "#zoom-out", 1),
        ("1.75", "#zoom-in", 4),
    ):
        for _ in range(presses):
            page.locator(button).click()
        tiles = page.evaluate(HAND_BOXES)
        assert len(tiles) == FULL_HAND, tiles
        small = [t for t in tiles if t["width"] < FINGER_PX or t["height"] < FINGER_PX]
        assert not small, (label, small)
        # Read in the page at once: a render between two reads may replace the hand's element.
        hand = page.evaluate(
            "(() => { const r = document.querySelector('.hand').getBoundingClientRect();"
            " return {x: r.left, width: r.width}; })()"
        )
        outside = [
            t for t in tiles if t["left"] < hand["x"] or t["right"] > hand["x"] + hand["width"]
        ]
        assert not outside, (label, hand, outside)
        assert page.evaluate("document.documentElement.scrollWidth") <= SIZES["390"]["width"]
        assert len({t["top"] for t in tiles}) > 1, (label, tiles)  # wrapped
        # In the page at once, as above: a locator resolved before a render finds it detached.
        page.evaluate("document.querySelector('.rack').scrollIntoView({block: 'nearest'})")
        screenshot(page, f"full-hand-touch-390-zoom-{label}")


def four_trains() -> dict[str, Any]:
    """A double-6 round of four, ann to play with a hand of 11, each train begun and all but
    the Mexican through a double (a tall row): ann's 1-5 goes on her own train (the first row)
    and on the Mexican train (the last)."""
    trains = {
        "0": [[6, 0], [0, 0], [0, 1]],
        "1": [[6, 2], [2, 2], [2, 3]],
        "2": [[6, 3], [3, 3], [3, 4]],
        "3": [[6, 4], [4, 4], [4, 2]],
        "mexican": [[6, 5]],
    }
    placed = [t for tr in trains.values() for t in tr]
    rest = [t for t in double_six_rest(*placed) if t != [1, 5]]
    hands = [[[1, 5], *rest[:10]], rest[10:11], rest[11:12], rest[12:13]]
    return {
        "format": "mexican-train-position/1",
        "players": ["ann", "bo", "cy", "di"],
        "rules": {"preset": "standard", "options": {"set": 6, "rounds": 3, "hand_size": 5}},
        "round": 1,
        "engine": 6,
        "turn": 0,
        "opened": [True, True, True, True],
        "hands": hands,
        "boneyard": rest[13:],
        "trains": trains,
        "marked": [False, False, False, False],
        "open_doubles": [],
        "scores": [[], [], [], []],
    }


# The trains' rows out of the scrolled table's view, below it and above it.
HIDDEN_ROWS = """() => {
  const box = document.querySelector('.felt .trains').getBoundingClientRect();
  const rows = [...document.querySelectorAll('.felt .train')].map(e => e.getBoundingClientRect());
  return {below: rows.filter(r => r.bottom > box.bottom + 1).length,
          above: rows.filter(r => r.top < box.top - 1).length};
}"""


def in_window(page: Page, selector: str) -> bool:
    width, height = page.evaluate("[innerWidth, innerHeight]")
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return (
        box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= width
        and box["y"] + box["height"] <= height
    )


def test_trains_scrolled_out_of_the_table_are_named_by_a_cue_in_view(
    table_server: str, new_page: Pages, axe: Axe, screenshot: Callable[..., Path]
) -> None:
    """Four players at 1280x800: the trains scroll within the table and the last ones, the
    Mexican train among them, sat below its edge behind a faint fade. A cue in the window says
    how many trains are below (or above), and names the Mexican train, the player's own and one
    the chosen tile may go to; it takes the trains there. A phone, scrolling the page, has none."""
    game = create_from_position(table_server, four_trains())
    page = new_page(viewport=SIZES["1280"])
    hold(page, game, 0, "en")
    wait_shown(page, game.version())
    page.evaluate("scrollTo(0, 0)")
    hidden = page.evaluate(HIDDEN_ROWS)
    assert hidden["below"] >= 1 and hidden["above"] == 0, hidden
    below, above = page.locator(".trains-more.below"), page.locator(".trains-more.above")
    more = words(
        "trains.more_below.other" if hidden["below"] > 1 else "trains.more_below.one",
        n=hidden["below"],
    )
    expect(below).to_be_visible()
    expect(below).to_have_text(f"{more}: {words('train.mexican')}")
    expect(above).to_be_hidden()
    assert in_window(page, ".trains-more.below")
    screenshot(page, "cue-1280")
    axe(page, "trains-cue-1280")
    # 1-5 goes on ann's own train, in view, and on the Mexican train, out of it: the cue
    # marks that one as a train for the tile.
    page.locator('.htile[data-tile="1-5"]').click()
    expect(page.locator(".htile.selected")).to_have_count(1)
    expect(below).to_have_text(f"{more}: ✓ {words('train.mexican')}")
    expect(below).to_have_class(re.compile(r"\bplayable\b"))
    screenshot(page, "cue-chosen-1280")
    # The cue takes the trains down to the last one; then the first ones are above.
    below.click()
    expect(below).to_be_hidden()
    expect(page.locator('.train-target[data-train="mexican"]')).to_be_in_viewport()
    hidden = page.evaluate(HIDDEN_ROWS)
    assert hidden["above"] >= 1 and hidden["below"] == 0, hidden
    expect(above).to_be_visible()
    over = words(
        "trains.more_above.other" if hidden["above"] > 1 else "trains.more_above.one",
        n=hidden["above"],
    )
    expect(above).to_have_text(f"{over}: ✓ {words('log.your_train')}")
    assert in_window(page, ".trains-more.above")
    screenshot(page, "cue-above-1280")
    page.keyboard.press("Escape")  # the tile put back: ann's own train, with no mark
    expect(page.locator(".htile.selected")).to_have_count(0)
    expect(above).to_have_text(f"{over}: {words('log.your_train')}")
    expect(above).not_to_have_class(re.compile(r"\bplayable\b"))
    # A phone scrolls the page, not the trains: no cue.
    phone = new_page(viewport=SIZES["390"], has_touch=True, is_mobile=True)
    hold(phone, game, 0, "en")
    wait_shown(phone, game.version())
    expect(phone.locator(".trains-more.below")).to_be_hidden()
    expect(phone.locator(".trains-more.above")).to_be_hidden()
    screenshot(phone, "no-cue-390", full_page=True)
    axe(phone, "trains-cue-390")
