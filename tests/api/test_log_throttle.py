"""The log throttle's count of held-back lines reaches the log even when no identical line
follows: an outage that ends within a second must not leave its lines untold."""

from __future__ import annotations

import logging

import pytest

from service.api import log_throttle
from tests.eventually import eventually

PERIOD = 0.2


def test_the_lines_held_back_are_told_once_the_period_is_over(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(log_throttle, "_THROTTLE", log_throttle.Throttle(PERIOD))
    log = logging.getLogger("tests.throttle")
    with caplog.at_level(logging.ERROR, logger="tests.throttle"):
        for _ in range(5):
            log_throttle.throttled(log, logging.ERROR, "redis error: %s", "refused")
        # No sixth line comes: the four held back are told all the same.
        eventually(lambda: len(caplog.messages) == 2, 5, f"held back untold: {caplog.messages}")
        assert caplog.messages == [
            "redis error: refused",
            "redis error: refused (4 identical lines were suppressed)",
        ]
        # Identical lines after that one are throttled from it, not written at once.
        log_throttle.throttled(log, logging.ERROR, "redis error: %s", "refused")
        assert len(caplog.messages) == 2
        eventually(lambda: len(caplog.messages) == 3, 5, "the next held-back line untold")
        assert caplog.messages[-1] == "redis error: refused (1 identical lines were suppressed)"


def test_a_new_text_goes_out_at_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(log_throttle, "_THROTTLE", log_throttle.Throttle(PERIOD))
    log = logging.getLogger("tests.throttle")
    with caplog.at_level(logging.ERROR, logger="tests.throttle"):
        log_throttle.throttled(log, logging.ERROR, "redis error: %s", "refused")
        log_throttle.throttled(log, logging.ERROR, "redis error: %s", "timed out")
        assert caplog.messages == ["redis error: refused", "redis error: timed out"]
