"""Tournaments between bots (``python -m service.tournament play ...``), in-process on the
engine or through the HTTP API, with per-bot statistics."""

from service.tournament.runner import (
    GameSpec,
    drive_http,
    game_specs,
    play_http,
    play_local,
    run_http,
    run_local,
)
from service.tournament.stats import BotStats, GameResult, aggregate, format_table, wilson

__all__ = [
    "BotStats",
    "GameResult",
    "GameSpec",
    "aggregate",
    "drive_http",
    "format_table",
    "game_specs",
    "play_http",
    "play_local",
    "run_http",
    "run_local",
    "wilson",
]
