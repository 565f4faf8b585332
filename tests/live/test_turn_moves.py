"""A seat's answers carry its legal moves on its turn (``legal_moves``), exactly what the engine
gives for the position, and no other reader's ever do: the move's answer, the game view, the
entries of the log page and of both streams. A client then needs one request per action."""

from __future__ import annotations

import random
from typing import Any

import pytest
import requests
from mexican_train_client import Client

from service import rules
from service.bots.registry import make_bot
from service.tournament.runner import drive_http

from .helpers import auth, create, entries, ndjson_entries, send, sse_entries

SEATS = 3
STREAMS = (("text/event-stream", sse_entries), ("application/x-ndjson", ndjson_entries))


def expected(base: str, gid: str, host: str) -> tuple[int | None, list[dict[str, Any]]]:
    """Whose turn it is and that seat's legal moves, from the host's position and the engine
    (the position carries every hand; the answers under test are not read)."""
    position = send("GET", f"{base}/api/v1/games/{gid}/position", headers=auth(host)).json()
    state = rules.import_position(position)
    if state.status != rules.Status.IN_ROUND or state.turn is None:
        return None, []
    return state.turn, [m.to_json() for m in rules.legal_moves(state, state.turn)]


def check_views(base: str, game: dict[str, Any], turn: int | None, moves: list[Any]) -> None:
    """Each seat's view has the moves on its turn alone; the host's and the public's never."""
    gid = game["game_id"]
    for seat, token in enumerate(game["tokens"]):
        view = send("GET", f"{base}/api/v1/games/{gid}", headers=auth(token)).json()
        if seat == turn:
            assert view["legal_moves"] == moves
        else:
            assert "legal_moves" not in view, (seat, turn)
    for token in (game["host"], None):
        view = send("GET", f"{base}/api/v1/games/{gid}", headers=auth(token)).json()
        assert "legal_moves" not in view


def play_from_answers(base: str, seed: int) -> tuple[dict[str, Any], dict[int, Any]]:
    """A game of three people played only from what the answers carry (never legal-moves),
    each answer and view checked against the engine. Returns the game and, per version, whose
    turn followed it and that seat's moves."""
    made = create(base, players=["ann", "bo", "cy"], seed=seed, options={"rounds": 1})
    gid, host = made["game_id"], made["host_token"]
    game = {"game_id": gid, "host": host, "tokens": [s["token"] for s in made["seats"]]}
    dealt = send("POST", f"{base}/api/v1/games/{gid}/deal", headers=auth(host)).json()
    assert "legal_moves" not in dealt  # the host's answer: the host has no seat
    rng, after = random.Random(seed), {}
    turn, moves = expected(base, gid, host)
    after[dealt["version"]] = (turn, moves)
    answer = send("GET", f"{base}/api/v1/games/{gid}", headers=auth(game["tokens"][turn])).json()
    for _ in range(400):
        if turn is None:
            break
        check_views(base, game, turn, moves)
        assert answer["legal_moves"] == moves
        actor = turn
        answer = send(
            "POST",
            f"{base}/api/v1/games/{gid}/moves",
            json=rng.choice(answer["legal_moves"]),
            headers=auth(game["tokens"][actor]),
        ).json()
        turn, moves = expected(base, gid, host)
        after[answer["version"]] = (turn, moves)
        if turn == actor:  # the turn goes on (a draw, an opening chain): the answer says how
            assert answer["legal_moves"] == moves
        else:
            assert "legal_moves" not in answer
            if turn is not None:
                token = game["tokens"][turn]
                answer = send("GET", f"{base}/api/v1/games/{gid}", headers=auth(token)).json()
    assert turn is None, "the round did not end"
    return game, after


def check_entries(listed: list[dict[str, Any]], seat: int | None, after: dict[int, Any]) -> None:
    assert [e["version"] for e in listed] == list(range(1, len(listed) + 1))
    for entry in listed:
        turn, moves = after.get(entry["version"], (None, []))
        if seat is not None and turn == seat:
            assert entry["legal_moves"] == moves, entry["version"]
        else:
            assert "legal_moves" not in entry, (seat, entry["version"])


@pytest.mark.parametrize("seed", [3, 11])
def test_each_seat_is_sent_its_own_legal_moves_on_its_turn_and_nobody_else_is(
    live: str, seed: int
) -> None:
    game, after = play_from_answers(live, seed)
    gid = game["game_id"]
    for seat, token in [*enumerate(game["tokens"]), (None, game["host"]), (None, None)]:
        check_entries(entries(live, gid, token, after=0)["entries"], seat, after)
        for media, read in STREAMS:
            headers = {**auth(token), "Accept": media}
            with requests.get(
                f"{live}/api/v1/games/{gid}/events", headers=headers, stream=True, timeout=30
            ) as r:
                assert r.status_code == 200, r.text
                check_entries(list(read(r)), seat, after)
    turned = {turn for turn, _ in after.values() if turn is not None}
    assert turned == set(range(SEATS)), "every seat had a turn"


class Counting(Client):
    """The client of the tournament's HTTP driver, counting the paths it asks for."""

    def __init__(self, base_url: str) -> None:
        super().__init__(base_url)
        self.paths: list[str] = []

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        self.paths.append(path)
        return super().request(method, path, **kwargs)


def test_the_tournament_over_http_plays_whole_games_without_asking_for_legal_moves(
    live: str,
) -> None:
    with Counting(live) as client:
        created = client.create_game(["b0", "b1", "b2", "b3"], seed=5, options={"rounds": 2})
        bots = [make_bot("greedy", seat) for seat in range(4)]
        score = drive_http(client, created, bots)
    assert score["status"] == "game_over"
    assert not [p for p in client.paths if p.endswith("/legal-moves")]
    assert len([p for p in client.paths if p.endswith("/moves")]) > 40
