"""The documented example bot that uses /samples plays a whole game through a real server."""

from __future__ import annotations

import ast
import subprocess
import sys

from service.client import Client


def test_three_sampling_bots_finish_a_game(live_server: str) -> None:
    with Client(live_server) as client:
        created = client.create_game(
            ["ann", "bo", "cy"], preset="standard", options={"rounds": 2}, seed=21
        )
    game = created["game_id"]
    procs = []
    for seat in created["seats"]:
        cmd = [sys.executable, "-m", "service.tournament.examples.sampling_bot", live_server, game,
               seat["token"], "--samples", "4"]  # fmt: skip
        if seat["seat"] == 0:
            cmd += ["--host", created["host_token"]]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True))
    try:
        outputs = [proc.communicate(timeout=300)[0] for proc in procs]
    finally:
        for proc in procs:
            proc.kill()
    assert [proc.returncode for proc in procs] == [0, 0, 0]
    with Client(live_server) as client:
        score = client.score(game)
        view = client.view(game)
    assert view["status"] == "game_over" and len(score["players"][0]["rounds"]) == 2
    for out in outputs:
        assert ast.literal_eval(out.strip()) == {
            "totals": score["totals"],
            "winners": score["winners"],
        }
