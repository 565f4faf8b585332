"""Bot names -> constructors. Every bot takes one ``seed`` so tournaments can derive it."""

from __future__ import annotations

from collections.abc import Callable

from service.bots.base import Bot
from service.bots.planner import PlannerBot
from service.bots.simple import GreedyBot, RandomBot

BOTS: dict[str, Callable[[int | None], Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "planner": PlannerBot,
}


def make_bot(name: str, seed: int | None = None) -> Bot:
    try:
        factory = BOTS[name]
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; known: {', '.join(sorted(BOTS))}") from None
    return factory(seed)
