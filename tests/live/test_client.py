"""The Python client live: ``events()`` resumes by itself across a killed server, tables
(bots, invites, seat changes) through the client, and tournament bots next to server bots."""

from __future__ import annotations

import os
import random
import signal
import threading
from typing import Any

import psutil
import pytest
from mexican_train_client import Client, Media, NotFound, RetryPolicy, Unauthorized

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer, free_port
from service.rules import PRESETS
from service.tournament.__main__ import main as tournament_main
from service.tournament.runner import game_specs, play_http, play_local
from tests.live.conftest import LIVE_ENV
from tests.live.helpers import Game, act_once, check_seen, entries, play_people

#: Patient enough to outlast a server restart (a few seconds on a loaded machine).
PATIENT = RetryPolicy(attempts=40, base=0.1, cap=1.0)


def kill_server_on(port: int) -> None:
    """SIGKILL the gunicorn master listening on ``port`` and its workers: streams are cut."""
    master = next(
        psutil.Process(c.pid)
        for c in psutil.net_connections("tcp")
        if c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN and c.pid
    )
    while master.parent() is not None and "gunicorn" in " ".join(master.parent().cmdline()):
        master = master.parent()
    for proc in [*master.children(recursive=True), master]:
        os.kill(proc.pid, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize("media", [Media.SSE, Media.NDJSON])
def test_events_resume_by_themselves_across_a_killed_server(
    redis_server: RedisServer, live: str, media: Media
) -> None:
    """A reader on its own instance: the instance is killed mid-game and started again on the
    same port; the reader gets every entry exactly once, as its seat may see it."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with Client(live) as host_client:
        game = Game(host_client.create_game(["ann", "bo"], options={"rounds": 2}, seed=11))
    token = game.tokens[1]
    got: list[dict[str, Any]] = []
    reader_client = Client(url, retry=PATIENT)
    reading = threading.Event()

    def read() -> None:
        for entry in reader_client.events(game.id, token=token, media=media):
            got.append(entry)
            reading.set()

    with start_gunicorn(redis_server.url, port=port, workers=1, env=LIVE_ENV):
        reader = threading.Thread(target=read)
        reader.start()
        assert reading.wait(30)
        rng = random.Random(3)
        for _ in range(30):  # part of the game, then the reader's server dies
            act_once(live, game, rng)
        kill_server_on(port)
    with start_gunicorn(redis_server.url, port=port, workers=1, env=LIVE_ENV):
        final = play_people([live], game, rng)
        reader.join(60)
        assert not reader.is_alive()
    reader_client.close()
    assert [e["version"] for e in got] == list(range(1, final["version"] + 1))
    whole = entries(live, game.id, game.host)["entries"]
    check_seen(got, whole, 1)
    assert reader_client.requests >= 2, "it reconnected"


def test_tables_through_the_client(live: str) -> None:
    with Client(live) as client:
        levels = {level["name"] for level in client.bots()}
        assert {"random", "greedy", "planner"} <= levels
        created = client.create_game(
            ["ann", {"name": "cpu", "bot": "greedy"}, {"open": True}], auto_deal=True
        )
        gid, host = created["game_id"], created["host_token"]
        invite = created["seats"][2]["invite"]
        assert created["status"] == "waiting_deal"
        joined = client.join(gid, invite, "bo")
        assert joined["seat"] == 2
        assert client.view(gid)["status"] == "in_round", "the last seat filled: dealt at once"
        with pytest.raises(NotFound):
            client.join(gid, "no-such-invite-at-all", "cy")
        changed = client.set_seat(gid, 2, token=host, reopen=True)
        assert changed["changed"]["invite"]
        with pytest.raises(Unauthorized):
            client.view(gid, token=joined["token"])
        after = client.set_seat(gid, 2, token=host, bot="planner")
        assert after["players"][2]["bot"] == "planner"
        log = entries(live, gid, host)["entries"]
        changes = [e["events"][0] for e in log if e["action"]["action"] in ("join", "seat")]
        assert [c["type"] for c in changes] == ["seat_joined", "seat_changed", "seat_changed"]


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_tournament_bots_sit_next_to_server_bots_and_ask_nothing(live: str, preset: str) -> None:
    """The same games in-process and over HTTP (the server playing its seats as it would).
    Over HTTP the tournament keeps its own copy of each game: the create, the starting position,
    one request per move or deal of its own, and one read of the log after each of those that
    handed the turn to the server's bots."""
    rounds = 3
    for bots in (
        ["planner", "greedy", "random", "random"],
        ["planner", "server:greedy", "random", "server:planner"],
    ):
        for spec in game_specs(bots, 2, base_seed=900, preset=preset, options={"rounds": rounds}):
            with Client(live) as client:
                result = play_http(client, spec, record=True)
                requests_made = client.requests
            assert result.digest == play_local(spec).digest
            assert result.move_log is not None
            server = {s for s, name in enumerate(spec.bots) if name.startswith("server:")}
            own = [i for i, (seat, _) in enumerate(result.move_log) if seat not in server]
            handoffs = sum(
                1
                for i in own
                if i + 1 < len(result.move_log) and result.move_log[i + 1][0] in server
            )
            # A round that a server bot opens: the deal's answer counts its moves too.
            assert 2 + rounds + len(own) + handoffs <= requests_made
            assert requests_made <= 2 + 2 * rounds + len(own) + handoffs, (spec.bots, requests_made)
            if not server:
                assert requests_made == 2 + rounds + len(own)


def test_the_tournament_cli_seats_server_bots(
    live: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["play", "--games", "2", "--rounds", "1", "--quiet", "--bots", "planner,server:greedy"]
    assert tournament_main([*args, "--server", live]) == 0
    over_http = capsys.readouterr().out
    assert tournament_main([*args, "--local"]) == 0
    local = capsys.readouterr().out
    assert "server:greedy" in over_http
    rows = [line for line in over_http.splitlines() if line.startswith(("planner", "server:"))]
    assert len(rows) == 2
    assert rows == [line for line in local.splitlines() if line.startswith(("planner", "server:"))]
    assert tournament_main(["play", "--local", "--bots", "planner,server:nobody"]) == 2
