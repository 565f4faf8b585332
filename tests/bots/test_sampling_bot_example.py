"""The documented example bot that uses /samples plays a whole game through a real server."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from mexican_train_client import Client

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer


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
        cmd = [sys.executable, "-m", bot, gevent_server, game, "--samples", "4"]
        env = {**os.environ, "SEAT_TOKEN": seat["token"]}
        if seat["seat"] == 0:
            env["HOST_TOKEN"] = created["host_token"]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env))
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


def test_tokens_come_from_the_environment_whatever_their_first_character() -> None:
    """A token may start with "-" (base64url), which an argument parser takes for an option;
    and a command line is readable by every user of the machine."""
    bot = "service.tournament.examples.sampling_bot"
    cmd = [sys.executable, "-m", bot, "http://127.0.0.1:9", "g1"]
    env = {**os.environ, "SEAT_TOKEN": "-dash", "HOST_TOKEN": "--host"}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    # It got past its arguments and failed on the closed port, not on the parser.
    assert "usage:" not in done.stderr, done.stderr
    assert "Connect" in done.stderr or "connect" in done.stderr, done.stderr
    missing = subprocess.run(
        [*cmd[:-2], "http://x", "g"],
        env={**os.environ, "SEAT_TOKEN": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "SEAT_TOKEN" in missing.stderr
