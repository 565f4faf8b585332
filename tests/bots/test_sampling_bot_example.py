"""The documented example bot that uses /samples plays a whole game through a real server."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator

import pytest

from service.client import Client
from service.launch.redis_server import RedisServer
from tests.servers import start_gunicorn


@pytest.fixture()
def gevent_server(redis_server: RedisServer) -> Iterator[str]:
    """The bots each hold their seat's stream for the whole game: a gevent pool serves them all
    (in the gthread pool each stream holds one of its four threads)."""
    with start_gunicorn(redis_server.url, env={"GUNICORN_POOL": "streams"}) as base_url:
        yield base_url


def test_three_sampling_bots_finish_a_game(gevent_server: str) -> None:
    with Client(gevent_server) as client:
        created = client.create_game(
            ["ann", "bo", "cy"], preset="standard", options={"rounds": 2}, seed=21
        )
    game = created["game_id"]
    procs = []
    for seat in created["seats"]:
        bot = "service.tournament.examples.sampling_bot"
        cmd = [sys.executable, "-m", bot, gevent_server, game, seat["token"], "--samples", "4"]
        if seat["seat"] == 0:
            cmd += ["--host", created["host_token"]]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True))
    try:
        outputs = [proc.communicate(timeout=300)[0] for proc in procs]
    finally:
        for proc in procs:
            proc.kill()
    assert [proc.returncode for proc in procs] == [0, 0, 0]
    with Client(gevent_server) as client:
        score = client.score(game)
        view = client.view(game)
    assert view["status"] == "game_over" and len(score["players"][0]["rounds"]) == 2
    for out in outputs:
        assert ast.literal_eval(out.strip()) == {
            "totals": score["totals"],
            "winners": score["winners"],
        }
