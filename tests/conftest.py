"""Shared fixtures: real servers only (a private redis-server per test session); every answer
the suite receives is checked against the committed OpenAPI document (tests/spec_check.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Generator, Iterator
from typing import Any

import pytest
import redis
import requests
from flask.testing import FlaskClient

from devstack.redis_server import RedisServer
from tests.redis_clients import flushed_client
from tests.spec_check import COLLECTED, NDJSON, SSE, StreamCheck, media_of, watch_chunks

# The suite's servers end a finished game's streams with its last entry (REMATCH_SECONDS=0);
# the tests of rematches set the wait themselves. Every server a test starts inherits this.
os.environ.setdefault("REMATCH_SECONDS", "0")


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A real redis-server on a free loopback port, for the whole session (per xdist worker)."""
    with RedisServer() as server:
        yield server


@pytest.fixture()
def redis_client(redis_server: RedisServer) -> Iterator[redis.Redis]:
    with flushed_client(redis_server) as client:
        yield client


@pytest.fixture(scope="session")
def live_server(redis_server: RedisServer) -> Iterator[str]:
    """Base URL of a real gunicorn (2 workers) serving the API on the session's redis-server."""
    from devstack.gunicorn import start_gunicorn

    with start_gunicorn(redis_server.url, workers=2) as base_url:
        yield base_url


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test marked ``no_cover`` runs without a coverage tracer. pytest-cov pauses its own
    tracer for it, but in an xdist worker another one is left running (sys.gettrace() shows it),
    so the test's thread is untraced here, innermost, and the tracer put back afterwards."""
    if item.get_closest_marker("no_cover") is None:
        yield
        return
    tracer = sys.gettrace()
    sys.settrace(None)
    try:
        yield
    finally:
        sys.settrace(tracer)


def _check_requests_answer(response: requests.Response, streamed: bool) -> None:
    request = response.request
    method, url = request.method or "GET", request.url or ""
    checker = COLLECTED.get_checker()
    content_type = response.headers.get("Content-Type")
    COLLECTED.add(checker.check_headers(method, url, response.status_code, response.headers))

    def whole(body: bytes) -> None:
        COLLECTED.add(checker.check_body(method, url, response.status_code, content_type, body))

    if not streamed:
        whole(response.content)
        return
    found = checker.media(method, url, response.status_code, content_type)
    if isinstance(found, list):
        COLLECTED.add(found)
        return
    stream = None
    if found and media_of(content_type) in (SSE, NDJSON):
        where = f"{method} {url} {response.status_code}"
        stream = StreamCheck(checker, found, media_of(content_type), where)
        COLLECTED.add(stream.problems)
    response.iter_content = watch_chunks(response.iter_content, stream, whole)  # type: ignore[method-assign]


_send = requests.Session.send
_open = FlaskClient.open


def _checked_send(self: requests.Session, request: requests.PreparedRequest, **kwargs: Any) -> Any:
    response = _send(self, request, **kwargs)
    _check_requests_answer(response, bool(kwargs.get("stream")))
    return response


def _checked_open(self: FlaskClient, *args: Any, **kwargs: Any) -> Any:
    response = _open(self, *args, **kwargs)
    if media_of(response.content_type) not in (SSE, NDJSON):  # a live stream would never end
        request = response.request
        COLLECTED.add(
            COLLECTED.get_checker().check_body(
                request.method,
                request.path,
                response.status_code,
                response.content_type,
                response.get_data(),
            )
        )
    return response


def _fail_on_problems(item: pytest.Item) -> Generator[None, object, object]:
    COLLECTED.take()
    result = yield
    problems = COLLECTED.take()
    if problems and item.get_closest_marker(STAND_IN) is None:
        listed = "\n".join(sorted(set(problems))[:20])
        raise AssertionError(f"answers that do not fit openapi/openapi.json:\n{listed}")
    return result


#: A test whose answers come from a stand-in server (one that imitates a failure of the
#: service's, not the service): they are not held to the service's document.
STAND_IN = "stand_in_server"


class SpecCheck:
    """Fails the test (its setup, call or teardown) that received an answer the OpenAPI
    document does not describe: an undeclared field, a value outside its enum, a stream entry
    that fits no schema."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, object, object]:
        return (yield from _fail_on_problems(item))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object, object]:
        return (yield from _fail_on_problems(item))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, object, object]:
        return (yield from _fail_on_problems(item))


def pytest_configure(config: pytest.Config) -> None:
    requests.Session.send = _checked_send  # type: ignore[method-assign]
    FlaskClient.open = _checked_open  # type: ignore[method-assign]
    config.pluginmanager.register(SpecCheck(), "spec-check")
