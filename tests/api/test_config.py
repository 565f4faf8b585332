"""Settings are read once, from defaults, the environment and create_app's config, into one
typed value in app.config; booleans mean the same everywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from devstack.gunicorn import ROOT, Gunicorn
from devstack.redis_server import RedisServer
from service.api.config import (
    DEFAULTS,
    SETTINGS_KEY,
    SettingError,
    check_redis_url,
    load_settings,
    parse_bool,
)


@pytest.mark.parametrize("word", ["1", "true", "TRUE", " yes ", "on", True, 1])
def test_true_words(word: object) -> None:
    assert parse_bool("X", word) is True


@pytest.mark.parametrize("word", ["0", "false", "No", "off", "", False, 0])
def test_false_words(word: object) -> None:
    assert parse_bool("X", word) is False


def test_an_unknown_word_is_refused_with_the_setting_named() -> None:
    with pytest.raises(ValueError, match="REQUEST_LOG must be true or false"):
        parse_bool("REQUEST_LOG", "maybe")


@pytest.mark.parametrize(
    "url", ["redis-cluster://:hunter2@h:6379/0", "redis://user:hunter2@h:port/0"]
)
def test_a_refused_redis_url_never_shows_its_password(url: str) -> None:
    """The refusal goes to the log: the URL is named with its password hidden."""
    with pytest.raises(SettingError, match="REDIS_URL") as refused:
        check_redis_url(url)
    assert "hunter2" not in str(refused.value) and "***@h" in str(refused.value)


def test_defaults_then_environment_then_config(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in DEFAULTS:
        monkeypatch.delenv(name, raising=False)
    assert load_settings().trusted_proxies == 0
    assert load_settings().access_log is True
    monkeypatch.setenv("TRUSTED_PROXIES", "2")
    monkeypatch.setenv("REQUEST_LOG", "off")
    monkeypatch.setenv("LOG_LEVEL", "INFO")
    settings = load_settings({"RATE_LIMIT_PER_MINUTE": 7})
    assert (settings.trusted_proxies, settings.request_log, settings.log_level) == (
        2,
        False,
        "info",
    )
    assert settings.rate_limit_per_minute == 7
    assert settings.access_log is False
    assert load_settings({"TRUSTED_PROXIES": 1, "REQUEST_LOG": "1"}).trusted_proxies == 1
    monkeypatch.setenv("LOG_LEVEL", "warning")
    assert load_settings({"REQUEST_LOG": True}).access_log is False


def test_negative_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="TRUSTED_PROXIES must be positive"):
        load_settings({"TRUSTED_PROXIES": -1})


def test_the_app_keeps_one_settings_value(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from service.api.app import create_app

    monkeypatch.setenv("TRUSTED_PROXIES", "1")
    app = create_app({"REDIS_URL": redis_server.url, "TESTING": True})
    settings = app.config[SETTINGS_KEY]
    assert settings.trusted_proxies == 1 and settings.redis_url == redis_server.url
    assert app.config["TESTING"] is True  # Flask's own settings pass through
    seen: list[str | None] = []

    @app.get("/whoami-test")
    def whoami() -> dict[str, str | None]:
        from flask import request

        seen.append(request.remote_addr)
        return {}

    app.test_client().get("/whoami-test", headers={"X-Forwarded-For": "203.0.113.7"})
    assert seen == ["203.0.113.7"]


#: Bad values an operator may set, and the words the refusal must say.
BAD_VALUES = [
    ({"RATE_LIMIT_PER_MINUTE": "ten"}, "RATE_LIMIT_PER_MINUTE must be a whole number"),
    ({"TRUSTED_PROXIES": "1.5"}, "TRUSTED_PROXIES must be a whole number"),
    ({"LOG_LEVEL": "verbose"}, "LOG_LEVEL must be one of"),
    ({"STORAGE_FULL_PERCENT": "150"}, "STORAGE_FULL_PERCENT must be at most 100"),
    ({"REDIS_URL": "localhost:6379"}, "REDIS_URL must start with"),
    # redis-py parses the URL in each worker as it boots: a traceback per worker, no setting named.
    ({"REDIS_URL": "redis://127.0.0.1:notaport/0"}, "REDIS_URL has a bad port"),
    ({"REDIS_URL": "redis://:pw@127.0.0.1:99999/0"}, "REDIS_URL has a bad port"),
    # Taken silently by redis-py as database 0.
    ({"REDIS_URL": "redis://127.0.0.1:6379/games"}, "REDIS_URL's database must be a whole number"),
    ({"GRACEFUL_TIMEOUT": "20s"}, "GRACEFUL_TIMEOUT must be a whole number"),
    ({"WEB_CONCURRENCY": "0"}, "WEB_CONCURRENCY must be positive"),
    # Read as each worker starts, a bad one would make every worker exit as it boots and the
    # master start another in its place, for as long as it runs: it is read in the master.
    ({"GUNICORN_NICE": "high", "WEB_CONCURRENCY": "1"}, "GUNICORN_NICE must be a whole number"),
    ({"GUNICORN_NICE": "-30", "WEB_CONCURRENCY": "1"}, "GUNICORN_NICE must be at least -20"),
]


@pytest.mark.parametrize(("env", "said"), BAD_VALUES, ids=[next(iter(e)) for e, _ in BAD_VALUES])
def test_gunicorn_refuses_a_bad_setting_at_start_saying_which(
    redis_server: RedisServer, tmp_path: Path, env: dict[str, str], said: str
) -> None:
    """The instance stops at once with one line naming the setting, rather than each worker
    dying on a traceback (``invalid literal for int()``), or a value taken silently (a
    LOG_LEVEL that turned the request log off, a percentage past 100)."""
    log = tmp_path / "gunicorn.log"
    server = Gunicorn(redis_server.url, env=env, log_path=log)
    with pytest.raises(RuntimeError, match="exited"):
        server.start(timeout=60)
    text = log.read_text()
    assert said in text, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
    assert "Booting worker" not in text, "refused before any worker started"


#: Refused URLs whose password (``hunter2``) the refusal echoed: unencoded ``/``, ``#`` or ``?``
#: (a generated base64 password has ``/``) end the host part early, so the parsed port or
#: database is a piece of the password; a URL without its scheme; a password in the query,
#: which redis-py takes as well as the one before ``@``.
LEAKY_URLS = [
    "redis://:hunter2/x@127.0.0.1:6379/0",
    "redis://:12/hunter2@127.0.0.1:6379/0",
    "redis://:hunter2#x@127.0.0.1:6379/0",
    "default:hunter2@127.0.0.1:6379",
    "redis://127.0.0.1:notaport/0?password=hunter2",
]


@pytest.mark.parametrize("url", LEAKY_URLS)
def test_gunicorn_refusing_a_redis_url_never_logs_its_password(
    redis_server: RedisServer, tmp_path: Path, url: str
) -> None:
    log = tmp_path / "gunicorn.log"
    server = Gunicorn(redis_server.url, env={"REDIS_URL": url}, log_path=log)
    with pytest.raises(RuntimeError, match="exited"):
        server.start(timeout=60)
    text = log.read_text()
    assert "REDIS_URL" in text, text[-3000:]
    assert "hunter2" not in text, text[-3000:]


def test_the_worker_refuses_a_bad_setting_at_start_saying_which(
    redis_server: RedisServer,
) -> None:
    env = {**os.environ, "REDIS_URL": redis_server.url, "RATE_LIMIT_PER_MINUTE": "ten"}
    done = subprocess.run(
        [sys.executable, "-m", "service.worker"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0
    assert "RATE_LIMIT_PER_MINUTE must be a whole number" in done.stderr, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
