"""Players, rated games and their results, driven over HTTP."""

from __future__ import annotations

import random
import uuid
from typing import Any

import redis
import requests

from service.rules.log import Replayer
from service.store import keys
from tests.live.helpers import auth, send


def new_player(base: str, name: str) -> dict[str, Any]:
    r = send("POST", f"{base}/api/v1/players", json={"name": name})
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


def player(base: str, player_id: str) -> dict[str, Any]:
    r = requests.get(f"{base}/api/v1/players/{player_id}", timeout=10)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def play_out(base: str, game: dict[str, Any], seed: int) -> tuple[str, str, dict[str, Any]]:
    """Play every person's seat to the end with random legal moves (the table token deals);
    the last move's body and Idempotency-Key, and the final view."""
    gid, rng = game["game_id"], random.Random(seed)
    tokens = {s["seat"]: s["token"] for s in game["seats"] if s["token"]}
    last: tuple[str, str] = ("", "")
    view = requests.get(f"{base}/api/v1/games/{gid}", timeout=10).json()
    while view["status"] != "game_over":
        if view["status"] in ("waiting_deal", "round_over"):
            view = send(
                "POST", f"{base}/api/v1/games/{gid}/deal", headers=auth(game["table_token"])
            ).json()
            continue
        token = tokens[view["turn"]]
        moves = send("GET", f"{base}/api/v1/games/{gid}/legal-moves", headers=auth(token)).json()[
            "moves"
        ]
        key = f'"{uuid.uuid4()}"'
        move = rng.choice(moves)
        done = send(
            "POST",
            f"{base}/api/v1/games/{gid}/moves",
            json=move,
            headers={**auth(token), "Idempotency-Key": key},
        )
        assert done.status_code == 200, done.text
        view, last = done.json(), (key, token)
        last_move = move
    return last[0], last[1], {"view": view, "move": last_move}


def replayed_names(redis_url: str, game_id: str) -> list[str]:
    """The seats' names of the game's stored log, replayed as the history and streams do."""
    replayer = Replayer()
    for raw in redis.Redis.from_url(redis_url).lrange(keys.log_key(game_id), 0, -1):
        replayer.feed(raw)
    assert replayer.state is not None
    return list(replayer.state.players)


def view_names(base: str, game_id: str) -> list[str]:
    view = requests.get(f"{base}/api/v1/games/{game_id}", timeout=10).json()
    return [p["name"] for p in view["players"]]
