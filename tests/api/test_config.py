"""Settings are read once, from defaults, the environment and create_app's config, into one
typed value in app.config; booleans mean the same everywhere."""

from __future__ import annotations

import pytest

from devstack.redis_server import RedisServer
from service.api.config import DEFAULTS, SETTINGS_KEY, load_settings, parse_bool


@pytest.mark.parametrize("word", ["1", "true", "TRUE", " yes ", "on", True, 1])
def test_true_words(word: object) -> None:
    assert parse_bool("X", word) is True


@pytest.mark.parametrize("word", ["0", "false", "No", "off", "", False, 0])
def test_false_words(word: object) -> None:
    assert parse_bool("X", word) is False


def test_an_unknown_word_is_refused_with_the_setting_named() -> None:
    with pytest.raises(ValueError, match="REQUEST_LOG must be true or false"):
        parse_bool("REQUEST_LOG", "maybe")


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
