"""What happened, as a person follows it: a whole game with automatic deals whose every round
ends on a summary that stays until closed (hands left, pips, round and total scores, against
GET /score), the last move outlined with the move log beside the table, bot moves shown at a
human pace that never eats a clocked turn, and a clock bar that colours and beeps (or not)."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.harness import Pages
from tests.browser.table import (
    Game,
    create_game,
    hold_seat,
    my_turn,
    play_turn_by_clicking,
    shown_version,
    wait_shown,
    words,
)

ROUNDS = 3
#: What the standard preset counts a double blank left in a hand.
DOUBLE_BLANK = 50
BOT = {"name": "cpu", "bot": "greedy"}


def auto_game(base: str, **extra: Any) -> Game:
    body = {"players": ["ann", BOT], "options": {"set": 6, "rounds": ROUNDS}, "auto_deal": True}
    return create_game(base, {**body, **extra})


def read_summary(page: Page, round_: int) -> dict[str, Any]:
    panel = page.locator(f'.round-summary[data-round="{round_}"]')
    rows = {}
    for seat in (0, 1):
        row = panel.locator(f'tr[data-seat="{seat}"]')
        rows[seat] = {
            "left": row.locator("td.left").inner_text(),
            "pips": int(row.locator("td.pips").inner_text()),
            "total": int(row.locator("td.total").inner_text()),
        }
    return {"title": panel.locator("h2").inner_text(), "rows": rows}


def check_last_move_and_log(page: Page) -> None:
    """The last tile played is outlined on its train, and the log sits beside the table."""
    expect(page.locator(".ttile.last-play")).to_have_count(1)
    # Both boxes read in the page at once: a render between two reads detaches the first.
    felt, log = page.evaluate(
        "['.felt', 'aside.log'].map(s => { const r = document.querySelector(s)"
        "?.getBoundingClientRect(); return r && {x: r.left, y: r.top, width: r.width}; })"
    )
    assert felt and log and log["x"] >= felt["x"] + felt["width"] and log["y"] < 400, (felt, log)
    assert page.locator(".log-lines li").count() >= 3


def test_a_whole_game_with_automatic_deals_shows_every_rounds_summary(
    table_server: str, page: Page, screenshot: Callable[..., Path]
) -> None:
    game = auto_game(table_server)
    hold_seat(page, game, 0, host=True)
    read: dict[int, dict[str, Any]] = {}
    seen_beside_next: set[int] = set()
    checked_log = False
    while True:
        wait_shown(page, game.version())
        view = game.api("GET")
        for panel in page.locator(".round-summary").all():
            round_ = int(panel.get_attribute("data-round") or 0)
            if round_ not in read:
                read[round_] = read_summary(page, round_)
                if round_ == 1:
                    screenshot(page, "summary")
            elif view["round"] > round_ and view["status"] == "in_round":
                # The next round goes on while the summary stays; then the player closes it.
                seen_beside_next.add(round_)
                panel.get_by_role("button", name=words("summary.dismiss")).click()
                expect(page.locator(f'.round-summary[data-round="{round_}"]')).to_have_count(0)
        if view["status"] == "game_over":
            break
        if not my_turn(page):
            continue
        if not checked_log and page.locator(".ttile.last-play").count():
            check_last_move_and_log(page)
            checked_log = True
        play_turn_by_clicking(page)
    assert set(read) == set(range(1, ROUNDS + 1)), read
    assert seen_beside_next == set(range(1, ROUNDS)), seen_beside_next
    assert checked_log
    score = game.api("GET", "/score")
    names = {p["seat"]: p["name"] for p in score["players"]}
    for round_, summary in read.items():
        for seat, row in summary["rows"].items():
            rounds = score["players"][seat]["rounds"]
            assert row["pips"] == rounds[round_ - 1], (round_, seat, summary)
            assert row["total"] == sum(rounds[:round_]), (round_, seat, summary)
        out = [s for s, row in summary["rows"].items() if row["left"] == "0"]
        if out == [0]:  # the page is seat 0's: its own going out is told as "you"
            title = words("summary.you_went_out", round=round_, rounds=ROUNDS)
        elif out:
            title = words("summary.went_out", round=round_, rounds=ROUNDS, name=names[out[0]])
        else:
            title = words("summary.blocked", round=round_, rounds=ROUNDS)
        assert summary["title"] == title, summary
    expect(page.locator("#results")).to_be_visible()
    # Once the game is over every hand left is shown, and its pips are the round's score.
    last = page.locator(f'.round-summary[data-round="{ROUNDS}"]')
    for seat, row in read[ROUNDS]["rows"].items():
        tiles = last.locator(f'tr[data-seat="{seat}"] .stile')
        expect(tiles).to_have_count(int(row["left"]))
        names = [t.get_attribute("data-tile") or "" for t in tiles.all()]
        pips = [tuple(int(x) for x in name.split("-")) for name in names]
        assert sum(DOUBLE_BLANK if p == (0, 0) else p[0] + p[1] for p in pips) == row["pips"]
    screenshot(page, "final", full_page=True)


def record_version_times(page: Page) -> None:
    page.evaluate(
        """() => {
          const app = document.getElementById('app');
          window.versionTimes = [];
          new MutationObserver(() => {
            const v = Number(app.dataset.version), seen = window.versionTimes;
            if (!seen.length || seen[seen.length - 1][0] !== v) seen.push([v, performance.now()]);
          }).observe(app, {attributes: true, attributeFilter: ['data-version']});
        }"""
    )


def test_bot_moves_come_at_a_human_pace_but_never_eat_a_clocked_turn(
    table_server: str, new_page: Pages
) -> None:
    page = new_page(viewport={"width": 1280, "height": 800})
    bots = [{"name": f"cpu{i}", "bot": "greedy"} for i in range(3)]
    # Without a clock: one entry after another, about STEP_MS apart. Two rounds, since a deal
    # may end its first round before eight bot entries were shown one after another.
    game = create_game(
        table_server, {"players": ["ann", *bots], "options": {"rounds": 2}, "auto_deal": True}
    )
    hold_seat(page, game, 0)
    record_version_times(page)
    gaps: list[float] = []
    for _ in range(40):
        wait_shown(page, game.version())
        status = game.api("GET")["status"]
        if status == "game_over":
            break
        if status != "in_round":
            continue
        times = page.evaluate("window.versionTimes")
        by = {e["version"]: e["by"] for e in game.api("GET", "/events?after=0")["entries"]}
        # The gap before each bot entry shown: the pace of the replay, not of the person.
        gaps = [
            b[1] - a[1]
            for a, b in itertools.pairwise(times)
            if b[0] == a[0] + 1 and by.get(b[0]) == "bot"
        ]
        if len(gaps) >= 8:
            break
        play_turn_by_clicking(page)
    assert len(gaps) >= 6 and statistics.median(gaps) >= 600, gaps
    print(f"\nbot entries without a clock: median gap {statistics.median(gaps):.0f} ms")
    # With a 30 s clock: the entries that hand the person the turn are shown quickly, so the
    # page's replay never eats the clock. What the page controls is timed: from the moment the
    # entry passing the turn reaches the page to the moment the turn is playable there.
    clocked = create_game(
        table_server,
        {
            "players": ["ann", *bots],
            "options": {"rounds": 1},
            "auto_deal": True,
            "turn_seconds": 30,
        },
    )
    record_arrivals(page)
    hold_seat(page, clocked, 0)
    record_settled_times(page)
    record_version_times(page)
    opened = shown_version(page)
    left: dict[str, float] = {}
    for _ in range(30):
        wait_shown(page, clocked.version())
        view = clocked.api("GET")
        if view["status"] != "in_round" or len(left) >= 5:
            break
        if view["turn"] != 0:
            continue
        left.setdefault(view["clock"]["deadline"], seconds_left(page, view))
        play_turn_by_clicking(page)
    entries = clocked.api("GET", "/events?after=0")["entries"]
    # Turns passed while the page was still opening are left out: the later ones find it open.
    passed = [v for v in turns_passed_to(entries, 0) if v > opened]
    waits = page_waits(page, passed)
    assert len(waits) >= 2, (passed, waits, left)
    for wait in waits:
        assert wait.ms <= wait.shown * PER_ENTRY_MS + FETCH_MS, (wait, waits, left)
    print(f"clocked turns: {', '.join(map(str, waits))}")
    print(f"clocked turns: seconds left when playable {[round(x, 1) for x in left.values()]}")


#: What the page may take for each entry it shows before a turn handed to the person, and for
#: the view it fetches then: a page replaying those entries at STEP_MS (700 ms each; the
#: person's move and three bots' come at once) would take longer.
PER_ENTRY_MS = 300
FETCH_MS = 1000


@dataclass(frozen=True)
class PageWait:
    """From the moment the entry handing the person a turn reached the page to the turn playable
    there, and how many entries the page showed in between."""

    version: int
    ms: float
    shown: int

    def __str__(self) -> str:
        return f"v{self.version} playable {self.ms:.0f} ms after it came ({self.shown} entries)"


def record_arrivals(page: Page) -> None:
    """Note when each entry of the events stream reaches the page (before the page sees it):
    the page decodes each piece of the stream as it comes, and every entry has its version as
    the message's ``id:`` line."""
    page.add_init_script(
        """(() => {
          window.arrived = {};
          const decode = TextDecoder.prototype.decode;
          TextDecoder.prototype.decode = function (...args) {
            const text = decode.apply(this, args);
            const now = performance.now();
            for (const [, version] of text.matchAll(/^id: (\\d+)$/gm))
              if (!(version in window.arrived)) window.arrived[version] = now;
            return text;
          };
        })()"""
    )


