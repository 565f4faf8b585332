"""JSON views of a state (CONTRACT.md shapes): what each seat, or the public, may see."""

from __future__ import annotations

from typing import Any

from service.rules.events import Event, TileDrawn
from service.rules.state import GameState
from service.rules.vocabulary import MEXICAN, Status

_WAITING_DEAL = Status.WAITING_DEAL


def game_view(state: GameState, seat: int | None) -> dict[str, Any]:
    """The API's game view minus ``game_id``/``version``; ``hand`` only for a valid ``seat``."""
    n = state.n_players
    totals = state.totals()
    dealt = state.status != _WAITING_DEAL
    trains: list[dict[str, Any]] = []
    if dealt:
        for t in range(n + 1):
            tiles = state.trains[t]
            trains.append(
                {
                    "id": MEXICAN if t == n else str(t),
                    "owner": None if t == n else t,
                    "tiles": list(map(list, tiles)),
                    "open_end": state.ends[t],
                    "marked": False if t == n else state.marked[t],
                    "started": bool(tiles),
                }
            )
    view: dict[str, Any] = {
        "status": state.status,
        "round": max(state.round, 1),
        "rounds": state.rules.rounds,
        "engine": state.engine,
        "turn": state.turn,
        "starter": state.starter if dealt else None,
        "players": [
            {
                "seat": s,
                "name": state.players[s],
                "hand_size": len(state.hands[s]),
                "score": totals[s],
                "marked": state.marked[s],
                "opened": state.opened[s],
            }
            for s in range(n)
        ],
        "trains": trains,
        "open_doubles": [state.train_id(t) for t in state.open_doubles],
        "boneyard_size": len(state.boneyard),
        "rules": state.rules.to_json(),
        "turn_state": {
            "drawn": state.drawn,
            "tiles_played": state.tiles_played,
            "must_follow": None if state.must_follow is None else state.train_id(state.must_follow),
        },
        "winners": None if state.winners is None else list(state.winners),
    }
    if seat is not None and type(seat) is int and 0 <= seat < n:
        view["hand"] = list(map(list, state.hands[seat]))
    return view


def score_view(state: GameState) -> dict[str, Any]:
    """Per-round scores, totals, zero-round counts and the winners once the game is over."""
    totals = state.totals()
    return {
        "status": state.status,
        "round": max(state.round, 1),
        "rounds": state.rules.rounds,
        "players": [
            {
                "seat": s,
                "name": state.players[s],
                "rounds": list(state.scores[s]),
                "total": totals[s],
                "zero_rounds": sum(1 for x in state.scores[s] if x == 0),
            }
            for s in range(state.n_players)
        ],
        "totals": totals,
        "winners": None if state.winners is None else list(state.winners),
    }


def visible_events(events: list[Event], seat: int | None) -> list[Event]:
    """The events as ``seat`` may see them: other players' drawn tiles are hidden."""
    out: list[Event] = []
    for event in events:
        if event["type"] == "tile_drawn" and event["seat"] != seat:
            hidden: TileDrawn = {"type": "tile_drawn", "seat": event["seat"]}
            event = hidden
        out.append(event)
    return out
