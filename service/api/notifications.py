"""Turn notifications: after a change is stored, the deliveries it owes to players' webhooks.

A change notifies ``your_turn`` when it starts a turn (the turn passed, or a round was dealt)
and leaves it with a player's seat (a seat change or a join while the turn stays put starts
none), ``game_over`` to every player seat when it ends the game, and ``rematch`` to every
player seat when it records one.
Bodies carry the game, the seat and the version only: never a tile or a token. Deliveries are
queued right after the compare-and-set, or owed until Redis takes them (a process that dies
meanwhile loses them: they are a courtesy, the log is the truth), and sent by the background
worker (service/worker/deliveries).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Sequence
from hashlib import blake2b
from typing import Any

import orjson

from service import rules
from service.rules.log import Kind, rfc3339
from service.seating import TURN_STARTS, Applied, Table
from service.store.hooks import Delivery, HookEvent, Webhooks

from .owed import NotYet, owe, write_or_owe
from .store_access import store

BOT_PLAYER_PREFIX = "bot-"  # a bot level's own player: it has no webhooks


def notify(
    game_id: str, state: rules.GameState, table: Table, applied: Sequence[Applied], version: int
) -> None:
    """Queue what this stored change (``applied``, ending at ``version``) owes to webhooks.

    The change is stored already, so a Redis error is not answered: the deliveries are owed,
    made once Redis takes them, under the ids they were first given."""
    if not applied or not any(_player(table, seat) for seat in range(len(table.seats))):
        return
    hooks, at_ms = store().hooks, applied[-1].record.at_ms
    made: list[Delivery] = []

    def enqueue() -> None:
        if not made:
            made.extend(_all_deliveries(hooks, game_id, state, table, applied, version, at_ms))
        hooks.enqueue(made, at_ms)

    write_or_owe(f"hooks:{game_id}:{version}", enqueue)


def notify_if_stored(
    game_id: str,
    state: rules.GameState,
    table: Table,
    applied: Sequence[Applied],
    version: int,
    first: tuple[int, bytes],
) -> None:
    """:func:`notify`, owed, for a change whose compare-and-set failed with a Redis error: a
    slow or hung Redis may run it after its client gave up (a timeout), and the change is then
    stored though its request answered 503. Once Redis answers, its deliveries are queued if
    the change turns out stored: ``first`` (the log index and the bytes of its first record)
    is in the log; looked for again while the log does not reach it (owed.NotYet). Else
    nothing is sent."""
    if not applied or not any(_player(table, seat) for seat in range(len(table.seats))):
        return
    games, hooks, at_ms = store(), store().hooks, applied[-1].record.at_ms
    made: list[Delivery] = []
    looked: list[bool] = []  # the log was read and held the change: its deliveries are made

    def enqueue() -> None:
        if not looked:
            held = games.holds_record(game_id, *first)
            if held is None:
                raise NotYet  # a slow Redis may run the change yet
            if not held:
                return  # not stored: another change took its place
            made.extend(_all_deliveries(hooks, game_id, state, table, applied, version, at_ms))
            looked.append(True)
        hooks.enqueue(made, at_ms)

    # Keyed by the record too: under notify's key it would replace the deliveries another
    # change of this version owes, stored, when this one was not.
    owe(f"hooks:{game_id}:{version}:{blake2b(first[1], digest_size=8).hexdigest()}", enqueue)


def _all_deliveries(
    hooks: Webhooks,
    game_id: str,
    state: rules.GameState,
    table: Table,
    applied: Sequence[Applied],
    version: int,
    at_ms: int,
) -> list[Delivery]:
    return [
        delivery
        for event, seat, data in _events(state, table, applied, version)
        if (player := _player(table, seat)) is not None
        for delivery in _deliveries(
            hooks, player, event, {"game_id": game_id, "seat": seat, **data}, at_ms
        )
    ]


def _player(table: Table, seat: int) -> str | None:
    player = table.seats[seat].player
    return None if player is None or player.startswith(BOT_PLAYER_PREFIX) else player


def _events(
    state: rules.GameState, table: Table, applied: Sequence[Applied], version: int
) -> Iterator[tuple[HookEvent, int, dict[str, Any]]]:
    turn, at = state.turn, {"version": version}
    started = any(e["type"] in TURN_STARTS for step in applied for e in step.events)
    if state.status == rules.Status.IN_ROUND and turn is not None and started:
        yield HookEvent.YOUR_TURN, turn, at
    everyone = range(len(table.seats))
    if any(rules.ends_game(step.events) for step in applied):
        yield from ((HookEvent.GAME_OVER, seat, at) for seat in everyone)
    for step in applied:
        if step.record.kind == Kind.REMATCH:
            rematch = {"version": version, "next_game_id": step.record.text}
            yield from ((HookEvent.REMATCH, seat, rematch) for seat in everyone)


def _deliveries(
    hooks: Webhooks, player: str, event: HookEvent, data: dict[str, Any], at_ms: int
) -> list[Delivery]:
    body = orjson.dumps({"type": event, "timestamp": rfc3339(at_ms), "data": data}).decode()
    return [
        Delivery("msg_" + secrets.token_urlsafe(12), player, hook.hook_id, body, at_ms)
        for hook in hooks.of_player(player)
        if event in hook.events
    ]
