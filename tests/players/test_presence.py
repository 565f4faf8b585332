"""Presence: who is at the table, in the game view and told on the game's streams."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import redis
import requests

from devstack.redis_server import RedisServer
from service.store.keys import presence_key
from tests.eventually import eventually
from tests.live.helpers import auth, send

SSE, NDJSON = "text/event-stream", "application/x-ndjson"


def new_game(base: str) -> dict[str, Any]:
    r = send("POST", f"{base}/api/v1/games", json={"players": ["Ana", "Ben", "Cy"]})
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


def present(base: str, gid: str) -> list[bool]:
    view = requests.get(f"{base}/api/v1/games/{gid}", timeout=10).json()
    return [player["present"] for player in view["players"]]


def present_soon(base: str, gid: str, expected: list[bool]) -> None:
    """Views read presence at most each second per process: it shows once they read it again
    (the wait is generous, to outlast a loaded machine, and asserts no speed)."""
    eventually(lambda: present(base, gid) == expected, 20, f"presence never showed {expected}")


class Watcher:
    """A public NDJSON reader of the game, collecting the presence lines it is sent."""

    def __init__(self, base: str, gid: str) -> None:
        self.response = requests.get(
            f"{base}/api/v1/games/{gid}/events",
            headers={"Accept": NDJSON},
            stream=True,
            timeout=30,
        )
        assert self.response.status_code == 200
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for raw in self.response.iter_lines(chunk_size=None):
                if raw.strip():
                    message = json.loads(raw)
                    if message.get("type") == "presence":
                        self.lines.put(message)
        except (requests.RequestException, AttributeError):
            pass  # closed by the test (urllib3 meets a released connection as AttributeError)

    def next(self, timeout: float = 8) -> dict[str, Any]:
        return self.lines.get(timeout=timeout)

    def __enter__(self) -> Watcher:
        return self

    def __exit__(self, *_: object) -> None:
        self.response.close()


def open_seat_stream(base: str, gid: str, token: str) -> requests.Response:
    r = requests.get(
        f"{base}/api/v1/games/{gid}/events",
        headers={**auth(token), "Accept": SSE},
        stream=True,
        timeout=30,
    )
    assert r.status_code == 200
    # The retry field: the stream is open. The line iterator is kept with the response: a
    # discarded one closes the connection when it is collected (urllib3 releases a response
    # read only in part), and the server then ends the stream at its next message.
    r.lines = r.iter_lines(chunk_size=None)  # type: ignore[attr-defined]
    next(r.lines)  # type: ignore[attr-defined]
    return r


def test_a_seats_stream_makes_it_present_until_it_closes(
    server: str, redis_server: RedisServer
) -> None:
    game = new_game(server)
    gid, tokens = game["game_id"], [seat["token"] for seat in game["seats"]]
    assert present(server, gid) == [False, False, False]
    with Watcher(server, gid) as watcher:
        seat_stream_comes_and_goes(server, gid, tokens[1], watcher, redis_server)


def seat_stream_comes_and_goes(
    server: str, gid: str, token: str, watcher: Watcher, redis_server: RedisServer
) -> None:
    stream = open_seat_stream(server, gid, token)
    assert watcher.next() == {"type": "presence", "seat": 1, "present": True}
    present_soon(server, gid, [False, True, False])
    time.sleep(3)  # past the window of the request that opened the stream: the stream holds it
    raw = redis.Redis.from_url(redis_server.url).hgetall(presence_key(gid))
    assert present(server, gid) == [False, True, False], (raw, time.time())
    assert watcher.lines.empty()
    stream.close()
    # The server notices a closed connection when a keep-alive to it fails (10 s apart).
    assert watcher.next(timeout=25) == {"type": "presence", "seat": 1, "present": False}
    present_soon(server, gid, [False, False, False])


def test_a_request_makes_its_seat_present_for_the_window(server: str) -> None:
    game = new_game(server)
    gid = game["game_id"]
    with Watcher(server, gid) as watcher:
        request_comes_and_goes(server, game, watcher)


def request_comes_and_goes(server: str, game: dict[str, Any], watcher: Watcher) -> None:
    gid, tokens = game["game_id"], [seat["token"] for seat in game["seats"]]
    seen = requests.get(f"{server}/api/v1/games/{gid}", headers=auth(tokens[2]), timeout=10)
    assert [p["present"] for p in seen.json()["players"]] == [False, False, True]
    assert watcher.next() == {"type": "presence", "seat": 2, "present": True}
    # Nothing holds the seat past its request's window (2 s here): it is told gone, and the
    # view agrees. The generous wait bounds a hang, and asserts no speed.
    assert watcher.next(timeout=30) == {"type": "presence", "seat": 2, "present": False}
    present_soon(server, gid, [False, False, False])
    # A public reader or the host is nobody's seat.
    requests.get(f"{server}/api/v1/games/{gid}", headers=auth(game["host_token"]), timeout=10)
    time.sleep(1.5)
    present_soon(server, gid, [False, False, False])
    assert watcher.lines.empty()


def test_presence_messages_on_sse_have_no_id(server: str) -> None:
    game = new_game(server)
    gid, tokens = game["game_id"], [seat["token"] for seat in game["seats"]]
    watcher = requests.get(
        f"{server}/api/v1/games/{gid}/events?after=1",
        headers={"Accept": SSE},
        stream=True,
        timeout=30,
    )
    lines = watcher.iter_lines(chunk_size=None)
    assert next(lines) == b"retry: 1000"
    requests.get(f"{server}/api/v1/games/{gid}", headers=auth(tokens[0]), timeout=10)
    message = []
    for raw in lines:
        if raw.startswith(b":") or (not raw and not message):
            continue
        if not raw:
            break
        message.append(raw)
    assert message == [b"event: presence", b'data: {"seat":0,"present":true}']
    watcher.close()


class PresenceWrites:
    """The writes to a game's presence hash, as Redis's MONITOR sees them, each with who sent
    it: ``lua`` (a script, such as a change's compare-and-set) or ``tcp`` (a command of its
    own)."""

    def __init__(self, url: str, gid: str) -> None:
        self.client = redis.Redis.from_url(url)
        self.key, self.end = presence_key(gid), f"end-{gid}"
        self.seen: list[tuple[str, str]] = []
        self.monitor = self.client.monitor()
        self.monitor.__enter__()
        self.client.echo(f"start-{gid}")
        while f"start-{gid}" not in self.monitor.next_command()["command"]:
            pass

    def stop(self) -> list[tuple[str, str]]:
        self.client.echo(self.end)
        while self.end not in (found := self.monitor.next_command())["command"]:
            name = found["command"].split(" ", 1)[0]
            if self.key in found["command"] and name in ("HSET", "EXPIRE", "HDEL"):
                self.seen.append((found["client_type"], name))
        self.monitor.__exit__()
        return self.seen


def test_a_move_marks_its_seat_with_the_change_and_a_refused_one_on_its_own(
    server: str, redis_server: RedisServer
) -> None:
    game = new_game(server)
    gid, tokens = game["game_id"], [seat["token"] for seat in game["seats"]]
    dealt = send("POST", f"{server}/api/v1/games/{gid}/deal", headers=auth(game["host_token"]))
    assert dealt.status_code == 200, dealt.text
    turn = dealt.json()["turn"]
    legal = send("GET", f"{server}/api/v1/games/{gid}/legal-moves", headers=auth(tokens[turn]))
    move = legal.json()["moves"][0]
    time.sleep(0.8)  # past the marks' throttle (a third of the 2 s window): the next one is due
    writes = PresenceWrites(redis_server.url, gid)
    played = send(
        "POST", f"{server}/api/v1/games/{gid}/moves", json=move, headers=auth(tokens[turn])
    )
    assert played.status_code == 200, played.text
    assert [p["present"] for p in played.json()["players"]][turn] is True
    # The move's compare-and-set wrote the mark: no round trip of its own.
    assert writes.stop() == [("lua", "HSET"), ("lua", "EXPIRE")]
    # A seat that has made no request yet (so its mark is due) and whose turn it is not.
    waiting = next(s for s in range(3) if s not in (turn, played.json()["turn"]))
    writes = PresenceWrites(redis_server.url, gid)
    refused = send(
        "POST", f"{server}/api/v1/games/{gid}/moves", json=move, headers=auth(tokens[waiting])
    )
    assert refused.status_code == 409, refused.text
    # Nothing was stored, so the refused request's seat is marked by a write of its own.
    assert writes.stop() == [("tcp", "HSET"), ("tcp", "EXPIRE")]
    marks = redis.Redis.from_url(redis_server.url).hgetall(presence_key(gid))
    assert {f"r{turn}".encode(), f"r{waiting}".encode()} <= set(marks)


def presence_example() -> tuple[str, dict[str, Any]]:
    """The shell lines of the console example of players.md's Presence section that follows
    the game, and the line it shows the reader getting."""
    text = (Path(__file__).parents[2] / "docs" / "players.md").read_text(encoding="utf-8")
    section = text[text.index("## Presence") :]
    block = re.search(r"```console\n(.*?)```", section, re.DOTALL)
    assert block is not None
    lines = block.group(1).splitlines()
    script = "\n".join(line[2:] for line in lines if line.startswith("$ "))
    (shown,) = [json.loads(line) for line in lines if line.startswith("{")]
    return script, shown


def test_players_md_presence_example_runs_as_written(server: str) -> None:
    """players.md's presence example, run by a shell against a game in progress: its stream
    opens and gets the line it shows when seat 1 comes to the table."""
    script, shown = presence_example()
    game = new_game(server)
    gid, tokens = game["game_id"], [seat["token"] for seat in game["seats"]]
    env = {**os.environ, "S": server, "G": gid}
    shell = subprocess.Popen(
        ["bash", "-c", script], env=env, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    got: queue.Queue[dict[str, Any]] = queue.Queue()
    threading.Thread(target=read_lines, args=(shell, got), daemon=True).start()
    try:
        assert seat_comes(server, gid, tokens[1], got) == shown
    finally:
        os.killpg(shell.pid, signal.SIGTERM)
        shell.wait()


def read_lines(shell: subprocess.Popen[str], got: queue.Queue[dict[str, Any]]) -> None:
    assert shell.stdout is not None
    for line in shell.stdout:
        if line.strip():
            got.put(json.loads(line))


def seat_comes(base: str, gid: str, token: str, got: queue.Queue[dict[str, Any]]) -> Any:
    """The first line the example's reader gets that is not seat 1 going away: the shell's
    stream opens at a moment this test cannot see, so seat 1 comes, and goes again (its 2 s
    window) before it comes once more, until the reader was there to see it come."""
    for _ in range(5):
        requests.get(f"{base}/api/v1/games/{gid}", headers=auth(token), timeout=10)
        try:
            line = got.get(timeout=3)
        except queue.Empty:
            time.sleep(2)  # seat 1 leaves before it comes again
            continue
        if line != {"type": "presence", "seat": 1, "present": False}:
            return line
    return None
