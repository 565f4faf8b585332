"""The lobby: public tables with open seats, and the seek buckets that quick play fills.

- ``mt:{lobby}:by:<filters>`` sorted sets: public tables with open seats, by creation time, one
  set per combination of the listing's filters (``by:any``, ``by:players=4``,
  ``by:preset=standard,players=4,turn=0``...), so that a filtered listing reads only tables that
  fit it; ``mt:{lobby}:kinds`` hash: each listed table's kind, which names its sets. One script
  lists a table in every set of its kind, another takes it out of all of them (a table leaves
  once full; one that expired is dropped when a listing meets it). ``mt:{lobby}:tables``: tables
  listed without a kind, which listings move into the sets (:meth:`Lobby.unsorted`).
- ``mt:{lobby}:round``: where the next look at a few tables in turn starts (:meth:`Lobby.round`),
  so that one gone behind any number of open ones is met by some listing.
- ``mt:{seek:<digest of the bucket>}:order`` and ``:claims``: the tables made by seeks of one
  bucket (preset, player count, turn clock, rated), oldest first, and the seats claimed on each.
  A seat is claimed by one script (``CLAIM_SEEK_SEAT``), so seeks on any number of instances
  are served one after another, and a table never has more seekers than seats. Each claim is
  kept under its id until its table closes or its seat is given back, so that a claim or a
  give-back run twice (redis-py sends a command again after a broken connection, and Redis
  may have run it) counts once, and a seek retried with its Idempotency-Key finds the seat it
  claimed, whichever of its attempts claimed it. TTL: each
  claim, seat given back or table reopened holds both keys for ``bucket_ttl`` (the game TTL)
  more, and so does each change of a table of the bucket with a seat open (:meth:`keep`): a
  table lives that long after its last change, so its bucket outlives it while it can be
  offered, and a bucket that no seek uses again leaves nothing behind once its tables are
  gone.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import redis
from redis.cluster import RedisCluster

from . import keys, scripts

#: The most tables a lobby listing returns.
MAX_LISTED = 100
#: The most tries of one delisting. A table listed between the read of its kind and the
#: script is tried again; a table's kind never changes, so the second try finds it listed as
#: read, or gone.
DELIST_TRIES = 3


@dataclass(frozen=True)
class Filter:
    """What a listing asks for: a preset, a player count, a turn clock (None: any)."""

    preset: str | None = None
    players: int | None = None
    turn_seconds: int | None = None

    @property
    def key(self) -> str:
        return keys.lobby_key(self.preset, self.players, self.turn_seconds)


@dataclass(frozen=True)
class TableKind:
    """What a listing's filters look at in a table; it never changes for a game."""

    preset: str
    players: int
    turn_seconds: int

    def sets(self) -> list[str]:
        """The sorted sets that list a table of this kind: one per combination of filters."""
        return [
            keys.lobby_key(
                self.preset if preset else None,
                self.players if players else None,
                self.turn_seconds if turn else None,
            )
            for preset, players, turn in itertools.product((True, False), repeat=3)
        ]

    def encode(self) -> str:
        return f"{self.preset} {self.players} {self.turn_seconds}"

    @classmethod
    def decode(cls, raw: bytes) -> TableKind:
        preset, players, turn_seconds = raw.decode().split(" ")
        return cls(preset, int(players), int(turn_seconds))


