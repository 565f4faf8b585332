"""The TypeScript example client (clients/ts) on the production topology: its types generated
from the committed OpenAPI document by openapi-typescript, type-checked by ``tsc --strict``
with no cast and no ``any``, it plays a whole game (its seat against two server bots) through
openapi-fetch and the ``eventsource`` package; a standard EventSource on the finished game stops
at the server's 204 after one request.

Node.js and npm come from Debian's packages where they are missing (CI machines are fresh);
the npm packages from the registry, as package-lock.json pins them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from devstack.stack import Stack, build_stack
from tests.bots.faulty_proxy import faulty_proxy
from tests.debian import ensure_tool
from tests.e2e.lossy_proxy import lossy_proxy
from tests.e2e.nginx import ensure_nginx

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
TS = ROOT / "clients" / "ts"
SPEC = ROOT / "openapi" / "openapi.json"
CLOSED = 2  # EventSource.readyState once it gave up for good


def run(*command: str, timeout: float = 300) -> str:
    done = subprocess.run(
        command, cwd=TS, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def built() -> Path:
    """clients/ts installed (npm ci), its types generated and compiled (tsc)."""
    ensure_tool("node", lambda: shutil.which("node"), ("nodejs",))
    npm = ensure_tool("npm", lambda: shutil.which("npm"), ("npm",))
    run(npm, "ci", "--no-audit", "--no-fund")
    run(npm, "run", "generate")
    run(npm, "run", "build")
    return TS / "dist"


def node(built: Path, script: str, *args: str, timeout: float = 300) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        run(shutil.which("node") or "node", str(built / script), *args, timeout=timeout)
        .strip()
        .splitlines()[-1]
    )
    return found


def code_of(path: Path) -> str:
    """A TypeScript file without its comments and string literals (their words are no code)."""
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"`(?:\\.|[^`\\])*`|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", '""', text)


def test_the_example_uses_no_cast_and_no_any(built: Path) -> None:
    config = json.loads((TS / "tsconfig.json").read_text())["compilerOptions"]
    assert config["strict"] is True
    sources = sorted((TS / "src").glob("*.ts"))
    assert {path.name for path in sources} >= {"api.ts", "play.ts", "stops.ts", "aborts.ts"}
    for path in sources:
        code = code_of(path)
        for what, pattern in [
            ("a cast", r"\bas\s+(?!const\b)[A-Za-z_{(\[]"),
            ("any", r"(?<!\.)\bany\b"),  # the type, not a method (AbortSignal.any)
            ("a non-null assertion", r"[\w)\]]!(?!=)"),
            ("a suppressed error", r"@ts-"),
        ]:
            assert not re.search(pattern, code), f"{path.name} uses {what}"
    assert (TS / "src" / "generated" / "api.ts").exists(), "types generated from the spec"


def test_the_callers_abort_stops_a_resent_request_and_its_body(built: Path) -> None:
    """A request sent again (after a 503) must still heed its caller's AbortSignal once its
    answer's headers came: a stream's reader aborts to stop reading, and a signal followed
    only until the headers left it reading a body that never ends. An abort during the wait
    before a resend ends the call too, instead of the wait and a resend."""
    found = node(built, "aborts.js", timeout=60)
    assert found["stream"]["tries"] == 2 and found["stream"]["status"] == 200, found
    assert found["stream"]["outcome"] == "aborted", found
    assert found["busy"] == {"tries": 1, "outcome": "aborted", "ms": found["busy"]["ms"]}, found
    assert found["busy"]["ms"] < 2000, found


def test_an_answer_whose_body_stalls_is_taken_as_unanswered_and_sent_again(built: Path) -> None:
    """An answer's headers come, then its JSON body stops (an instance that hung): the try
    counts as unanswered within the client's 30 s and is sent again with its key, rather than
    waiting for the body until fetch's own 300 s run out and failing in openapi-fetch's
    parsing, past every retry."""
    found = node(built, "stalls.js", timeout=120)
    assert found == {"tries": 2, "keys": 1, "outcome": "answered", "game_id": "stalled0001"}


@pytest.fixture(scope="module")
def played(stack: Stack, built: Path) -> dict[str, Any]:
    return node(built, "play.js", stack.url, str(SPEC))


def test_the_typescript_client_plays_a_whole_game(stack: Stack, played: dict[str, Any]) -> None:
    game = f"{stack.url}/api/v1/games/{played['game_id']}"
    score = requests.get(game + "/score", timeout=10).json()
    assert score["status"] == "game_over" and score["winners"] == played["winners"]
    assert score["version"] == played["version"]
    history = requests.get(game + "/history", timeout=10).json()
    by_seat: dict[tuple[str, int | None], int] = {}
    for entry in history["entries"]:
        key = (entry["by"], entry["seat"])
        by_seat[key] = by_seat.get(key, 0) + 1
    assert by_seat[("player", 0)] == played["moves"] > 0, by_seat
    assert by_seat[("bot", 1)] > 0 and by_seat[("bot", 2)] > 0, by_seat
    assert len([e for e in history["entries"] if e["action"]["action"] == "deal"]) == 2


#: Requests a token may make on a game each minute on the limited stack: fewer than the example's
#: seat makes in its game, so it meets 429s and must wait them out.
TOKEN_LIMIT = 8


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    ensure_nginx()
    env = {"RATE_LIMIT_PER_MINUTE": str(TOKEN_LIMIT)}
    with build_stack(tmp_path_factory.mktemp("limited"), env) as built:
        yield built


def test_the_typescript_client_waits_out_a_rate_limit(limited: Stack, built: Path) -> None:
    played = node(built, "play.js", limited.url, str(SPEC))
    # A 429 was met and waited out (waited), and the game went on to its end after it: how
    # many moves that took depends on the unseeded deal, and reads count against the limit too.
    assert played["waited"] > 0
    score = requests.get(f"{limited.url}/api/v1/games/{played['game_id']}/score", timeout=10)
    assert score.json()["status"] == "game_over"
    assert score.json()["version"] == played["version"]


def test_an_eventsource_on_a_finished_game_stops_after_one_204(
    stack: Stack, built: Path, played: dict[str, Any]
) -> None:
    game_id, final = played["game_id"], played["version"]
    watched = node(built, "stops.js", stack.url, game_id, str(final))
    assert watched == {
        "requests": 1, "readyState": CLOSED, "errors": 1, "entries": 0, "statuses": [204]
    }  # fmt: skip
    behind = node(built, "stops.js", stack.url, game_id, str(final - 3))
    # The entries it lacked, then the stream ends; its reconnection gets the 204 and stops.
    assert behind == {
        "requests": 2, "readyState": CLOSED, "errors": 2, "entries": 3, "statuses": [204]
    }  # fmt: skip


def test_an_eventsource_past_the_stored_log_stops_at_the_409_and_says_its_status(
    stack: Stack, built: Path, played: dict[str, Any]
) -> None:
    """A reader resuming past the game's stored log (Redis lost what it was sent) is refused
    with 409 after_ahead_of_log: the EventSource stops at once, and the status it reports is
    what play.ts reloads the game view on."""
    ahead = node(built, "stops.js", stack.url, played["game_id"], str(played["version"] + 3))
    assert ahead == {
        "requests": 1, "readyState": CLOSED, "errors": 1, "entries": 0, "statuses": [409]
    }  # fmt: skip


def test_the_typescript_client_resends_a_move_whose_answer_was_lost(
    stack: Stack, built: Path
) -> None:
    """The connection drops after a move reached the server (its answer lost): the client
    sends it again with the same Idempotency-Key, which it made itself (the example's moves
    carry none: a third party's calls through `api()` are as safe), and gets the first
    answer. Each move is applied once and counted once: a resend without the key would meet
    412 (its If-Match is stale by then) and the client would take its own move for someone
    else's."""

    def every_third_move(method: str, path: str, n: int) -> bool:
        return method == "POST" and path.endswith("/moves") and n % 3 == 1

    with lossy_proxy(stack.url, every_third_move) as (url, seen):
        played = node(built, "play.js", url, str(SPEC))
    assert seen.lost, "no answer was lost"
    assert played["resent"] >= len(seen.lost)
    for method, path, key in seen.lost:
        assert key, "a move without an Idempotency-Key"
        assert seen.sent.count((method, path, key)) >= 2, "the lost move was not sent again"
    game = f"{stack.url}/api/v1/games/{played['game_id']}"
    assert requests.get(game + "/score", timeout=10).json()["status"] == "game_over"
    history = requests.get(game + "/history", timeout=10).json()
    ours = [e for e in history["entries"] if (e["by"], e["seat"]) == ("player", 0)]
    assert len(ours) == played["moves"]


#: How long the test holds the address's only stream slot while the example wants its own.
HOLD_SECONDS = 6.0


@pytest.fixture(scope="module")
def one_stream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A stack where a client address may hold one open stream (the test and the example share
    127.0.0.1)."""
    ensure_nginx()
    with build_stack(tmp_path_factory.mktemp("one-stream"), {"STREAMS_PER_ADDRESS": "1"}) as s:
        yield s


def test_a_refused_stream_is_opened_again_after_its_retry_after(
    one_stream: Stack, built: Path
) -> None:
    """The example's stream meets 429 (the address's streams are all open) and waits as its
    Retry-After says (10 s) before asking again, rather than every half second, each time
    with a new ticket."""
    game = requests.post(one_stream.url + "/api/v1/games", json={"players": ["a", "b"]}).json()
    held = requests.get(
        f"{one_stream.url}/api/v1/games/{game['game_id']}/events",
        headers={"Accept": "text/event-stream"},
        stream=True,
        timeout=30,
    )
    assert held.status_code == 200
    threading.Timer(HOLD_SECONDS, held.close).start()
    played = node(built, "play.js", one_stream.url, str(SPEC))
    lines = [
        json.loads(line)
        for line in one_stream.nginx.access_log.read_text().splitlines()
        if line.startswith("{")
    ]
    ours = f"/api/v1/games/{played['game_id']}"
    refused = [x for x in lines if x["uri"] == ours + "/events" and x["status"] == 429]
    tickets = [x for x in lines if x["uri"] == ours + "/stream-tickets"]
    assert 1 <= len(refused) <= 2, f"{len(refused)} refused streams in {HOLD_SECONDS} s"
    assert len(tickets) <= len(refused) + 3, f"{len(tickets)} tickets"
    score = requests.get(one_stream.url + ours + "/score", timeout=10).json()
    assert score["status"] == "game_over"


def test_a_refusal_without_a_problem_body_reaches_the_caller_as_a_problem(
    stack: Stack, built: Path
) -> None:
    """A proxy in front of the service answers 502 with its own HTML page: openapi-fetch would
    give the caller that page as a string where its type says a problem, so `error.code` would
    be undefined. The caller gets a problem with the status's code and the page as `detail`."""
    with faulty_proxy(stack.url) as (url, faults):
        faults.plan = ["502html"] * 5  # every try: the last page is the answer
        found = node(built, "refusal.js", url)
        assert faults.forwarded == 0
    assert found["status"] == found["problem_status"] == 502, found
    assert found["code"] == "unavailable", found
    assert "502 Bad Gateway" in found["detail"], found
    assert found["waited"] == 4, found


