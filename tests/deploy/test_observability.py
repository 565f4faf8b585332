"""Observability on a real gunicorn with 2 workers: metrics summed over workers, request ids
echoed, one JSON log line per request, proxy headers trusted only when configured."""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from devstack.gunicorn import Gunicorn
from devstack.redis_server import RedisServer
from tests.metrics import metric_total

N = 60


@pytest.fixture(scope="module")
def instance(
    redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Gunicorn]:
    log = tmp_path_factory.mktemp("obs") / "app.log"
    with Gunicorn.instance(redis_server.url, log, workers=2, env={"TRUSTED_PROXIES": "1"}) as inst:
        yield inst


def test_metrics_count_requests_of_both_workers(instance: Gunicorn) -> None:
    marker = uuid.uuid4().hex[:8]
    path = f"/api/v1/games/nosuchgame{marker}"
    sent = 0
    served: list[dict[str, object]] = []
    # Concurrent batches until both sync workers have taken some (the kernel picks who accepts).
    with ThreadPoolExecutor(16) as pool:
        while sent < 3000:
            statuses = set(
                pool.map(lambda _: requests.get(instance.url + path).status_code, range(N))
            )
            sent += N
            assert statuses == {404}
            served = [
                e for e in instance.request_log() if e.get("game_id") == f"nosuchgame{marker}"
            ]
            if len({e["pid"] for e in served}) == 2:
                break
    assert len(served) == sent, "one log line per request"
    assert len({e["pid"] for e in served}) == 2, "both workers served"
    # Whichever worker answers the scrape reports the sum over both.
    for _ in range(4):
        text = requests.get(instance.url + "/metrics").text
        count = metric_total(
            text,
            "http_requests_total",
            method="GET",
            endpoint="/api/v1/games/<game_id>",
            status="404",
        )
        assert count == sent
        assert "http_request_duration_seconds_bucket" in text


def test_request_id_echoed_and_logged(instance: Gunicorn) -> None:
    rid = f"test-{uuid.uuid4().hex}"
    response = requests.get(instance.url + "/healthz", headers={"X-Request-ID": rid})
    assert response.headers["X-Request-ID"] == rid
    (line,) = [entry for entry in instance.request_log() if entry["request_id"] == rid]
    assert line["method"] == "GET"
    assert line["path"] == "/healthz"
    assert line["status"] == 200
    assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
    # A request without an id, or with an unsafe one, gets a fresh id.
    made = requests.get(instance.url + "/healthz").headers["X-Request-ID"]
    assert len(made) == 32
    unsafe = requests.get(instance.url + "/healthz", headers={"X-Request-ID": 'x" y'})
    assert unsafe.headers["X-Request-ID"] not in ('x" y', made)


def test_game_id_logged_for_create_and_game_routes(instance: Gunicorn) -> None:
    created = requests.post(
        instance.url + "/api/v1/games", json={"players": ["ann", "bo"], "seed": 1}
    )
    assert created.status_code == 201
    game_id = created.json()["game_id"]
    requests.get(f"{instance.url}/api/v1/games/{game_id}")
    lines = [entry for entry in instance.request_log() if entry["game_id"] == game_id]
    assert [(e["method"], e["path"], e["status"]) for e in lines] == [
        ("POST", "/api/v1/games", 201),
        ("GET", "/api/v1/games/<game_id>", 200),
    ]


def test_a_new_players_location_is_logged_as_no_game(instance: Gunicorn) -> None:
    """A player's creation names the player in Location, not a game: its line has no
    game_id."""
    made = requests.post(instance.url + "/api/v1/players", json={"name": "ann"}, timeout=10)
    assert made.status_code == 201 and made.headers["Location"]
    player_id = made.json()["player_id"]
    lines = [e for e in instance.request_log() if e["path"] == "/api/v1/players"]
    assert lines and all(e["game_id"] is None for e in lines), lines
    assert all(e["game_id"] != player_id for e in instance.request_log())


def test_moves_and_cas_conflicts_counted(instance: Gunicorn) -> None:
    """12 identical plays race without If-Match: one applies; each loser that lost the
    compare-and-set (409 version_conflict, as opposed to the engine refusing on the new state)
    is one CAS conflict."""

    def metrics() -> tuple[float, float]:
        text = requests.get(instance.url + "/metrics", timeout=10).text
        return (
            metric_total(text, "game_moves_applied_total"),
            metric_total(text, "game_cas_conflicts_total"),
        )

    created = requests.post(
        instance.url + "/api/v1/games", json={"players": ["ann", "bo"], "seed": 5}, timeout=10
    ).json()
    gid = created["game_id"]
    base = f"{instance.url}/api/v1/games/{gid}"
    moves_before, conflicts_before = metrics()
    dealt = requests.post(
        base + "/deal", headers={"Authorization": f"Bearer {created['host_token']}"}, timeout=10
    ).json()
    auth = {"Authorization": f"Bearer {created['seats'][dealt['turn']]['token']}"}
    move = requests.get(base + "/legal-moves", headers=auth, timeout=10).json()["moves"][0]
    barrier = threading.Barrier(12)

    def fire(_: int) -> tuple[int, str | None]:
        with requests.Session() as s:
            barrier.wait()
            r = s.post(base + "/moves", json=move, headers=auth, timeout=20)
        return r.status_code, (r.json().get("code") if r.status_code != 200 else None)

    with ThreadPoolExecutor(12) as pool:
        results = list(pool.map(fire, range(12)))
    assert [s for s, _ in results].count(200) == 1, results
    lost_cas = sum(1 for _, code in results if code == "version_conflict")
    moves_after, conflicts_after = metrics()
    assert moves_after - moves_before == 2  # the deal and the one play
    assert conflicts_after - conflicts_before == lost_cas


