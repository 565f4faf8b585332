"""A token sent as ``access_token`` (as a browser's EventSource must) reaches no log line.

One gunicorn instance with every log on (the app's request lines, gunicorn's error log and its
access log on stdout) serves reads of the log with tokens in the query, as JSON, SSE and NDJSON,
refused ones included; everything it printed is then searched for the tokens.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from tests.live.conftest import LIVE_ENV
from tests.live.helpers import NDJSON, SSE, TIMEOUT, Game, auth, create


@pytest.mark.parametrize("pool", ["api", "streams"])
def test_access_token_appears_in_no_log_output(
    redis_server: RedisServer, tmp_path: Path, pool: str
) -> None:
    """Both pools: nginx sends the streams to ``streams``, a bare instance serves them too."""
    output = tmp_path / "gunicorn.log"
    env = {**LIVE_ENV, "ACCESS_LOG": "-", "LOG_LEVEL": "info", "GUNICORN_POOL": pool}
    with start_gunicorn(redis_server.url, workers=1, env=env, output=output) as base:
        bots = [{"name": "cpu", "bot": "greedy"}]
        game = Game(create(base, players=["ann", *bots], auto_deal=True, options={"rounds": 1}))
        token = game.tokens[0]
        assert token is not None
        secrets = [token, game.host]
        url = f"{base}/api/v1/games/{game.id}/events"
        for secret in secrets:
            for accept in ("application/json", SSE, NDJSON):
                params = {"access_token": secret, "after": 0}
                with requests.get(
                    url, params=params, headers={"Accept": accept}, stream=True, timeout=TIMEOUT
                ) as r:
                    assert r.status_code == 200, r.text
                    assert next(r.iter_lines()), "the game goes on: read its first entry, hang up"
            refused = [
                {"access_token": secret, "after": -1},  # 422
                {"access_token": secret, "wait": "x"},  # 422
                {"access_token": secret + "x"},  # 401: not a token of the game
            ]
            for params in refused:
                r = requests.get(url, params=params, timeout=TIMEOUT)
                assert r.status_code in (401, 422), r.text
                assert secret not in r.text
            # Routes that do not take a query token still get it from careless clients.
            r = requests.get(
                f"{base}/api/v1/games/{game.id}?access_token={secret}", timeout=TIMEOUT
            )
            assert r.status_code == 200
            r = requests.get(
                f"{base}/api/v1/games/AAAAAAAAAAAA/events?access_token={secret}", timeout=TIMEOUT
            )
            assert r.status_code == 404
        r = requests.get(url, headers=auth(token), timeout=TIMEOUT)
        assert r.status_code == 200
    text = output.read_text()
    assert game.id in text, "the app's request lines are on"
    assert '"path": "/api/v1/games/' in text, "gunicorn's access log is on"
    assert "/events" in text
    for secret in secrets:
        assert secret not in text
        assert secret[:12] not in text, "not even a prefix"