def test_a_proxys_502_and_504_are_sent_again_with_the_calls_key(stack: Stack, built: Path) -> None:
    """A third party's proxy in front of the service answers 502, then 504, with its own pages
    (the project's nginx would have made them 503 problems): the change may have reached the
    service or not, and its Idempotency-Key makes sending it again safe, so the client does,
    with the same key, and the caller gets the game, made once."""
    with faulty_proxy(stack.url) as (url, faults):
        faults.plan = ["502html", "504html"]
        found = node(built, "refusal.js", url)
    assert (found["status"], found["waited"], found["resent"]) == (201, 2, 0), found
    assert faults.forwarded == 1
    assert len(faults.seen_keys) == 3 and len(set(faults.seen_keys)) == 1, faults.seen_keys
    assert faults.seen_keys[0], "a change without an Idempotency-Key"
    assert requests.get(f"{stack.url}/api/v1/games/{found['game_id']}", timeout=10).ok


def test_a_successful_answer_that_is_not_json_throws_the_clients_own_error(
    stack: Stack, built: Path
) -> None:
    """Something between the client and the service (a captive portal) answers 200 with its
    own page: the call throws the client's UnexpectedAnswer with the page's start, not the
    bare SyntaxError of openapi-fetch's parsing."""
    with faulty_proxy(stack.url) as (url, faults):
        faults.plan = ["200html"]
        found = node(built, "refusal.js", url)
        assert faults.forwarded == 0
    assert found["thrown"] == "UnexpectedAnswer", found
    assert "Sign in to the network" in found["message"], found


