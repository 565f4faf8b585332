"""Examples shown in the OpenAPI document for the main flows (create, view, play)."""

from __future__ import annotations

from typing import Any

RULES: dict[str, Any] = {
    "preset": "standard",
    "options": {"set": 9, "hand_size": 15, "rounds": 10, "double_blank_points": 50},
}

CREATE_REQUEST: dict[str, Any] = {"players": ["ann", "bo", "cy"], "preset": "standard", "seed": 42}

CREATE_RESPONSE: dict[str, Any] = {
    "game_id": "q3ZxWb0kTf9L",
    "version": 1,
    "status": "waiting_deal",
    "seats": [
        {"seat": 0, "name": "ann", "token": "<seat-0 token>"},
        {"seat": 1, "name": "bo", "token": "<seat-1 token>"},
        {"seat": 2, "name": "cy", "token": "<seat-2 token>"},
    ],
    "host_token": "<host token>",
    "table_token": "<table token>",
    "rules": RULES,
}

GAME_VIEW: dict[str, Any] = {
    "game_id": "q3ZxWb0kTf9L",
    "version": 4,
    "status": "in_round",
    "round": 1,
    "rounds": 10,
    "engine": 9,
    "turn": 1,
    "starter": 0,
    "players": [
        {"seat": 0, "name": "ann", "hand_size": 13, "score": 0, "marked": False, "opened": True},
        {"seat": 1, "name": "bo", "hand_size": 15, "score": 0, "marked": False, "opened": False},
        {"seat": 2, "name": "cy", "hand_size": 15, "score": 0, "marked": False, "opened": False},
    ],
    "trains": [
        {"id": "0", "owner": 0, "tiles": [[9, 4], [4, 1]], "open_end": 1, "marked": False},
        {"id": "1", "owner": 1, "tiles": [], "open_end": 9, "marked": False},
        {"id": "2", "owner": 2, "tiles": [], "open_end": 9, "marked": False},
        {"id": "mexican", "owner": None, "tiles": [], "open_end": 9, "marked": False},
    ],
    "open_doubles": [],
    "boneyard_size": 9,
    "rules": RULES,
    "turn_state": {"drawn": False, "tiles_played": 0, "must_follow": None},
    "winners": None,
    "hand": [[9, 2], [2, 2], [0, 5]],
}

LEGAL_MOVES: dict[str, Any] = {
    "version": 4,
    "seat": 1,
    "turn": 1,
    "moves": [
        {"action": "play", "tile": [9, 2], "train": "1"},
        {"action": "mark"},
    ],
}

PLAY_RESPONSE: dict[str, Any] = {
    **GAME_VIEW,
    "version": 5,
    "events": [{"type": "tile_played", "seat": 1, "tile": [9, 2], "train": "1"}],
}

POSITION: dict[str, Any] = {
    "format": "mexican-train-position/1",
    "players": ["ann", "bo", "cy"],
    "rules": {"preset": "standard", "options": {}},
    "round": 1,
    "engine": 9,
    "turn": 1,
    "opened": [True, False, False],
    "hands": [[[9, 4], [4, 4]], [[1, 2]], [[0, 0], [3, 9]]],
    "boneyard": [[5, 6], [2, 2]],
    "trains": {"0": [[9, 4]], "1": [], "2": [], "mexican": None},
    "marked": [False, True, False],
    "open_doubles": [],
    "scores": [[], [], []],
}

SAMPLES: dict[str, Any] = {
    "game_id": "q3ZxWb0kTf9L",
    "version": 4,
    "seat": 1,
    "samples": [POSITION],
}
