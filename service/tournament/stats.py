"""Result statistics: per-bot aggregates with 95% Wilson score intervals."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval: well-behaved near 0 and 1 and for small n, unlike the normal one."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == n else min(1.0, centre + half)  # exact at the edges, no rounding
    return (lo, hi)


@dataclass
class GameResult:
    """One finished game: who sat where, and the score sheet."""

    index: int
    seed: int
    bots: list[str]  # bot name per seat
    rounds: list[list[int]]  # per seat, the score of each round
    totals: list[int]
    winners: list[int]
    moves: int
    digest: str  # hash of the full move sequence: equal digests = identical games
    seconds: float = 0.0
    move_log: list[tuple[int, dict[str, Any]]] | None = None


@dataclass
class BotStats:
    name: str
    seats: int = 0  # seat-games played (a bot in two seats of one game counts twice)
    wins: int = 0
    total_sum: int = 0
    round_sum: int = 0
    rounds: int = 0
    zero_rounds: int = 0
    games: set[int] = field(default_factory=set)

    @property
    def win_rate(self) -> float:
        return self.wins / self.seats if self.seats else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        return wilson(self.wins, self.seats)

    @property
    def mean_total(self) -> float:
        return self.total_sum / self.seats if self.seats else 0.0

    @property
    def mean_round(self) -> float:
        return self.round_sum / self.rounds if self.rounds else 0.0

    def to_json(self) -> dict[str, Any]:
        lo, hi = self.ci95
        return {
            "wins": self.wins,
            "games": self.seats,
            "seats_per_game": round(self.seats / len(self.games), 3) if self.games else 0,
            "win_rate": round(self.win_rate, 4),
            "ci95": [round(lo, 4), round(hi, 4)],
            "mean_total": round(self.mean_total, 3),
            "mean_round": round(self.mean_round, 3),
            "zero_round_rate": round(self.zero_rounds / self.rounds, 4) if self.rounds else 0.0,
        }


def aggregate(results: Iterable[GameResult]) -> dict[str, BotStats]:
    """Per bot name. A shared win counts as a win for each winner; seats of one name add up."""
    stats: dict[str, BotStats] = {}
    for r in results:
        for seat, name in enumerate(r.bots):
            s = stats.setdefault(name, BotStats(name))
            s.seats += 1
            s.games.add(r.index)
            s.wins += seat in r.winners
            s.total_sum += r.totals[seat]
            s.round_sum += sum(r.rounds[seat])
            s.rounds += len(r.rounds[seat])
            s.zero_rounds += sum(1 for x in r.rounds[seat] if x == 0)
    return stats


def format_table(stats: dict[str, BotStats], games: int) -> str:
    """A plain-text results table, best win rate first."""
    head = ("bot", "seats", "wins", "win rate", "95% CI", "mean total", "mean round", "out %")
    rows = [head]
    shared = []
    for s in sorted(stats.values(), key=lambda s: -s.win_rate):
        lo, hi = s.ci95
        per_game = s.seats / len(s.games) if s.games else 0
        if per_game > 1:
            shared.append(f"{s.name} ({per_game:g} seats/game)")
        rows.append(
            (
                s.name,
                str(s.seats),
                str(s.wins),
                f"{100 * s.win_rate:.1f}%",
                f"{100 * lo:.1f}-{100 * hi:.1f}%",
                f"{s.mean_total:.1f}",
                f"{s.mean_round:.2f}",
                f"{100 * s.zero_rounds / s.rounds:.1f}%" if s.rounds else "-",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [
        "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r))
        for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    foot = [f"{games} games; a shared win counts for each winner; out % = rounds scored 0."]
    if shared:
        foot.append(
            "Seats running the same bot are aggregated by name: "
            + ", ".join(shared)
            + "; its win rate is per seat."
        )
    return "\n".join(lines + foot)