def test_a_service_refusal_reaches_the_caller_as_it_came(stack: Stack, built: Path) -> None:
    """A problem body passes as it came (here the proxy's 503, every try: the last is the
    answer), and every try of the call carried the one key the client made for it."""
    with faulty_proxy(stack.url) as (url, faults):
        faults.plan = ["503"] * 5  # every try refused: the last refusal is the answer
        found = node(built, "refusal.js", url)
    assert found["status"] == found["problem_status"] == 503, found
    assert (found["code"], found["detail"]) == ("unavailable", "injected by the test proxy")
    assert found["waited"] == 4 and len(faults.seen_keys) == 5, found
    assert len(set(faults.seen_keys)) == 1 and faults.seen_keys[0], "one key for every try"


def test_a_retry_after_past_the_clients_bound_is_answered_at_once(
    stack: Stack, built: Path
) -> None:
    """A 429 asking for an hour: sent again after the client's longest wait (a minute), the
    request would only be refused again, so the refusal is the call's answer at once."""
    with faulty_proxy(stack.url) as (url, faults):
        faults.retry_after = "3600"
        faults.plan = ["429"]
        found = node(built, "refusal.js", url, timeout=50)
    assert (found["status"], found["code"], found["waited"]) == (429, "rate_limited", 0), found
    assert len(faults.seen_keys) == 1, "asked again before its Retry-After"


