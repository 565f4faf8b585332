"""Small HTTP helpers for the live-play tests: create tables, play a seat, read streams."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
import pytest
import requests

TIMEOUT = 30
RETRIES_503 = 4  # a Redis slow to answer on a loaded machine: a 503, and the client retries


def send(method: str, url: str, **kwargs: Any) -> requests.Response:
    """A request as a well-behaved client sends it: a POST with an Idempotency-Key, sent again
    with the same key after a 503's Retry-After (the key makes the retry safe)."""
    if method == "POST":
        headers = {"Idempotency-Key": f'"{uuid.uuid4()}"', **kwargs.pop("headers", {})}
        kwargs["headers"] = headers
    kwargs.setdefault("timeout", TIMEOUT)
    for _ in range(RETRIES_503):
        r = requests.request(method, url, **kwargs)
        if r.status_code != 503 or "stream" in kwargs:
            return r
        time.sleep(float(r.headers.get("Retry-After", "1")))
    return r


def answered(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The status of every answer the tests' requests get from now on (their helpers send a
    POST again after a 503, and may get its kept answer then)."""
    statuses: list[int] = []
    request = requests.request

    def recorded(*args: Any, **kwargs: Any) -> requests.Response:
        response = request(*args, **kwargs)
        statuses.append(response.status_code)
        return response

    monkeypatch.setattr(requests, "request", recorded)
    return statuses


def auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def create(base: str, **body: Any) -> dict[str, Any]:
    r = send("POST", f"{base}/api/v1/games", json=body)
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


def entries(base: str, gid: str, token: str | None = None, **params: Any) -> dict[str, Any]:
    """The JSON page of ``params``; without a ``limit``, every page from ``after`` on joined
    into one (a page holds at most 500 entries)."""
    whole = "limit" not in params
    r = requests.get(
        f"{base}/api/v1/games/{gid}/events", params=params, headers=auth(token), timeout=90
    )
    assert r.status_code == 200, r.text
    page: dict[str, Any] = r.json()
    while whole and page["more"]:
        params = {**params, "after": page["entries"][-1]["version"], "wait": 0}
        r = requests.get(
            f"{base}/api/v1/games/{gid}/events", params=params, headers=auth(token), timeout=90
        )
        assert r.status_code == 200, r.text
        following = r.json()
        page = {**following, "entries": page["entries"] + following["entries"]}
    return page


def play_turn(base: str, gid: str, token: str, rng: random.Random) -> dict[str, Any] | None:
    """One random legal move of the seat, or None when it is not its turn."""
    r = send("GET", f"{base}/api/v1/games/{gid}/legal-moves", headers=auth(token))
    assert r.status_code == 200, r.text
    moves = r.json()["moves"]
    if not moves:
        return None
    done = send(
        "POST",
        f"{base}/api/v1/games/{gid}/moves",
        json=rng.choice(moves),
        headers=auth(token),
        timeout=TIMEOUT,
    )
    assert done.status_code == 200, done.text
    body: dict[str, Any] = done.json()
    return body


def sse_entries(response: requests.Response) -> Iterator[dict[str, Any]]:
    """The entries of an SSE response, checking each message's id against its version."""
    event_id, event = None, "entry"
    for raw in response.iter_lines():
        line = raw.decode()
        if line.startswith("id: "):
            event_id = int(line[4:])
        elif line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event == "presence":
            event = "entry"  # a presence change, not an entry
        elif line.startswith("data: "):
            entry: dict[str, Any] = orjson.loads(line[6:])
            assert entry["version"] == event_id
            yield entry


def ndjson_entries(response: requests.Response) -> Iterator[dict[str, Any]]:
    """The entries of an NDJSON response (presence lines, which have a type, left out)."""
    for raw in response.iter_lines():
        if raw.strip():
            message: dict[str, Any] = orjson.loads(raw)
            if "type" not in message:
                yield message


SSE = "text/event-stream"
NDJSON = "application/x-ndjson"
BETWEEN_ROUNDS = ("waiting_deal", "round_over")


