"""The documented bash bot (curl + jq) plays a whole game through a real server, and its seat
and host tokens never appear on a command line, where every user of the machine reads them."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
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


#: Requests per token per game per minute on the limited server: a person's pace several
#: times over, far below a loop that looks at the game ten times a second.
LIMIT = 60


@pytest.fixture(scope="module")
def limited_server(redis_server: RedisServer) -> Iterator[str]:
    env = {"RATE_LIMIT_PER_MINUTE": str(LIMIT), "LOG_LEVEL": "warning"}
    with start_gunicorn(redis_server.url, workers=1, env=env) as base:
        yield base


def play_slowly(base: str, gid: str, token: str, bot: subprocess.Popen[str]) -> None:
    """Seat 1 at a person's pace: a second to think before each move, the log's long-poll
    between them (its entries carry the seat's legal moves on its turn); until the game ends,
    or the bot does."""
    headers = {"Authorization": f"Bearer {token}"}
    after = 0
    while bot.poll() is None:
        url = f"{base}/api/v1/games/{gid}/events?after={after}&wait=30"
        page = requests.get(url, headers=headers, timeout=40)
        assert page.status_code == 200, page.text
        entries = page.json()["entries"]
        if not entries:
            continue
        after = entries[-1]["version"]
        if any(e["type"] == "game_over" for entry in entries for e in entry["events"]):
            return
        if moves := entries[-1].get("legal_moves"):
            time.sleep(1)
            requests.post(
                f"{base}/api/v1/games/{gid}/moves",
                json=moves[0],
                headers={**headers, "If-Match": f'"{after}"'},
                timeout=10,
            )


def test_the_bash_bot_finishes_a_game_against_a_person_within_a_rate_limit(
    limited_server: str,
) -> None:
    """While a person thinks, the bot waits on the log rather than looking again and again:
    under a per-token limit of a minute's worth of a person's requests it finishes the game
    (and a 429, had it met one, would have been waited out, not the end of it)."""
    for tool in ("curl", "jq"):
        ensure_tool(tool, lambda t=tool: shutil.which(t), (tool,))
    body = {"players": ["bot", "ann"], "options": {"set": 6, "rounds": 1}, "seed": 6}
    created = requests.post(f"{limited_server}/api/v1/games", json=body, timeout=10).json()
    seat = created["seats"][0]["token"]
    env = {**os.environ, "SEAT_TOKEN": seat, "HOST_TOKEN": created["host_token"]}
    bot = subprocess.Popen(
        ["bash", str(BOT), limited_server, created["game_id"]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        play_slowly(limited_server, created["game_id"], created["seats"][1]["token"], bot)
        out, err = bot.communicate(timeout=60)
    finally:
        bot.kill()  # a failed test leaves no bot waiting on the log
    assert bot.returncode == 0, (out, err)
    assert '"totals"' in out.splitlines()[-1] and "429" not in out, out