def record_settled_times(page: Page) -> None:
    page.evaluate(
        """() => {
          const app = document.getElementById('app');
          window.settledTimes = [];
          new MutationObserver(() => {
            if (app.dataset.settled === 'true')
              window.settledTimes.push([Number(app.dataset.version), performance.now()]);
          }).observe(app, {attributes: true, attributeFilter: ['data-version', 'data-settled']});
        }"""
    )


def turns_passed_to(entries: list[dict[str, Any]], seat: int) -> list[int]:
    """The versions of the entries that pass the turn to ``seat``."""
    return [
        e["version"]
        for e in entries
        if any(ev["type"] == "turn_passed" and ev.get("seat") == seat for ev in e["events"])
    ]


def page_waits(page: Page, versions: list[int]) -> list[PageWait]:
    """How long the page took over each of ``versions`` the stream brought."""
    arrived = {int(v): t for v, t in page.evaluate("window.arrived").items()}
    settled = page.evaluate("window.settledTimes")
    shown_at = page.evaluate("window.versionTimes")
    waits = []
    for version in versions:
        came = arrived.get(version)
        if came is None:
            continue  # fetched with a view, not brought by the stream
        ready = [t for v, t in settled if v >= version and t >= came]
        before = [v for v, t in shown_at if t <= came]
        if ready and before:
            waits.append(PageWait(version, ready[0] - came, version - before[-1]))
    return waits