class Game:
    """A created game: its id, host token and each seat's token (None for bot and open seats)."""

    def __init__(self, created: dict[str, Any]) -> None:
        self.created = created
        self.id: str = created["game_id"]
        self.host: str = created["host_token"]
        self.tokens: list[str | None] = [seat["token"] for seat in created["seats"]]

    def readers(self) -> dict[str, str | None]:
        """Everyone who may follow the game, by name: the public, each person's seat, the host."""
        found: dict[str, str | None] = {"public": None, "host": self.host}
        for seat, token in enumerate(self.tokens):
            if token is not None:
                found[f"seat {seat}"] = token
        return found

    def seat_of(self, reader: str) -> int | None:
        return int(reader.split()[1]) if reader.startswith("seat ") else None


def view(base: str, gid: str, token: str | None = None) -> dict[str, Any]:
    r = send("GET", f"{base}/api/v1/games/{gid}", headers=auth(token))
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def play_people(bases: list[str], game: Game, rng: random.Random) -> dict[str, Any]:
    """Play the game to its end from random instances: the host deals when a round is due
    (unless the table deals by itself), each person's seat makes random legal moves. Each
    action's answer (a view with the status and the turn) says what to do next."""
    current = view(rng.choice(bases), game.id)
    while True:
        status = current["status"]
        if status == "game_over":
            return current
        base = rng.choice(bases)
        if status in BETWEEN_ROUNDS:
            r = send("POST", f"{base}/api/v1/games/{game.id}/deal", headers=auth(game.host))
            assert r.status_code == 200, r.text
            current = r.json()
            continue
        token = game.tokens[current["turn"]]
        if token is None:
            current = bots_played(base, game)
            continue
        done = play_turn(base, game.id, token, rng)
        current = done if done is not None else view(base, game.id)


def bots_played(base: str, game: Game, seconds: float = 30) -> dict[str, Any]:
    """The view once a bot's turn is played: a request plays bots only within its CPU budget
    (on a busy machine, not all of them), and the worker plays the rest."""
    deadline = time.monotonic() + seconds
    while True:
        current = view(base, game.id)
        if current["status"] != "in_round" or game.tokens[current["turn"]] is not None:
            return current
        assert time.monotonic() < deadline, "a bot's turn was not played"
        time.sleep(0.05)


def act_once(base: str, game: Game, rng: random.Random) -> None:
    """One action of whoever must act: the host deals between rounds, else the seat to move."""
    current = view(base, game.id)
    if current["status"] in BETWEEN_ROUNDS:
        r = send("POST", f"{base}/api/v1/games/{game.id}/deal", headers=auth(game.host))
        assert r.status_code == 200, r.text
    elif current["status"] == "in_round":
        token = game.tokens[current["turn"]]
        assert token is not None
        play_turn(base, game.id, token, rng)


def is_end(entry: dict[str, Any]) -> bool:
    return any(event["type"] == "game_over" for event in entry["events"])


def follow_stream(
    bases: list[str], gid: str, token: str | None, media: str, rng: random.Random
) -> list[dict[str, Any]]:
    """Every entry of a game through its SSE or NDJSON stream, hanging up after a random number
    of entries and resuming on the next instance (SSE: ``Last-Event-ID``; NDJSON: ``after``),
    until the server closes the stream after the game's last entry."""
    got: list[dict[str, Any]] = []
    turn = 0
    while True:
        base, turn = bases[turn % len(bases)], turn + 1
        headers = {"Accept": media}
        params: dict[str, Any] = {}
        if token is not None:
            params["access_token"] = token  # as an EventSource must send it
        last = got[-1]["version"] if got else 0
        if media == SSE and got:
            headers["Last-Event-ID"] = str(last)
            params["after"] = 0  # Last-Event-ID wins
        else:
            params["after"] = last
        r = requests.get(
            f"{base}/api/v1/games/{gid}/events",
            params=params,
            headers=headers,
            stream=True,
            timeout=TIMEOUT,
        )
        assert r.status_code == 200, r.text
        assert r.headers["Content-Type"].startswith(media)
        take = rng.randint(1, 25)
        read = sse_entries(r) if media == SSE else ndjson_entries(r)
        with r:
            for entry in read:
                got.append(entry)
                if is_end(entry):
                    assert next(read, None) is None, "the stream ends after the last entry"
                    return got
                take -= 1
                if take == 0:
                    break
            else:
                raise AssertionError("the stream closed before the game's last entry")


