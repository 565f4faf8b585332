"""The fuzz of tests/api/test_fuzz.py through the nginx of deploy/ in front of the instances:
for a handful of operations nginx may answer on its own (oversized headers and bodies, ids it
will not pass on), and each of those answers must be a problem body of the service's vocabulary
too. Its rate limits are not reached: the tests come from loopback, which nginx exempts
(tests/e2e/test_limits.py meets them from another address)."""

from __future__ import annotations

import pytest
import requests
from hypothesis import given

from devstack.stack import Stack
from tests.api.fuzz_inputs import OPTIONAL_HEADERS, Operation, Request, operations, requests_for
from tests.api.test_fuzz import (
    Table,
    check_answer,
    fuzz_settings,
    new_player,
    new_table,
    send,
)

pytestmark = pytest.mark.e2e

NAMES = {
    "POST /api/v1/games",
    "GET /api/v1/games/{game_id}",
    "POST /api/v1/games/{game_id}/moves",
    "GET /api/v1/games/{game_id}/events",
    "POST /api/v1/players/{player_id}/webhooks",
}
OPERATIONS = [op for op in operations() if op.name in NAMES]
# Above nginx's 4 KiB header line (deploy/nginx.conf), below gunicorn's 8190 bytes.
LONG_HEADER = "x" * 5000
# Above nginx's 256 KiB body; above the app's MAX_BODY_BYTES (64 KiB) too, whose 413 is a
# body_too_large problem as well: nginx's is told from it by its detail.
LARGE_BODY = b'{"action": "draw", "pad": "' + b"x" * 300_000 + b'"}'
NGINX_413_DETAIL = "The request body is too large."


@pytest.fixture(scope="module")
def player(stack: Stack) -> dict[str, str]:
    return new_player(stack.url)


@pytest.fixture(scope="module")
def table(stack: Stack, player: dict[str, str]) -> Table:
    return new_table(requests.Session(), stack.url, player)


@pytest.mark.parametrize("op", OPERATIONS, ids=[op.name for op in OPERATIONS])
def test_bad_input_through_nginx_is_a_problem(
    op: Operation, table: Table, player: dict[str, str]
) -> None:
    session = requests.Session()

    @fuzz_settings(10)
    @given(request=requests_for(op))
    def fuzz(request: Request) -> None:
        check_answer(op, request, send(session, request, table, player))

    fuzz()


@pytest.mark.parametrize("header", [*OPTIONAL_HEADERS, "Authorization"])
def test_a_header_line_over_nginx_limit_is_a_problem(
    header: str, table: Table, player: dict[str, str]
) -> None:
    request = Request("POST", "/api/v1/games/{game_id}/moves", auth="turn")
    request.path_ids = {"game_id": "{real}"}
    request.headers = {"Content-Type": "application/json"}
    if header == "Authorization":
        request.auth = "Bearer " + LONG_HEADER
    else:
        request.headers[header] = LONG_HEADER
    request.data = b'{"action": "draw"}'
    answer = send(requests.Session(), request, table, player)
    assert answer.status_code == 431, answer.text[:200]
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.json()["code"] == "headers_too_large"


def test_a_body_over_nginx_limit_is_a_problem(table: Table, player: dict[str, str]) -> None:
    request = Request("POST", "/api/v1/games/{game_id}/moves", auth="turn")
    request.path_ids = {"game_id": "{real}"}
    request.headers = {"Content-Type": "application/json"}
    request.data = LARGE_BODY
    answer = send(requests.Session(), request, table, player)
    assert answer.status_code == 413, answer.text[:200]
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.json()["code"] == "body_too_large"
    assert answer.json()["detail"] == NGINX_413_DETAIL  # nginx's answer, not the app's
