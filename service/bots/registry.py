"""Bot names -> constructors. Every bot takes one ``seed`` so tournaments can derive it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from service.bots.base import Bot
from service.bots.hard import HardBot
from service.bots.planner import PlannerBot
from service.bots.simple import GreedyBot, RandomBot

BOTS: dict[str, Callable[[int | None], Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "planner": PlannerBot,
    "hard": HardBot,
}


@dataclass(frozen=True)
class Level:
    """A bot level as ``GET /bots`` shows it. ``strength``: the win rate in 4-player
    ``standard`` games against three ``random`` bots over ``strength_games`` games
    (``make bench-bots``), and ``strength_interval`` its 95% Wilson interval; None until
    measured."""

    name: str
    description: str
    strength: float | None = None
    strength_games: int = 0
    strength_interval: tuple[float, float] | None = None


# Measured with `make bench-bots`, one of the level against three `random` (docs/bots.md has
# the whole table).
LEVELS: tuple[Level, ...] = (
    Level("random", "Plays any legal move at random: a beginner.", 0.265, 998, (0.238, 0.293)),
    Level(
        "greedy",
        "Plays its heaviest tile first, to cut the points left in its hand.",
        0.963,
        1000,
        (0.949, 0.973),
    ),
    Level(
        "planner",
        "Plans its hand into a long chain for its own train and plays doubles it can cover.",
        1.0,
        1000,
        (0.996, 1.0),
    ),
    Level(
        "hard",
        "Samples the hands it cannot see and plays each candidate out to the round's end "
        "(determinized Monte Carlo); the strongest and the slowest.",
        1.0,
        68,
        (0.947, 1.0),
    ),
)


#: The most seats of a level one table may give it. A ``hard`` decision takes up to half a
#: second of CPU at a 14-seat table: four of them bound a lap of one table's bot work, so the
#: background worker's other tables get their turn.
MAX_SEATS: dict[str, int] = {"hard": 4}


def too_many(levels: list[str]) -> str | None:
    """The level a table's bot seats hold more of than :data:`MAX_SEATS` allows, if any."""
    for level, cap in MAX_SEATS.items():
        if levels.count(level) > cap:
            return level
    return None


def is_known(name: str) -> bool:
    return name in BOTS or ":" in name


def make_bot(name: str, seed: int | None = None) -> Bot:
    """A registered bot, or ``package.module:Factory`` (any callable taking the seed).

    The import form lets a tournament include a bot that lives outside this package.
    """
    if name in BOTS:
        return BOTS[name](seed)
    if ":" in name:
        module_name, _, attr = name.partition(":")
        factory = getattr(importlib.import_module(module_name), attr)
        bot: Bot = factory(seed)
        return bot
    raise ValueError(f"unknown bot {name!r}; known: {', '.join(sorted(BOTS))} or module:Factory")
