"""The log's records: their wire form round-trips, and replaying them rebuilds every entry."""

from __future__ import annotations

import random

import pytest

from service import rules
from service.bots.simple import RandomBot
from service.rules import Status
from service.rules.log import (
    TICK_MS,
    By,
    Entry,
    Kind,
    Record,
    Replayer,
    _name_seat,
    chronicle,
    decode,
    encode,
    rfc3339,
)

CREATED = 1_764_583_200_000


def play_logged(
    preset: str, players: int, seed: int, tick_ms: int = TICK_MS
) -> tuple[rules.GameState, list[bytes], list]:
    """A whole game played by random bots, logged as the API logs it (``tick_ms`` 1: as logs
    made before ticks)."""
    state = rules.new_game([f"p{i}" for i in range(players)], preset, seed=seed)
    creation = Record(Kind.CREATE, By.HOST, CREATED, state=rules.dumps(state), tick_ms=tick_ms)
    records = [encode(creation, 0, 0)]
    events: list = [[]]
    bot, rng, at = RandomBot(seed), random.Random(seed), CREATED
    while state.status != Status.GAME_OVER:
        at += rng.randrange(0, 5000)
        if state.status != Status.IN_ROUND:
            events.append(rules.deal(state))
            records.append(encode(Record(Kind.DEAL, By.AUTO, at), CREATED, players, tick_ms))
            continue
        seat = state.turn
        assert seat is not None
        move = bot.choose(rules.seat_view(state, seat), rules.legal_moves(state, seat))
        events.append(rules.apply(state, seat, move))
        record = Record.of_move(move, seat, By.PLAYER, at)
        records.append(encode(record, CREATED, players, tick_ms))
    return state, records, events


@pytest.mark.parametrize(
    ("preset", "players", "tick_ms"),
    [
        ("standard", 4, TICK_MS),
        ("classic", 2, TICK_MS),
        ("tournament", 8, TICK_MS),
        ("standard", 4, 1),  # a log made before ticks, in milliseconds, replays as it was
    ],
)
def test_replaying_the_records_rebuilds_every_event_and_the_final_state(
    preset: str, players: int, tick_ms: int
) -> None:
    state, records, events = play_logged(preset, players, seed=7, tick_ms=tick_ms)
    replay = Replayer()
    entries = [replay.feed(raw) for raw in records]
    assert [e.events for e in entries] == events
    assert [e.version for e in entries] == list(range(1, len(records) + 1))
    assert replay.state is not None and rules.dumps(replay.state) == rules.dumps(state)
    assert entries[-1].ends_game and not any(e.ends_game for e in entries[:-1])


def test_a_finished_standard_game_logs_in_a_few_bytes_per_entry() -> None:
    _, records, _ = play_logged("standard", 4, seed=3)
    moves = records[1:]
    assert sum(map(len, moves)) / len(moves) < 8


def test_record_wire_form_round_trips_every_kind() -> None:
    play = rules.Move.from_json({"action": "play", "tile": [12, 5], "train": "mexican"})
    samples = [
        Record(Kind.DEAL, By.HOST, CREATED + 5),
        Record.of_move(play, 3, By.BOT, CREATED + 70_000),
        Record.of_move(rules.Move.from_json({"action": "draw"}), 0, By.CLOCK, CREATED + 1),
        Record(Kind.JOIN, By.PLAYER, CREATED + 9, 2, text="Zoë ♦"),
        Record(Kind.SEAT, By.HOST, CREATED + 9, 1, text="planner"),
        Record(Kind.SEAT, By.HOST, CREATED + 9, 1, text=""),
        Record(Kind.SEAT, By.AUTO, CREATED + 9, 1, name="open seat 2"),
        Record(Kind.SEAT, By.AUTO, CREATED + 9, 1, text="planner", name=""),
    ]
    for record in samples:
        assert decode(encode(record, CREATED, 4), CREATED, 4) == record
        # In ticks, a time comes back rounded down to its tick.
        ticked = decode(encode(record, CREATED, 4, TICK_MS), CREATED, 4, TICK_MS)
        assert ticked.at_ms == CREATED + (record.at_ms - CREATED) // TICK_MS * TICK_MS
    for tick in (1, TICK_MS):
        creation = Record(Kind.CREATE, By.HOST, CREATED, state=b"\x01{}", tick_ms=tick)
        assert decode(encode(creation, 0, 0), 0, 0) == creation


def test_a_seat_change_that_names_its_seat_renames_it_in_the_replay() -> None:
    """A reopening that names the seat (the server's, for a seat whose token nobody holds)
    renames it; one that names nothing (the host's, and every record stored without a name,
    whose wire form ends at the level) keeps its name. A server's fill stored without a name
    (an older release's) names the seat by level and seat index, as that game's stored state
    does."""
    names = ["ann", "cy", "bo"]
    _name_seat(names, 1, Record(Kind.SEAT, By.AUTO, CREATED, 1, name="open seat 2"))
    _name_seat(names, 2, decode(bytes([Kind.SEAT * 8 + 4, 0, 3]), CREATED, 3, TICK_MS))
    old = decode(bytes([Kind.SEAT * 8 + 4, 0, 3]), CREATED, 3, TICK_MS)
    assert (old.by, old.text, old.name) == (By.AUTO, "", None)
    assert names == ["ann", "open seat 2", "bo"]
    older_fill = decode(bytes([Kind.SEAT * 8 + 4, 0, 3, *b"planner"]), CREATED, 3, TICK_MS)
    assert (older_fill.by, older_fill.text, older_fill.name) == (By.AUTO, "planner", None)
    _name_seat(names, 2, older_fill)
    assert names == ["ann", "open seat 2", "planner 2"]


def test_entries_show_the_contract_shape_and_history_positions() -> None:
    _, records, _ = play_logged("standard", 2, seed=1)
    replay = Replayer(positions=True)
    entries: list[Entry] = [replay.feed(raw) for raw in records[:3]]
    deal = entries[1].to_json(entries[1].events)
    assert deal["action"] == {"action": "deal"} and deal["by"] == "auto" and deal["seat"] is None
    assert deal["position"]["format"] == rules.FORMAT
    assert entries[2].to_json([])["at"].endswith("Z")
    assert rfc3339(CREATED + 123) == "2025-12-01T10:00:00.123Z"


@pytest.mark.parametrize(("preset", "players"), [("standard", 4), ("tournament", 3)])
def test_the_chronicle_of_a_log_is_the_one_noted_in_play(preset: str, players: int) -> None:
    """Replaying a log prefix gives the clues noted while those moves were made."""
    state = rules.new_game([f"p{i}" for i in range(players)], preset, seed=5)
    creation = Record(Kind.CREATE, By.HOST, CREATED, state=rules.dumps(state), tick_ms=TICK_MS)
    records = [encode(creation, 0, 0)]
    rules.deal(state)
    records.append(encode(Record(Kind.DEAL, By.AUTO, CREATED), CREATED, players, TICK_MS))
    noted, bot = rules.Chronicle(), RandomBot(5)
    for _ in range(60):
        seat = state.turn
        if seat is None:
            break
        move = bot.choose(rules.seat_view(state, seat), rules.legal_moves(state, seat))
        noted.note(state, seat, move)
        rules.apply(state, seat, move)
        records.append(encode(Record.of_move(move, seat, By.BOT, CREATED), CREATED, players))
    replayed = chronicle(records)
    assert replayed.clues == noted.clues
    assert any(c.kind == rules.ClueKind.LACKS for c in replayed.clues)
    assert replayed.seen_by(1, state.round) == noted.seen_by(1, state.round)
