"""Reference bots (``random``, ``greedy``, ``planner``) behind one interface. Strategies depend on
``service.rules`` and the standard library only; tournaments live in ``service.tournament``."""

from service.bots.base import Bot
from service.bots.planner import PlannerBot
from service.bots.registry import BOTS, make_bot
from service.bots.simple import GreedyBot, RandomBot

__all__ = ["BOTS", "Bot", "GreedyBot", "PlannerBot", "RandomBot", "make_bot"]