def test_forwarded_headers_trusted_through_proxyfix(instance: Gunicorn) -> None:
    rid = f"fwd-{uuid.uuid4().hex}"
    requests.get(
        instance.url + "/healthz",
        headers={"X-Request-ID": rid, "X-Forwarded-For": "203.0.113.7"},
    )
    (line,) = [entry for entry in instance.request_log() if entry["request_id"] == rid]
    assert line["remote_addr"] == "203.0.113.7"


def test_forwarded_headers_ignored_by_default(redis_server: RedisServer, tmp_path: Path) -> None:
    from service.api.app import create_app

    app = create_app({"REDIS_URL": redis_server.url})
    assert app.config.get("TRUSTED_PROXIES") is None
    client = app.test_client()
    seen: list[str | None] = []

    @app.get("/whoami-test")
    def whoami() -> dict[str, str | None]:
        from flask import request

        seen.append(request.remote_addr)
        return {"remote": request.remote_addr}

    client.get("/whoami-test", headers={"X-Forwarded-For": "203.0.113.7"})
    assert seen == ["127.0.0.1"]


def test_request_refused_by_another_hook_is_still_timed_and_logged(
    redis_server: RedisServer,
) -> None:
    import io
    import logging

    import orjson

    from service.api import observability
    from service.api.app import create_app

    app = create_app({"REDIS_URL": redis_server.url})
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    observability.access_log.addHandler(handler)
    try:
        response = app.test_client().post(
            "/api/v1/games",
            data="not json",
            headers={"Content-Type": "text/plain", "X-Request-ID": "refused-1"},
        )
    finally:
        observability.access_log.removeHandler(handler)
    assert response.status_code == 415
    assert response.headers["X-Request-ID"] == "refused-1"
    (line,) = [orjson.loads(x) for x in buffer.getvalue().splitlines() if "refused-1" in x]
    assert line["status"] == 415 and line["duration_ms"] > 0


def test_made_up_methods_and_paths_do_not_grow_the_metrics(instance: Gunicorn) -> None:
    """A client picks the method and the path: neither may become a label value of its own."""
    scrape = lambda: requests.get(instance.url + "/metrics").text  # noqa: E731
    # Warm up the series these requests share (other/405, GET/404 on each template) first.
    for method, path in (("XWARMUP", "/healthz"), ("GET", "/nowhere"), ("DELETE", "/healthz")):
        requests.request(method, instance.url + path)
    requests.get(instance.url + "/api/v1/games/nosuchgame0")
    scrape()  # a scrape counts itself after answering: the second one shows its own series
    before = scrape()

    def flood(i: int) -> int:
        with requests.Session() as session:
            statuses = {
                session.request(f"X{i:03d}{j:03d}", instance.url + "/healthz").status_code
                for j in range(125)
            }
            statuses |= {session.get(f"{instance.url}/x{i}/{j}").status_code for j in range(25)}
            statuses |= {
                session.get(f"{instance.url}/api/v1/games/nosuchgame{i}{j}").status_code
                for j in range(25)
            }
        assert statuses == {404, 405}
        return 175

    with ThreadPoolExecutor(8) as pool:
        assert sum(pool.map(flood, range(8))) == 1400
    after = scrape()
    assert "X000001" not in after and "nosuchgame1" not in after and "/x1/" not in after
    assert metric_total(after, "http_requests_total", method="other", status="405") >= 1000
    # Only the counters' values changed: no new series (before: one line per series too).
    assert len(after.splitlines()) == len(before.splitlines())
    assert len(after) < len(before) + 2048


def test_the_services_own_log_lines_are_json_with_the_request_id(tmp_path: Path) -> None:
    """Through a Redis outage the app logs why each request failed: one JSON line like the
    request lines (time, level, logger, the request's id), no traceback; gunicorn's own lines
    aside, nothing in the log is free text a collector cannot parse."""
    log_path = tmp_path / "app.log"
    redis = RedisServer().start()
    try:
        with Gunicorn.instance(redis.url, log_path, workers=1) as inst:
            created = requests.post(inst.url + "/api/v1/games", json={"players": ["a", "b"]})
            game = f"{inst.url}/api/v1/games/{created.json()['game_id']}"
            redis.stop()
            rid = f"outage-{uuid.uuid4().hex}"
            r = requests.get(game, headers={"X-Request-ID": rid}, timeout=10)
            assert r.status_code == 503 and r.json()["code"] == "storage_unavailable"
            assert requests.get(inst.url + "/readyz", timeout=10).status_code == 503
    finally:
        redis.stop()
    lines = log_path.read_text().splitlines()
    ours = [line for line in lines if not re.match(r"\[[^]]+\] \[\d+\] \[[A-Z]+\] ", line)]
    parsed = []
    for line in ours:
        try:
            parsed.append(json.loads(line))
        except ValueError:
            raise AssertionError(f"not a JSON line: {line!r}") from None
    records = [p for p in parsed if p.get("event") == "log"]
    (failed,) = [p for p in records if p.get("request_id") == rid]
    assert failed["level"] == "error" and failed["logger"].startswith("service.")
    assert "redis" in failed["message"] and "exception" not in failed
    assert {"ts", "pid"} <= set(failed)
    assert any(p["level"] == "warning" and "not ready" in p["message"] for p in records)
