"""Bot names -> constructors. Every bot takes one ``seed`` so tournaments can derive it."""

from __future__ import annotations

import importlib
from collections.abc import Callable

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
