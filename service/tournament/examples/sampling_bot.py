"""A bot that reasons about the tiles it cannot see, written against the HTTP API alone.

On its turn it asks the server for positions that agree with everything its seat sees
(``GET /samples``), tries every legal move on each of them, plays each sample out to the end of
the round with a simple policy (everyone plays their biggest tile), and posts the move whose
rounds ended best for it on average: its own points minus the mean of the others'.

usage: SEAT_TOKEN=... [HOST_TOKEN=...] python -m service.tournament.examples.sampling_bot
           SERVER GAME_ID [--samples 16]
The tokens come from the environment: on a command line any user of the machine could read them
(``ps``), and a token may start with ``-``, which an argument parser takes for an option. With
``HOST_TOKEN`` it also deals each round. The samples are positions, so any engine that reads
``mexican-train-position/1`` could play them out; this one uses ``service.rules``.
"""

from __future__ import annotations

import argparse
import os
from contextlib import suppress
from typing import Any

from mexican_train_client import Client, Conflict, LogRewound, StaleVersion

from service import rules
from service.rules import Move, Status


def biggest_tile(state: rules.GameState, seat: int) -> Move:
    """The roll-out policy: the play with the most pips, else draw, mark or end the turn."""
    moves = rules.legal_moves(state, seat)
    return max(moves, key=lambda m: -1 if m.tile is None else m.tile.a + m.tile.b)


def round_result(state: rules.GameState, seat: int) -> float:
    """Play to the end of the round; our points minus the others' mean (lower is better)."""
    while state.status == Status.IN_ROUND:
        turn = state.turn
        assert turn is not None
        rules.apply(state, turn, biggest_tile(state, turn))
    last = [scores[-1] for scores in state.scores]
    others = [p for s, p in enumerate(last) if s != seat]
    return last[seat] - sum(others) / len(others)


def choose(samples: list[dict[str, Any]], seat: int, moves: list[Move]) -> Move:
    """The move with the best mean round result over the samples."""
    states = [rules.import_position(doc) for doc in samples]

    def cost(move: Move) -> float:
        total = 0.0
        for state in states:
            trial = state.copy()
            rules.apply(trial, seat, move)
            total += round_result(trial, seat)
        return total

    return min(moves, key=cost)


def take_turn(client: Client, game: str, token: str, samples: int) -> bool:
    """Act once if it is our turn; False when there was nothing to do."""
    listed = client.legal_moves(game, token=token)
    moves = [Move.from_json(m) for m in listed["moves"]]
    if not moves:
        return False
    move = moves[0]
    if len(moves) > 1:
        # The seed makes a replay of this game choose the same moves.
        found = client.samples(game, token=token, n=samples, seed=listed["version"])
        move = choose(found["samples"], listed["seat"], moves)
    with suppress(StaleVersion, Conflict):  # someone acted first: look again
        client.move(game, move.to_json(), token=token, if_match=listed["version"])
    return True


def my_turn_after(entry: dict[str, Any], seat: int) -> bool:
    """Whether ``seat`` may have to act after this log entry: the turn passed to it, a round
    it starts began, or it is still acting (a seat change tells nothing: look)."""
    turn = entry["seat"]
    for event in entry["events"]:
        if event["type"] == "turn_passed":
            turn = event["seat"]
        elif event["type"] == "round_started":
            turn = event["starter"]
    return turn in (seat, None)


def play(server: str, game: str, token: str, host: str | None, samples: int) -> dict[str, Any]:
    """Wait on the seat's stream of the game's log and act when it may be our turn: no
    polling, one stream for the whole game (it resumes by itself after a dropped connection)."""
    with Client(server) as client:
        seat = int(client.legal_moves(game, token=token)["seat"])
        after = 0
        while True:
            take_turn(client, game, token, samples)
            try:
                follow(client, game, token, host, samples, seat, after)
                return client.score(game)
            except LogRewound as lost:  # Redis lost entries: go on from the game as stored
                after = lost.version


def follow(
    client: Client, game: str, token: str, host: str | None, samples: int, seat: int, after: int
) -> None:
    """Act on each entry after ``after`` that may give us the turn, until the game ends."""
    for entry in client.events(game, token=token, after=after):
        events = {event["type"] for event in entry["events"]}
        if host is not None and ("round_over" in events or entry["version"] == 1):
            with suppress(Conflict):  # dealt already (or the game is over)
                client.deal(game, token=host)
        elif "game_over" not in events and my_turn_after(entry, seat):
            take_turn(client, game, token, samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("server")
    parser.add_argument("game_id")
    parser.add_argument("--samples", type=int, default=16, help="samples per decision (1-100)")
    args = parser.parse_args()
    token = os.environ.get("SEAT_TOKEN")
    if not token:
        parser.error("SEAT_TOKEN (the seat's token) must be set in the environment")
    host = os.environ.get("HOST_TOKEN") or None
    score = play(args.server, args.game_id, token, host, args.samples)
    print({"totals": score["totals"], "winners": score["winners"]}, flush=True)


if __name__ == "__main__":
    main()
