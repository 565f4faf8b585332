"""Ratings of rated games: openskill's Plackett-Luce model for free-for-all tables of 2-14.

When a rated game ends, every seat's player is rated once, from the game's result: the
winners share rank 1, the others follow by total score (equal totals share a rank). The change
that ends the game is stored with a mark (``rp`` in the game's hash) that is cleared once every
player is rated, so a process that dies in between leaves the work to the next one that reads
the game; each player's record counts a game once (``Players.record``), however many processes
or replayed requests get there, and takes a new rating only on top of the one it is computed
from, so two games of one player ending together both count.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import orjson
import redis
from openskill.models import PlackettLuce

from service import rules
from service.seating import SeatKind, Table
from service.store import GameRecord
from service.store.players import Player, Recorded, Result, bot_player_id

from .store_access import store

log = logging.getLogger(__name__)

#: openskill's defaults (mu 25, sigma 25/3), as the contract says.
MODEL = PlackettLuce()


def ranks(state: rules.GameState) -> list[int]:
    """Each seat's rank in the finished game: 1 for the winners, then by total score."""
    winners = set(state.winners or [])
    totals = state.totals()
    others = sorted({totals[s] for s in range(state.n_players) if s not in winners})
    return [1 if s in winners else 2 + others.index(totals[s]) for s in range(state.n_players)]


def seat_players(table: Table) -> list[str | None]:
    """Who is rated for each seat: its player, or a bot level's own player."""
    out: list[str | None] = []
    for seat in table.seats:
        if seat.kind == SeatKind.BOT and seat.bot is not None:
            out.append(seat.player or bot_player_id(seat.bot))
        else:
            out.append(seat.player)
    return out


def new_ratings(
    players: Sequence[Player], state: rules.GameState, basis: Sequence[tuple[float, float]]
) -> list[Result]:
    """Each seat's new rating: the game rated from ``basis`` (every seat's rating as the game's
    first rater read it) with the seat's own rating as it stands in ``players`` (the same,
    unless another game of that player counted since)."""
    return [seat_rating(player, seat, state, basis) for seat, player in enumerate(players)]


def seat_rating(
    player: Player, seat: int, state: rules.GameState, basis: Sequence[tuple[float, float]]
) -> Result:
    """One seat's part of :func:`new_ratings`: ``player``'s own rating against the basis."""
    teams = [[MODEL.rating(mu=mu, sigma=sigma)] for mu, sigma in basis]
    teams[seat] = [MODEL.rating(mu=player.mu, sigma=player.sigma)]
    rated = MODEL.rate(teams, ranks=[float(rank) for rank in ranks(state)])[seat][0]
    won = seat in set(state.winners or [])
    return Result(player.player_id, rated.mu, rated.sigma, won, player.games)


def rate_game(game_id: str, state: rules.GameState, table: Table) -> int:
    """Rate every seat of a finished rated game (each once); how many were rated now.

    The change that ended the game is stored, and marks its ratings pending: if Redis refuses
    them now, that is logged, not answered, and the game's next read rates it (each seat once
    still)."""
    try:
        return _rate(game_id, state, table)
    except redis.RedisError as err:
        log.warning("ratings of %s left for its next read: %s", game_id, err)
        return 0


def _rate(game_id: str, state: rules.GameState, table: Table) -> int:
    """Rate the game from its basis (the players' ratings as its first rater read them), each
    player's part written only on top of the rating it is computed from. A player whose rating
    another game changed in between (two games of theirs ending together) is read again and
    computed again against the same basis, so no game's part is written over, and a rater
    after a crash rates the players left as the first would have."""
    ids = seat_players(table)
    players = [store().players.get(p) if p else None for p in ids]
    known = [p for p in players if p is not None]
    if len(known) != len(players):
        return 0  # a seat without a player: the game could not have been dealt
    read = orjson.dumps([[p.mu, p.sigma] for p in known])
    basis = [
        (float(mu), float(sigma)) for mu, sigma in orjson.loads(store().rating_basis(game_id, read))
    ]
    counted = 0
    for seat, result in enumerate(new_ratings(known, state, basis)):
        counted += _record(game_id, result, seat, state, basis)
    store().ratings_done(game_id)
    return counted


def _record(
    game_id: str,
    result: Result,
    seat: int,
    state: rules.GameState,
    basis: Sequence[tuple[float, float]],
) -> bool:
    """Record one seat's part, computed again from the player's current rating for as long as
    another game of theirs counts in between. Each refusal means another rater of that player
    counted a game, so however many games of one player end together, the loop ends once the
    others are counted; giving up instead would leave this game to its next read, which nobody
    owes a finished game."""
    while True:
        done = store().players.record(game_id, result)
        if done is not Recorded.STALE:
            return done is Recorded.COUNTED
        again = store().players.get(result.player_id)
        assert again is not None  # a player is never deleted
        result = seat_rating(again, seat, state, basis)


def ends_rated_game(state: rules.GameState, table: Table, events: Sequence[rules.Event]) -> bool:
    return table.listing.rated and any(e["type"] == "game_over" for e in events)


def finish_pending(record: GameRecord, state: rules.GameState, table: Table) -> None:
    """A game read with its ratings still to do (its rater died): do them now."""
    if record.ratings_pending and state.status == rules.Status.GAME_OVER:
        rate_game(record.game_id, state, table)