def follow_pages(
    bases: list[str], gid: str, token: str | None, rng: random.Random
) -> list[dict[str, Any]]:
    """Every entry of a game through JSON long-polls on random instances, until the last."""
    got: list[dict[str, Any]] = []
    while not got or not is_end(got[-1]):
        last = got[-1]["version"] if got else 0
        page = entries(rng.choice(bases), gid, token, after=last, wait=5)
        got.extend(page["entries"])
    return got


def redacted(entry: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """A host's (whole) entry as ``seat`` may see it: other seats' drawn tiles hidden."""
    events = [
        {"type": "tile_drawn", "seat": event["seat"]}
        if event["type"] == "tile_drawn" and event["seat"] != seat
        else event
        for event in entry["events"]
    ]
    return {**entry, "events": events}


def turns_after(whole: list[dict[str, Any]]) -> list[int | None]:
    """Whose turn follows each entry in a running round, told by the entries' events alone."""
    turn: int | None = None
    found = []
    for entry in whole:
        for event in entry["events"]:
            if event["type"] == "round_started":
                turn = event["starter"]
            elif event["type"] == "turn_passed":
                turn = event["seat"]
            elif event["type"] in ("round_over", "game_over"):
                turn = None
        found.append(turn)
    return found


def check_seen(seen: list[dict[str, Any]], whole: list[dict[str, Any]], seat: int | None) -> None:
    """``seen`` is ``whole`` as ``seat`` may see it: other seats' drawn tiles hidden, and the
    seat's legal moves (checked against the engine in test_turn_moves) on the entries after
    which the turn is its, and on no other."""
    plain = [{k: v for k, v in entry.items() if k != "legal_moves"} for entry in seen]
    assert plain == [redacted(entry, seat) for entry in whole]
    carried = ["legal_moves" in entry for entry in seen]
    assert carried == [seat is not None and turn == seat for turn in turns_after(whole)]


MOVES = ("play", "draw", "mark", "end_turn")


def history(base: str, gid: str, token: str | None = None) -> dict[str, Any]:
    r = requests.get(f"{base}/api/v1/games/{gid}/history", headers=auth(token), timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def score(base: str, gid: str) -> dict[str, Any]:
    r = requests.get(f"{base}/api/v1/games/{gid}/score", timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def rounds_of(doc: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """A history's entries cut into rounds: each list starts with the round's deal."""
    rounds: list[list[dict[str, Any]]] = []
    for entry in doc["entries"]:
        if entry["action"]["action"] == "deal":
            rounds.append([entry])
        elif rounds:
            rounds[-1].append(entry)
    return rounds


def assert_replays(base: str, gid: str) -> int:
    """The finished game replays from its history: each round's deal position, imported through
    ``POST /games``, with the round's moves applied through ``/moves`` (each answering the
    events the original entry had, as the mover sees them), ends with the same scores.
    Returns the number of moves replayed."""
    doc = history(base, gid)
    final = score(base, gid)
    assert final["status"] == "game_over"
    rounds = rounds_of(doc)
    assert len(rounds) == final["rounds"]
    replayed = 0
    for number, entries_of_round in enumerate(rounds, 1):
        deal, *rest = entries_of_round
        copy = Game(create(base, position=deal["position"]))
        for entry in rest:
            if entry["action"]["action"] not in MOVES:
                continue  # seat changes do not touch the engine
            seat = entry["seat"]
            r = requests.post(
                f"{base}/api/v1/games/{copy.id}/moves",
                json=entry["action"],
                headers=auth(copy.tokens[seat]),
                timeout=TIMEOUT,
            )
            assert r.status_code == 200, (entry, r.text)
            assert r.json()["events"] == redacted(entry, seat)["events"], entry
            replayed += 1
        got = score(base, copy.id)
        for mine, theirs in zip(got["players"], final["players"], strict=True):
            assert mine["rounds"] == theirs["rounds"][:number]
        if number == len(rounds):
            assert got["status"] == "game_over"
            assert got["totals"] == final["totals"]
            assert got["winners"] == final["winners"]
    return replayed


@contextmanager
def stand_in_streams(
    answers: int, content_type: str, body: bytes
) -> Iterator[tuple[str, list[int]]]:
    """A server on loopback that answers ``answers`` GETs 200 with ``body`` as
    ``content_type``, then hangs up on each without an answer (a real failure); its URL, and
    how many GETs it was sent."""
    served = [0]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            served[0] += 1
            if served[0] > answers:
                self.close_connection = True
                return
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", served
    finally:
        server.shutdown()
        server.server_close()
