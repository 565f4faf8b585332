"""Players: durable anonymous identities with a rating, and the leaderboards.

- ``mt:{player:<id>}`` hash: ``n`` name, ``k`` kind (``person`` or ``bot``), ``t`` the player
  token's digest (a bot has none), ``mu``/``sigma`` the rating, ``g`` rated games, ``w`` wins.
  No expiry: a player outlives its games.
- ``mt:{player:<id>}:rated`` set: the rated games already counted. A game's result is applied
  to a player in one script that first adds the game here, so a game is counted once however
  many instances (or replayed requests) see it end.
- ``mt:{leaderboard}:<kind>`` sorted set: players with enough rated games, by displayed rating.

A player token is ``p.<player id>.<secret>``: the id says which digest to compare against.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import cast

import redis
from redis.cluster import RedisCluster

from . import keys, scripts
from .tokens import hash_token, new_id, token_matches

#: openskill's defaults (Plackett-Luce): where every player starts.
START_MU = 25.0
START_SIGMA = 25.0 / 3
#: A player is on a leaderboard from this many rated games on.
LEADERBOARD_GAMES = 5
TOKEN_PREFIX = "p."


class PlayerKind(StrEnum):
    PERSON = "person"
    BOT = "bot"


@dataclass(frozen=True)
class Player:
    player_id: str
    name: str
    kind: PlayerKind
    mu: float = START_MU
    sigma: float = START_SIGMA
    games: int = 0
    wins: int = 0

    @property
    def display(self) -> float:
        """The rating shown: a conservative estimate, ``mu - 3 sigma``."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True)
class Result:
    """One seat's part of a rated game's outcome: the player's new rating, and a win.
    ``seen_games`` is the player's rated games at the read of the rating it is computed from:
    the result applies only on top of that rating (another game's result in between is kept)."""

    player_id: str
    mu: float
    sigma: float
    won: bool
    seen_games: int


class Recorded(Enum):
    """What recording one player's part of a rated game did."""

    COUNTED = "counted"
    ALREADY = "already"  # this game counts for the player already
    STALE = "stale"  # another game counted since the rating's read: compute it again


def new_player_id() -> str:
    return new_id()


def bot_player_id(level: str) -> str:
    return f"bot-{level}"


class Players:
    """Player records, tokens, ratings and leaderboards; stateless, safe to share."""

    def __init__(self, client: redis.Redis | RedisCluster) -> None:
        self.client = client
        self._rate = client.register_script(scripts.RATE_PLAYER)

    def create(self, name: str) -> tuple[Player, str]:
        """A new person and its token (given once, kept as a digest)."""
        player_id, secret = new_player_id(), secrets.token_urlsafe(32)
        token = f"{TOKEN_PREFIX}{player_id}.{secret}"
        fields: dict[str, str | bytes] = {
            "n": name,
            "k": PlayerKind.PERSON.value,
            "t": hash_token(token),
        }
        self.client.hset(keys.player_key(player_id), mapping=fields)  # type: ignore[arg-type]
        return Player(player_id, name, PlayerKind.PERSON), token

    def ensure_bot(self, level: str) -> Player:
        """A bot level's own player, made on first use."""
        player_id = bot_player_id(level)
        key = keys.player_key(player_id)
        self.client.hsetnx(key, "n", level)
        self.client.hsetnx(key, "k", PlayerKind.BOT.value)
        found = self.get(player_id)
        assert found is not None
        return found

    def get(self, player_id: str) -> Player | None:
        if not keys.valid_player_id(player_id):
            return None
        fields = cast("dict[bytes, bytes]", self.client.hgetall(keys.player_key(player_id)))
        if not fields or b"n" not in fields:
            return None
        return _player(player_id, fields)

    def identify(self, token: str) -> Player | None:
        """The person whose token this is, or None."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        player_id, _, _ = token[len(TOKEN_PREFIX) :].partition(".")
        if not keys.valid_player_id(player_id):
            return None
        stored = self.client.hget(keys.player_key(player_id), "t")
        if not isinstance(stored, bytes) or not token_matches(hash_token(token), stored):
            return None
        return self.get(player_id)

    def record(self, game_id: str, result: Result) -> Recorded:
        """Apply one player's part of a rated game, unless it is applied already or the
        player's rating moved since the read ``result`` is computed from."""
        args: list[str | int] = [
            game_id,
            repr(result.mu),
            repr(result.sigma),
            int(result.won),
            result.seen_games,
        ]
        player = result.player_id
        keys_ = [keys.player_key(player), keys.player_rated_key(player)]
        done = int(cast("int", self._rate(keys=keys_, args=args)))
        if done == -1:
            return Recorded.STALE
        # Counted already too: a rater that failed between the count and the board (the board
        # is in another slot) leaves the board to the game's next rater.
        self._place(player)
        return Recorded.COUNTED if done == 1 else Recorded.ALREADY

    def _place(self, player_id: str) -> None:
        """Put the player on its kind's leaderboard with the rating its record holds. The board
        lives in another slot, so another game may count between the read and the write: the
        read is made again until the games count holds still, and the board ends with the
        newest rating whichever rater writes last."""
        key = keys.player_key(player_id)
        while True:
            fields = cast("list[bytes | None]", self.client.hmget(key, ["mu", "sigma", "g", "k"]))
            mu, sigma, games, kind = fields
            if mu is None or sigma is None or kind is None:
                return
            if int(games or 0) < LEADERBOARD_GAMES:
                return
            board = keys.leaderboard_key(kind.decode())
            self.client.zadd(board, {player_id: float(mu) - 3 * float(sigma)})
            if self.client.hget(key, "g") == games:
                return

    def leaderboard(self, kind: PlayerKind, limit: int) -> list[Player]:
        ids = cast(
            "list[bytes]", self.client.zrevrange(keys.leaderboard_key(kind.value), 0, limit - 1)
        )
        found = [self.get(raw.decode()) for raw in ids]
        return [player for player in found if player is not None]


def _player(player_id: str, fields: dict[bytes, bytes]) -> Player:
    return Player(
        player_id,
        fields[b"n"].decode(),
        PlayerKind(fields.get(b"k", b"person").decode()),
        float(fields.get(b"mu", START_MU)),
        float(fields.get(b"sigma", START_SIGMA)),
        int(fields.get(b"g", 0)),
        int(fields.get(b"w", 0)),
    )
