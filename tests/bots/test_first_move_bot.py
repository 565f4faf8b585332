"""The documented bash bot (curl + jq) plays a whole game through a real server, and its seat
and host tokens never appear on a command line, where every user of the machine reads them."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import requests

from tests.debian import ensure_tool

BOT = Path(__file__).resolve().parents[2] / "service/tournament/examples/first_move_bot.sh"


def command_lines() -> list[bytes]:
    """Every process's command line on this machine, as ps shows it."""
    lines = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                lines.append((proc / "cmdline").read_bytes())
            except OSError:
                continue  # gone since the listing
    return lines


def test_two_bash_bots_finish_a_game_without_a_token_in_any_command_line(
    live_server: str,
) -> None:
    for tool in ("curl", "jq"):
        ensure_tool(tool, lambda t=tool: shutil.which(t), (tool,))
    body = {"players": ["ann", "bo"], "options": {"set": 6, "rounds": 2}, "seed": 4}
    created = requests.post(f"{live_server}/api/v1/games", json=body, timeout=10).json()
    secrets = [seat["token"].encode() for seat in created["seats"]]
    secrets.append(created["host_token"].encode())
    bots = []
    for seat in created["seats"]:
        env = {**os.environ, "SEAT_TOKEN": seat["token"]}
        if seat["seat"] == 0:
            env["HOST_TOKEN"] = created["host_token"]
        cmd = ["bash", str(BOT), live_server, created["game_id"]]
        bots.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env))
    seen, looks = [], 0
    deadline = time.monotonic() + 240
    while any(bot.poll() is None for bot in bots) and time.monotonic() < deadline:
        lines = command_lines()
        looks += 1
        seen += [line for line in lines if any(secret in line for secret in secrets)]
        time.sleep(0.002)  # a curl lives longer than this: no need to take a whole core
    outputs = [bot.communicate(timeout=10)[0] for bot in bots]
    assert [bot.returncode for bot in bots] == [0, 0], outputs
    assert all('"totals"' in out.splitlines()[-1] for out in outputs), outputs
    played = sum(out.count("201 ") + out.count("200 ") for out in outputs)
    assert played >= 10 and looks >= 50, (played, looks)
    assert seen == [], seen[:3]


def test_without_a_seat_token_it_says_how_to_run_it() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("SEAT_TOKEN", "HOST_TOKEN")}
    done = subprocess.run(
        ["bash", str(BOT), "http://127.0.0.1:9", "g1"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 2 and "SEAT_TOKEN=" in done.stderr, done.stderr
