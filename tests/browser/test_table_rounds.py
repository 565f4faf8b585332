"""What happened, as a person follows it: a whole game with automatic deals whose every round
ends on a summary that stays until closed (hands left, pips, round and total scores, against
GET /score), the last move outlined with the move log beside the table, bot moves shown at a
human pace that never eats a clocked turn, and a clock bar that colours and beeps (or not)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.harness import Pages
from tests.browser.table import (
    Game,
    click_a_move,
    create_game,
    hold_clock,
    hold_seat,
    my_turn,
    play_turn_by_clicking,
    release_clock,
    shown_version,
    wait_settled,
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


#: The page's pace (table.js): STEP_MS between two entries it shows, HURRY_MS between those
#: that hand the person a turn while a clock runs.
STEP_MS = 700
HURRY_MS = 120
#: The person's moves tried for a bots' reply of BOT_ENTRIES at least, with nothing in it (a
#: deal, a round's end) that the page fetches rather than shows entry by entry. Her opening
#: turn alone may be a dozen moves (a chain of tiles on her train).
MOVES = 40
BOT_ENTRIES = 3
WORKER_POLLS = 300
REPLAYED = {"play", "draw", "mark", "end_turn"}

#: In the page, in order: each entry the stream brings (``arrived``, before the page sees it:
#: every entry has its version as its message's ``id:`` line), each version the table shows
#: (``shown``), and each time the person's turn becomes playable there (``playable``). The test
#: adds a ``tick`` before each step of the page's clock.
RECORD_TABLE_EVENTS = """(() => {
  const log = window.tableEvents = [];
  const decode = TextDecoder.prototype.decode;
  TextDecoder.prototype.decode = function (...args) {
    const text = decode.apply(this, args);
    // A line may be cut between two pieces of the stream: the rest waits for the next.
    const lines = ((this.rest || '') + text).split('\\n');
    this.rest = lines.pop();
    for (const line of lines) {
      const id = /^id: (\\d+)\\r?$/.exec(line);
      if (id) log.push(['arrived', Number(id[1])]);
    }
    return text;
  };
  let shown = null, playable = false;
  document.addEventListener('DOMContentLoaded', () => {
    const app = document.getElementById('app');
    new MutationObserver(() => {
      if (app.dataset.version === undefined) return;
      const version = Number(app.dataset.version);
      if (version !== shown) log.push(['shown', version]);
      shown = version;
      const mine = app.dataset.settled === 'true' && app.dataset.status === 'in_round'
        && app.querySelector('.turn-banner.mine') !== null;
      if (mine && !playable) log.push(['playable', version]);
      playable = mine;
    }).observe(app, {attributes: true, childList: true, subtree: true});
  });
})()"""


def test_bot_moves_come_at_a_human_pace_but_never_eat_a_clocked_turn(
    table_server: str, new_page: Pages, screenshot: Callable[..., Path]
) -> None:
    """The test holds the page's clock while the bots reply, then steps it: what each step
    shows is the same however busy the machine, where a window of real time is not."""
    page = new_page(viewport={"width": 1280, "height": 800})
    page.clock.install()
    page.add_init_script(RECORD_TABLE_EVENTS)
    bots = [{"name": f"cpu{i}", "bot": "greedy"} for i in range(3)]
    # Without a clock: every step of STEP_MS shows one entry more, never two, none skipped.
    calm = create_game(
        table_server, {"players": ["ann", *bots], "options": {"rounds": 2}, "auto_deal": True}
    )
    hold_seat(page, calm, 0)
    reply = bots_reply(page, calm)
    steps = step_through(page, reply, STEP_MS)
    assert steps == [[v] for v in reply.to_show], (reply, steps)
    print(f"\ncalm reply shown one entry per {STEP_MS} ms step: {reply.to_show}")
    release_clock(page)
    # With a 30 s clock: the entries handing the person her turn come one per HURRY_MS, and the
    # turn is playable once the last is shown, with no step of the page's clock left to wait.
    clocked = create_game(
        table_server,
        {
            "players": ["ann", *bots],
            "options": {"rounds": 1},
            "auto_deal": True,
            "turn_seconds": 30,
        },
    )
    hold_seat(page, clocked, 0)
    reply = bots_reply(page, clocked)
    steps = step_through(page, reply, HURRY_MS)
    assert steps == [[v] for v in reply.to_show], (reply, steps)
    last = reply.to_show[-1]
    wait_settled(page, last)
    events = page.evaluate("window.tableEvents")
    after_steps = events[len(events) - events[::-1].index(["tick"]) :]
    assert after_steps == [["shown", last], ["playable", last]], events[-12:]
    release_clock(page)
    expect(page.locator(".clock-bar.mine")).to_be_visible()
    screenshot(page, "clocked-turn")
    entries = clocked.api("GET", "/events?after=0")["entries"]
    assert [e["version"] for e in entries if e["by"] == "clock"] == [], entries
    print(f"clocked reply shown one entry per {HURRY_MS} ms step: {reply.to_show}")


@dataclass(frozen=True)
class Reply:
    """The bots' answer to a move of the person's, as the page received it with its clock
    held: the versions it had still to show, the last one handing her the turn (her own move
    among them if it came within a step of the entry shown before it)."""

    to_show: list[int]


def bots_reply(page: Page, game: Game) -> Reply:
    """Play the person's turns, the page's clock running, until a move of hers hands the turn
    to the bots; hold the page's clock then, and wait until the stream has brought the page
    every entry up to her next turn. A reply with too few bot entries, or with one the page
    fetches rather than shows (a deal, a round's end), is let run and the next one tried."""
    for _ in range(MOVES):
        await_my_turn(page, game)
        hold_clock(page)
        click_a_move(page)
        view = game.api("GET")
        for _ in range(WORKER_POLLS):
            if view["status"] != "in_round" or view["turn"] == 0:
                break
            time.sleep(0.1)  # the worker may still be playing the bots' moves
            view = game.api("GET")
        page.wait_for_function(
            "v => window.tableEvents.some(([kind, seen]) => kind === 'arrived' && seen >= v)",
            arg=view["version"],
            polling=50,
        )
        entries = game.api("GET", f"/events?after={shown_version(page)}")["entries"]
        if (
            view["status"] == "in_round"
            and view["turn"] == 0
            and len([e for e in entries if e["by"] == "bot"]) >= BOT_ENTRIES
            and all(e["action"]["action"] in REPLAYED for e in entries)
            and entries[-1]["version"] == view["version"]
        ):
            return Reply([e["version"] for e in entries])
        release_clock(page)
    raise AssertionError(f"no bots' reply of {BOT_ENTRIES} entries in {MOVES} moves")


def await_my_turn(page: Page, game: Game) -> None:
    """Wait until the page shows the person's turn, playable (the worker may be playing bots)."""
    for _ in range(WORKER_POLLS):
        view = game.api("GET")
        if view["status"] == "in_round" and view["turn"] == 0:
            wait_settled(page, view["version"])
            return
        time.sleep(0.1)
    raise AssertionError(f"the person's turn never came: {view}")


def step_through(page: Page, reply: Reply, step_ms: int) -> list[list[int]]:
    """Step the held page clock ``step_ms`` at a time until the reply is shown: the versions
    each step showed, in order."""
    first = len(page.evaluate("window.tableEvents"))
    for _ in reply.to_show:
        page.evaluate("window.tableEvents.push(['tick'])")
        page.clock.run_for(step_ms)
    events = page.evaluate("window.tableEvents")[first:]
    steps: list[list[int]] = []
    for event in events:
        if event[0] == "tick":
            steps.append([])
        elif event[0] == "shown" and steps:
            steps[-1].append(event[1])
    return steps


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
