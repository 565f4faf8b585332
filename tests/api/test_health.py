"""Probes and the error envelope through a real gunicorn on a real redis-server."""

from __future__ import annotations

import logging

import pytest
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer, free_port
from service.api.app import create_app


def test_healthz_and_readyz(live_server: str) -> None:
    assert requests.get(live_server + "/healthz", timeout=5).json() == {"status": "ok"}
    r = requests.get(live_server + "/readyz", timeout=5)
    assert r.status_code == 200
    assert r.json() == {"status": "ready"}


def test_unknown_route_is_a_problem(live_server: str) -> None:
    r = requests.get(live_server + "/nope", timeout=5)
    assert r.status_code == 404
    assert r.headers["Content-Type"] == "application/problem+json"
    body = r.json()
    assert body["code"] == "not_found"
    assert body["status"] == 404
    assert {"type", "title", "detail"} <= set(body)


def test_readyz_503_when_redis_is_down() -> None:
    server = RedisServer().start()
    with start_gunicorn(server.url, workers=1) as base:
        assert requests.get(base + "/readyz", timeout=5).status_code == 200
        server.stop()
        r = requests.get(base + "/readyz", timeout=10)
        assert r.status_code == 503
        assert r.headers["Content-Type"] == "application/problem+json"
        assert r.json()["code"] == "redis_unavailable"
        assert "unavailable" in r.json()["detail"]
        assert requests.get(base + "/healthz", timeout=5).status_code == 200


def test_readyz_names_no_address_and_logs_the_detail(caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()  # nothing listens there
    client = create_app({"REDIS_URL": f"redis://127.0.0.1:{port}/0"}).test_client()
    with caplog.at_level(logging.WARNING):
        r = client.get("/readyz")
    assert r.status_code == 503 and r.json["code"] == "redis_unavailable"
    assert r.json["detail"] == "Storage is unavailable."
    assert str(port) not in r.text and "127.0.0.1" not in r.text
    assert str(port) in caplog.text  # the operator still learns what failed