class Lobby:
    def __init__(self, client: redis.Redis | RedisCluster, bucket_ttl: int) -> None:
        """``bucket_ttl``: how long a seek bucket's keys outlive their last write, the game TTL
        (``GAME_TTL_SECONDS``, which the store is given): a table lives that long after its
        last change, and its bucket must not expire under it."""
        self.client = client
        self.bucket_ttl = int(bucket_ttl)
        self._claim = client.register_script(scripts.CLAIM_SEEK_SEAT)
        self._close = client.register_script(scripts.CLOSE_SEEK_TABLE)
        self._forget = client.register_script(scripts.FORGET_SEEKER)
        self._give_back = client.register_script(scripts.GIVE_BACK_SEAT)
        self._reopen = client.register_script(scripts.REOPEN_SEEK_TABLE)
        self._keep = client.register_script(scripts.KEEP_SEEK_BUCKET)
        self._list = client.register_script(scripts.LIST_TABLES)
        self._delist_tables = client.register_script(scripts.DELIST_TABLES)
        self._round = client.register_script(scripts.LOBBY_ROUND)

    def page(
        self, wanted: Filter, below: float | None, skip: int, count: int
    ) -> list[tuple[str, float]]:
        """Listed tables that fit ``wanted`` and their listing times, newest first: ``count`` at
        most of those listed at ``below`` or before (every one: None), after the ``skip``
        newest of them."""
        top: float | str = "+inf" if below is None else below
        found = cast(
            "list[tuple[bytes, float]]",
            self.client.zrevrangebyscore(
                wanted.key, top, "-inf", start=skip, num=count, withscores=True
            ),
        )
        return [(raw.decode(), score) for raw, score in found]

    def unsorted(self, count: int) -> list[tuple[str, float]]:
        """The newest ``count`` tables listed without their kind, and their listing times:
        :meth:`add` lists them with it, :meth:`remove` takes them out."""
        found = cast(
            "list[tuple[bytes, float]]",
            self.client.zrevrange(keys.LOBBY_UNSORTED, 0, count - 1, withscores=True),
        )
        return [(raw.decode(), score) for raw, score in found]

    def round(self, count: int) -> list[str]:
        """The next ``count`` tables at most of a round of the whole lobby, oldest first, each
        call going on from the last: every listed table comes round, however many newer ones
        are open."""
        found = self._round(keys=[keys.LOBBY, keys.LOBBY_ROUND], args=[count])
        return [raw.decode() for raw in cast("list[bytes]", found)]

    def add(self, kind: TableKind, listed: Mapping[str, float]) -> None:
        """List the tables of ``kind`` in ``listed``, each by its listing time (its creation)."""
        if listed:
            pairs = [v for game_id, at in listed.items() for v in (game_id, at)]
            names = [keys.LOBBY_UNSORTED, keys.LOBBY_KINDS, *kind.sets()]
            self._list(keys=names, args=[kind.encode(), *pairs])

    def remove(self, *game_ids: str) -> None:
        """Take the tables out of every set that lists them (of any kind, or of none)."""
        left: Iterable[str] = game_ids
        for _ in range(DELIST_TRIES):
            left = [
                game_id for kind, ids in self._by_kind(left) for game_id in self._delist(kind, ids)
            ]
            if not left:
                return

    def _by_kind(self, game_ids: Iterable[str]) -> list[tuple[bytes, list[str]]]:
        """The tables grouped by the kind they are listed as (b'': none)."""
        ids = list(game_ids)
        if not ids:
            return []
        grouped: dict[bytes, list[str]] = {}
        kinds = cast("list[bytes | None]", self.client.hmget(keys.LOBBY_KINDS, ids))
        for game_id, kind in zip(ids, kinds, strict=True):
            grouped.setdefault(kind or b"", []).append(game_id)
        return list(grouped.items())

    def _delist(self, kind: bytes, game_ids: list[str]) -> list[str]:
        """Delist tables seen listed as of ``kind``; those listed otherwise meanwhile."""
        sets = TableKind.decode(kind).sets() if kind else [keys.LOBBY]
        names = [keys.LOBBY_UNSORTED, keys.LOBBY_KINDS, *sets]
        other = self._delist_tables(keys=names, args=[kind, *game_ids])
        return [raw.decode() for raw in other]

    def claim(
        self,
        bucket: str,
        fresh_id: str,
        seats: int,
        now_ms: int,
        player: str | None = None,
        *,
        claim_id: str,
        others: Sequence[str] = (),
    ) -> tuple[str, int, bool]:
        """The next seeker's table and seat in ``bucket``; ``True`` when the table is new (the
        seeker makes it, as ``fresh_id``). Seat -1: that table seats ``player`` already.
        The claim made under ``claim_id`` (no space), if there is one, answered again: so
        redis-py may send it again after a broken connection, and a retried seek finds the
        seat it claimed. So is one made under ``others``, the ids of the same seek's other
        attempts (kept under ``claim_id`` from then on): a retry starts at its first attempt,
        and the claim its first try left may be a later attempt's."""
        game, seat, created = self._claim(
            keys=list(keys.seek_keys(bucket)),
            args=[fresh_id, seats, now_ms, player or "", self.bucket_ttl, claim_id, *others],
        )
        return (game.decode() if isinstance(game, bytes) else str(game)), int(seat), bool(created)

    def forget(self, bucket: str, game_id: str, player: str | None) -> None:
        """The seek of ``player`` did not take the seat it was given at ``game_id``: it may be
        given one there again."""
        if player is not None:
            self._forget(keys=list(keys.seek_keys(bucket)), args=[game_id, player])

    def give_back(self, bucket: str, claim_id: str) -> bool:
        """The seat claimed under ``claim_id`` was not taken (the seek failed): the next seek
        of the bucket may have it, unless its table was closed meanwhile. Once only, however
        often it is sent: redis-py sends it again after a broken connection."""
        names = list(keys.seek_keys(bucket))
        return bool(self._give_back(keys=names, args=[claim_id, self.bucket_ttl]))

    def reopen(self, bucket: str, game_id: str, taken: int) -> bool:
        """A seat of a table that left its bucket full is open again: the table is back, first
        in line, with ``taken`` seats counted as claimed. A table still in its bucket keeps its
        count (seekers may hold claims there not yet taken). Whether it came back."""
        names = list(keys.seek_keys(bucket))
        return bool(self._reopen(keys=names, args=[game_id, taken, self.bucket_ttl]))

    def keep(self, bucket: str) -> None:
        """Hold the bucket's keys for its lifetime from now: a table of it with a seat open
        changed, which renews that table's own keys only."""
        self._keep(keys=list(keys.seek_keys(bucket)), args=[self.bucket_ttl])

    def close(self, bucket: str, game_id: str) -> int:
        """Take the table out of its bucket; the seats seekers claimed on it."""
        return int(self._close(keys=list(keys.seek_keys(bucket)), args=[game_id]))
