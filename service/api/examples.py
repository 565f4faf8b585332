"""Examples shown in the OpenAPI document for the main flows (create, view, play, position,
samples), made by the engine from one seeded game when the document is built: a hand-written
example drifts from what the service answers (tests check each fits its schema)."""

from __future__ import annotations

from typing import Any

from service import rules
from service.rules import Action, GameState, Move

GAME_ID = "q3ZxWb0kTf9L"
CREATE_REQUEST: dict[str, Any] = {"players": ["ann", "bo", "cy"], "preset": "standard", "seed": 42}


def _created() -> GameState:
    return rules.new_game(CREATE_REQUEST["players"], CREATE_REQUEST["preset"], None, 42)


def _with_table(view: dict[str, Any], version: int, here: int | None) -> dict[str, Any]:
    """A view as the API answers it: the game's id and version, and the table's fields (every
    seat a person's, the viewer at the table, no turn clock)."""
    for player in view["players"]:
        player.update({"bot": None, "open": False, "present": player["seat"] == here})
    return {"game_id": GAME_ID, "version": version, **view, "clock": _NO_CLOCK}


_NO_CLOCK = {"turn_seconds": 0, "deadline": None}  # 0: no turn clock


def _play_first(state: GameState) -> tuple[int, int, list[Any]]:
    """The seat on turn plays its first listed move (an opening chain then ends): the seat,
    the log entries that made (one an action) and the events."""
    seat = state.turn
    assert seat is not None
    events = rules.apply(state, seat, rules.legal_moves(state, seat)[0])
    if Move(Action.END_TURN) not in rules.legal_moves(state, seat):
        return seat, 1, events
    return seat, 2, events + rules.apply(state, seat, Move(Action.END_TURN))


_STATE = _created()
_CREATED_RULES = rules.game_view(_STATE, None)["rules"]

CREATE_RESPONSE: dict[str, Any] = {
    "game_id": GAME_ID,
    "version": 1,
    "status": "waiting_deal",
    "seats": [
        {"seat": n, "name": name, "token": f"<seat-{n} token>", "bot": None, "invite": None}
        | {"invite_url": None}
        for n, name in enumerate(CREATE_REQUEST["players"])
    ],
    "host_token": "<host token>",
    "table_token": "<table token>",
    "rules": _CREATED_RULES,
}

rules.deal(_STATE)
_VERSION = 2 + _play_first(_STATE)[1]  # the creation, the deal and the starter's opening turn
_SEAT = _STATE.turn
assert _SEAT is not None

POSITION: dict[str, Any] = rules.export_position(_STATE)
GAME_VIEW: dict[str, Any] = _with_table(rules.game_view(_STATE, _SEAT), _VERSION, _SEAT)
GAME_VIEW["legal_moves"] = [move.to_json() for move in rules.legal_moves(_STATE, _SEAT)]
LEGAL_MOVES: dict[str, Any] = {
    "version": _VERSION,
    "seat": _SEAT,
    "turn": _SEAT,
    "moves": GAME_VIEW["legal_moves"],
}
SAMPLES: dict[str, Any] = {
    "game_id": GAME_ID,
    "version": _VERSION,
    "seat": _SEAT,
    "samples": rules.sample_positions(rules.seat_view(_STATE, _SEAT), 1, seed=5),
}

_PLAYER, _ENTRIES, _EVENTS = _play_first(_STATE)
PLAY_RESPONSE: dict[str, Any] = {
    **_with_table(rules.game_view(_STATE, _PLAYER), _VERSION + _ENTRIES, _PLAYER),
    "events": rules.visible_events(_EVENTS, _PLAYER),
}