@pytest.fixture(scope="module")
def hooked() -> Iterator[str]:
    """A service that takes webhooks to 127.0.0.1:9 (nothing listens there, and nothing is
    sent: the tests' players have no game)."""
    env = {"WEBHOOK_ALLOW_HOSTS": "127.0.0.1:9", "LOG_LEVEL": "warning"}
    with RedisServer() as redis, start_gunicorn(redis.url, env=env) as url:
        yield url


def test_a_webhook_removal_whose_answer_was_lost_is_done_and_carries_no_key(
    hooked: str, built: Path
) -> None:
    """The API takes no Idempotency-Key on a webhook's DELETE, and keeps no answer of it: the
    client sends none, and sends the removal again because its method is idempotent. The proxy
    loses the answer of a removal the service made; the repeat meets 404 webhook_not_found,
    which is that removal done: the caller gets 204, not the 404. Removed again, after a 429
    (which applied nothing), the 404 is the call's own answer."""
    player = requests.post(hooked + "/api/v1/players", json={"name": "ann"}, timeout=10).json()
    pid, auth = player["player_id"], {"Authorization": f"Bearer {player['player_token']}"}
    hooks = f"{hooked}/api/v1/players/{pid}/webhooks"
    made = requests.post(hooks, json={"url": "http://127.0.0.1:9/turns"}, headers=auth, timeout=10)
    assert made.status_code == 201, made.text
    with faulty_proxy(hooked) as (url, faults):
        faults.plan = ["drop"]
        found = node(
            built, "removal.js", url, pid, player["player_token"], made.json()["webhook_id"]
        )
    assert found == {"status": 204, "code": None, "waited": 0, "resent": 1}, found
    assert faults.seen_keys == [None, None] and faults.forwarded == 2
    assert requests.get(hooks, headers=auth, timeout=10).json() == {"webhooks": []}
    with faulty_proxy(hooked) as (url, faults):
        faults.plan = ["429"]  # refused, so it removed nothing: the 404 after it is the answer
        again = node(
            built, "removal.js", url, pid, player["player_token"], made.json()["webhook_id"]
        )
    assert (again["status"], again["code"], again["waited"]) == (404, "webhook_not_found", 1)