def seconds_left(page: Page, view: dict[str, Any]) -> float:
    return float(
        page.evaluate("d => (Date.parse(d) - Date.now()) / 1000", view["clock"]["deadline"])
    )


def test_the_clock_bar_hurries_and_beeps_unless_sound_is_off(
    table_server: str, page: Page, screenshot: Callable[..., Path]
) -> None:
    game = create_game(
        table_server,
        {
            "players": ["ann", BOT],
            # Every round the set allows: two short rounds could end the game (the clock plays
            # the person's turns well) before a second turn of the person ran out.
            "options": {"set": 6, "rounds": 7},
            "auto_deal": True,
            "turn_seconds": 5,
        },
    )
    hold_seat(page, game, 0)
    expect(page.locator(".clock-bar.mine")).to_be_visible(timeout=15_000)
    colours = []
    for stage in ("hurry", "last"):
        expect(page.locator(f".clock-bar.mine.{stage}")).to_be_visible(timeout=5_000)
        fill = page.locator(".clock-bar.mine .clock-fill")
        colours.append(fill.evaluate("e => getComputedStyle(e).backgroundColor"))
        if stage == "last":
            screenshot(page, "clock")
    assert colours[0] != colours[1], colours
    turn_ran_out(page)
    beeps = int(page.evaluate("document.body.dataset.beeps || 0"))
    assert beeps >= 3, beeps
    page.locator("#sound").click()
    expect(page.locator("#sound")).to_have_attribute("aria-pressed", "false")
    expect(page.locator("#sound")).to_have_text(words("controls.sound_off"))
    expect(page.locator(".clock-bar.mine.last")).to_be_visible(timeout=20_000)
    turn_ran_out(page)
    assert int(page.evaluate("document.body.dataset.beeps || 0")) == beeps


def turn_ran_out(page: Page) -> None:
    """Wait until the clocked turn shown now is over (the server played it)."""
    deadline = page.locator(".clock-bar.mine").get_attribute("data-deadline")
    page.wait_for_function(
        """d => { const bar = document.querySelector('.clock-bar.mine');
                  return !bar || bar.dataset.deadline !== d; }""",
        arg=deadline,
        timeout=10_000,
    )
