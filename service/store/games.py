"""Game storage on Redis: one hash per game, compare-and-set on its version, idempotency.

Layout (all keys of a game share the hash tag ``{<game id>}``, see :mod:`.keys`):

- ``mt:{<id>}`` hash: ``v`` version, ``s`` engine ``dumps`` bytes, ``h`` host token digest,
  ``m`` the table token's digest, ``t`` the seat token digests concatenated (32 bytes each);
  a finished rated game's ``rp`` (ratings still to do) and ``rb`` (the ratings it is rated from).
  TTL: ``undealt_ttl`` while the game was never dealt (so anonymous creations that never play
  cost little), ``game_ttl`` from the first deal on, renewed by every applied action.
- ``mt:{<id>}:log`` list: the log records (:mod:`service.rules.log`), entry ``N`` at index
  ``N - 1``; written by the same script as the state, so neither is ever seen without the other.
  ``x`` in the hash is the table (seats and table options, JSON). Same TTL as the hash.
- ``mt:{<id>}:idem:<sha256(token, Idempotency-Key)>`` string: the first response to a keyed
  request, ``b"<status>" + body``. TTL: ``min(idem_ttl, the game's TTL)``.

A read is one round trip: HGETALL, and in the same pipeline when asked for, GET of the
idempotency key, the rate counter, the presence hash and a seat's presence mark. A write is one
EVALSHA. The store knows nothing of HTTP or of the rules: it keeps bytes.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import redis
from redis.cluster import RedisCluster

from service.frameworks.redis_py import Direct, Script
from service.rules import Role

from . import keys, scripts
from .hooks import Webhooks
from .lobby import Lobby
from .memory import MemoryWatch
from .players import Players
from .presence import KEEP_SECONDS as PRESENCE_KEEP_SECONDS
from .presence import Presence, request_field
from .sealed import seal, unseal
from .slots import AddressSlots, SlotKind
from .streams import Tickets
from .subscriber import WakeupSubscriber
from .tokens import hash_token, new_game_id, token_matches
from .transfers import Transfers
from .work import WorkQueue

DIGEST_SIZE = 32


class StoreError(Exception):
    """Base of the store's refusals (the API maps each to a problem)."""


class GameNotFound(StoreError):
    pass


class RematchClosed(StoreError):
    """A seat's first claim of its place in the rematch, after the claim window closed."""


class GameIdTaken(StoreError):
    """The id given for a new game (a seek table's, claimed first) names a game already:
    nothing is written."""


class LogFull(StoreError):
    """The change would grow the game's log past :data:`MAX_LOG_ENTRIES`: nothing was written."""


#: The most entries a game's log may hold. The rules bound a game's moves (the longest games,
#: 14 players over 19 rounds, stay far below); what else adds entries (seat changes) is
#: bounded by this, so no client can grow a game's memory or its streams without end.
MAX_LOG_ENTRIES = 50_000


class VersionConflict(StoreError):
    """The stored version is not the one the caller read: nothing was written."""

    def __init__(self, current: int) -> None:
        super().__init__(f"the game is at version {current}")
        self.current = current


# A preset dictionary for zlib: the field names and common values of a game view. Kept
# responses are short JSON documents, where a shared dictionary halves the compressed size
# (about 260 instead of 560 bytes for a 4-player move response). Never edit it in place: add
# a new one under a new marker byte, so records already stored stay readable.
_ZDICT_V1 = (
    b'{"game_id":"","version":1,"status":"waiting_deal","round":1,"rounds":13,"engine":null,'
    b'"turn":null,"starter":null,"rules":{"preset":"standard","options":{"set":12,'
    b'"hand_size":12,"rounds":13,"engine_source":"from_hand","opening":"chain",'
    b'"opening_no_play":"mark","opening_out_waits":true,"mexican_needs_own_blocked":false,'
    b'"double_follow":"any","chicken_foot":false,"double_blank_points":50}},'
    b'"winners":null,"events":[{"type":"round_started","round":1,"engine":12,"starter":0},'
    b'{"type":"engine_placed","seat":0,"tile":[12,12]},{"type":"tile_drawn","seat":0},'
    b'{"type":"marker_placed","seat":0},{"type":"double_opened","seat":0,"train":"0"},'
    b'{"type":"turn_passed","seat":1},{"type":"tile_played","seat":0,"tile":[12,5],'
    b'"train":"mexican"}],"turn_state":{"drawn":false,"tiles_played":0,"must_follow":null},'
    b'"open_doubles":[],"boneyard_size":30,"players":[{"seat":0,"name":"","hand_size":12,'
    b'"score":0,"marked":false,"opened":true},{"seat":1,"name":"","hand_size":12,"score":0,'
    b'"marked":false,"opened":false}],"trains":[{"id":"0","owner":0,"tiles":[[12,5],[5,3]],'
    b'"open_end":3,"marked":false,"started":true},{"id":"1","owner":1,"tiles":[],'
    b'"open_end":12,"marked":false,"started":false},{"id":"mexican","owner":null,"tiles":[],'
    b'"open_end":12,"marked":false,"started":false}],"hand":[[1,2],[0,0]]}'
)


@dataclass(frozen=True)
class KeptResponse:
    """A response kept for an Idempotency-Key, replayed verbatim.

    Stored as ``b"<status>1"`` + the body deflated with :data:`_ZDICT_V1`: a game whose client
    keys every move keeps one record per move for 24 h, so the records must be small. A
    ``secret`` answer (it holds a token or an invite, which are never stored in clear) is
    stored as ``b"<status>2"`` + that deflated body sealed under the caller's scope and key
    (:mod:`.sealed`): only the caller who sent them can read it back.
    """

    status: int
    body: bytes
    secret: bool = False

    def encode(self, seal_key: str) -> bytes:
        deflate = zlib.compressobj(6, zdict=_ZDICT_V1)
        packed = deflate.compress(self.body) + deflate.flush()
        if self.secret:
            return b"%03d2" % self.status + seal(seal_key, packed)
        return b"%03d1" % self.status + packed

    @classmethod
    def decode(cls, raw: bytes, seal_key: str) -> KeptResponse:
        marker = raw[3:4]
        packed = raw[4:]
        if marker == b"2":
            opened = unseal(seal_key, packed)
            if opened is None:
                raise ValueError("a sealed kept response that this key does not open")
            packed = opened
        elif marker != b"1":
            raise ValueError("unknown kept-response format")
        inflate = zlib.decompressobj(zdict=_ZDICT_V1)
        return cls(int(raw[:3]), inflate.decompress(packed) + inflate.flush(), marker == b"2")


def seal_key(scope: str, idempotency_key: str) -> str:
    """What a kept answer is sealed under: the caller's secret (its token, or a join's invite)
    and its Idempotency-Key, as the record's name is derived from them."""
    return f"{scope}\n{idempotency_key}"


class IdempotentReplay(StoreError):
    """A request with the same Idempotency-Key was answered first: ``kept`` is that answer.

    Raised by :meth:`GameStore.save` when a concurrent request with the key saved first, and by
    callers that find ``GameRecord.kept`` (or a kept create); the API answers all of them alike.
    """

    def __init__(self, kept: KeptResponse) -> None:
        super().__init__("replayed")
        self.kept = kept


#: The digest of a seat nobody holds a token for (a bot or open seat): no token hashes to it.
NO_TOKEN = bytes(DIGEST_SIZE)


@dataclass(frozen=True)
class Change:
    """What one request writes: the new state, new log records, and (when they changed) the
    seat token digests and the table."""

    state: bytes
    records: Sequence[bytes]
    seat_digests: Sequence[bytes] | None = None
    table: bytes | None = None
    ends_rated: bool = False  # marks the game's ratings as to do, in the same step
    rematch: bytes = b""  # the rematch made of this finished game (its id, sealed tokens)
    spends: str | None = None  # a one-time ticket's key the change uses up (a transfer's)

    def fields(self) -> list[bytes]:
        out = [b"s", self.state]
        if self.seat_digests is not None:
            out += [b"t", b"".join(self.seat_digests)]
        if self.table is not None:
            out += [b"x", self.table]
        if self.ends_rated:
            out += [b"rp", b"1"]
        if self.rematch:
            out += [b"rm", self.rematch]
        return out


@dataclass
class _Read:
    """What one read brought back: the game's fields, and what rode with them."""

    fields: dict[bytes, bytes]
    presence: dict[bytes, bytes] | None = None
    kept: bytes | None = None
    rate: list[Any] = field(default_factory=lambda: [0, 0])  # the counter's (count, seconds left)


@dataclass(frozen=True)
class GameRecord:
    game_id: str
    version: int
    state: bytes
    host_digest: bytes
    seat_digests: tuple[bytes, ...]
    table: bytes = b""
    kept: KeptResponse | None = None
    table_digest: bytes = b""  # the table token's (games made before table tokens have none)
    ratings_pending: bool = False  # a rated game ended and its players are not all rated yet
    rematch: bytes = b""  # JSON: the rematch made of this game and its sealed tokens
    # Requests made with this token on this game in the current rate window, and the window's
    # remaining seconds (both 0 when rate limiting is off or no token was sent).
    rate_count: int = 0
    rate_reset: int = 0
    # The game's presence hash, when the read asked for it (read in the same round trip).
    presence: dict[bytes, bytes] | None = None

    def after(self, change: Change, version: int) -> GameRecord:
        """The record as stored once ``change`` is applied on top of this one at ``version``."""
        seats = self.seat_digests if change.seat_digests is None else tuple(change.seat_digests)
        table = self.table if change.table is None else change.table
        return GameRecord(
            self.game_id,
            version,
            change.state,
            self.host_digest,
            seats,
            table,
            table_digest=self.table_digest,
            ratings_pending=self.ratings_pending or change.ends_rated,
            rematch=change.rematch or self.rematch,
        )

    def identify(self, token: str) -> Role | None:
        """The host, the table, a seat, or None for a token of no role in this game.

        Every digest is compared (no early exit) so timing does not reveal which one matched.
        """
        digest = hash_token(token)
        role: Role | None = None
        if token_matches(digest, self.host_digest):
            role = Role.HOST
        if self.table_digest and token_matches(digest, self.table_digest):
            role = Role.TABLE
        for seat, stored in enumerate(self.seat_digests):
            if token_matches(digest, stored) and stored != NO_TOKEN:
                role = Role.of_seat(seat)
        return role


class GameStore:
    """All Redis access of the service. Stateless: safe to share between threads."""

    def __init__(
        self,
        client: redis.Redis | RedisCluster,
        *,
        game_ttl: int = 7 * 24 * 3600,
        idem_ttl: int = 24 * 3600,
        undealt_ttl: int = 3600,
        rate_window: int = 0,
        memory_every: float = 5.0,
        max_entries: int = MAX_LOG_ENTRIES,
    ) -> None:
        self.client = client
        self.memory = MemoryWatch(client, memory_every)
        self.game_ttl = int(game_ttl)
        self.idem_ttl = int(min(idem_ttl, game_ttl))
        self.undealt_ttl = int(min(undealt_ttl, game_ttl))
        self.rate_window = int(rate_window)  # seconds; 0: requests are not counted
        self.max_entries = int(max_entries)
        self._set_due = client.register_script(scripts.SET_DUE)
        self.sharded = isinstance(client, RedisCluster)  # a due set per slot (see keys.due_key)
        # The two commands of nearly every request skip redis-py's per-command layers.
        self.direct = Direct(client)
        self._cas = Script(self.direct, scripts.COMPARE_AND_SET)
        # Like the compare-and-set, a creation whose reply got lost is not sent again: it would
        # find its own game and take the id for another's (ReplyLost, a 503, instead).
        self._create = Script(self.direct, scripts.CREATE_GAME)
        self._count = client.register_script(scripts.COUNT_REQUEST)
        self._claim_rematch = client.register_script(scripts.CLAIM_REMATCH)
        self._close_rematch_claims = client.register_script(scripts.CLOSE_REMATCH_CLAIMS)
        self._keep_rating_basis = client.register_script(scripts.KEEP_RATING_BASIS)
        self.work = WorkQueue(client)
        self.tickets = Tickets(client)
        self.stream_slots = AddressSlots(client, SlotKind.STREAMS)
        self.webhook_lookup_slots = AddressSlots(client, SlotKind.WEBHOOK_LOOKUPS)
        self.players = Players(client)
        self.lobby = Lobby(client, bucket_ttl=self.game_ttl)
        self.presence = Presence(client)
        self.hooks = Webhooks(client)
        self.transfers = Transfers(client)

    def count_request(self, key: str, window: int, cost: int = 1) -> tuple[int, int]:
        """Count one request, as ``cost`` units, under ``key`` (see :mod:`.keys`): the count in
        the current ``window``-second window and the seconds until it ends."""
        count, ttl = self._count(keys=[key], args=[window, cost])
        return int(count), max(int(ttl), 1)

    def ping(self) -> bool:
        """Redis answers; on a cluster every master must (a game may live on any of them)."""
        if isinstance(self.client, RedisCluster):
            return bool(self.client.ping(target_nodes=RedisCluster.PRIMARIES))
        return bool(self.client.ping())

    def ttl(self, dealt: bool) -> int:
        """A game's lifetime without an action: short until its first deal."""
        return self.game_ttl if dealt else self.undealt_ttl

    def create(
        self,
        state: bytes,
        host_token: str,
        seat_digests: Sequence[bytes],
        records: Sequence[bytes],
        *,
        table: bytes = b"",
        dealt: bool = False,
        table_token: str | None = None,
        game_id: str | None = None,
        keeps: tuple[bytes, bytes] | None = None,
        due: int | None = None,
        ends_rated: bool = False,
    ) -> str:
        """Store a new game with its first log records (version = their number); returns its
        fresh id. Seats without a token (bots, open seats) pass :data:`NO_TOKEN`. ``dealt``: the
        state was dealt before (an imported position, an automatic deal), so it lives the full
        game TTL at once. ``keeps``: the host and table token digests of a game whose tokens
        this one takes over (a rematch), instead of new tokens'. ``due``: when the server
        owes the game its first change by itself (see :mod:`.due`), if it does. ``ends_rated``:
        a rated game that ended within its creation (bots alone), its ratings marked to do."""
        host, table_digest = keeps or (hash_token(host_token), b"")
        if keeps is None and table_token is not None:
            table_digest = hash_token(table_token)
        fields: list[bytes | int] = [b"s", state, b"h", host]
        fields += [b"t", b"".join(seat_digests), b"x", table]
        if table_digest:
            fields += [b"m", table_digest]
        if ends_rated:
            fields += [b"rp", b"1"]
        # A collision of 72 random bits is next to impossible; stay bounded. A given id (a seek
        # table's, claimed before the game exists) is tried once.
        for _ in range(1 if game_id is not None else 5):
            made = game_id or new_game_id()
            args: list[bytes | int | str] = [self.ttl(dealt), made, _due_arg(due)]
            args += [len(fields) // 2, *fields, *records]
            names = [keys.game_key(made), keys.log_key(made), keys.due_key(made, self.sharded)]
            if self._create(keys=names, args=args):
                return made
        if game_id is not None:
            raise GameIdTaken(game_id)
        raise StoreError("could not draw a free game id")

    def kept_create(self, idempotency_key: str) -> KeptResponse | None:
        """The first answer to a request naming no game (``POST /games``, a seek) with this
        Idempotency-Key, if kept."""
        blob = self.client.get(keys.create_key(idempotency_key))
        return self._unseal(idempotency_key, blob)

    def keep_create(
        self, idempotency_key: str, kept: KeptResponse, ttl: int | None = None
    ) -> KeptResponse | None:
        """Keep the answer (sealed, see :mod:`.sealed`) unless a concurrent request with the
        same key kept one first; then that one is returned and should be answered instead.
        ``ttl``: seconds to keep it, when less than the usual (an answer that expires)."""
        name = keys.create_key(idempotency_key)
        sealed_blob = seal(idempotency_key, kept.encode(""))
        if self.client.set(name, sealed_blob, nx=True, ex=min(ttl or self.idem_ttl, self.idem_ttl)):
            return None
        return self._unseal(idempotency_key, self.client.get(name))

    @staticmethod
    def _unseal(idempotency_key: str, blob: Any) -> KeptResponse | None:
        if not isinstance(blob, bytes):
            return None
        data = unseal(idempotency_key, blob)
        return KeptResponse.decode(data, "") if data is not None else None

    def load(
        self,
        game_id: str,
        *,
        token: str | None = None,
        idempotency_key: str | None = None,
        scope: str | None = None,
        cost: int = 1,
        presence: bool = False,
        seen: int | None = None,
    ) -> GameRecord:
        """The game's record in one round trip; with a key, also any response kept for it.
        ``scope``: the caller's secret that keys its kept responses when it sends no token (a
        join's invite); ``cost``: what the request counts against the rate limit;
        ``presence``: also the game's presence hash (``GameRecord.presence``); ``seen``: a
        time (ms) to mark the seat of ``token`` seen at, if it is a seat's token."""
        if not keys.valid_game_id(game_id):
            raise GameNotFound(game_id)
        owner = token if scope is None else scope
        idem = None
        if idempotency_key is not None and owner is not None:
            idem = keys.idem_key(game_id, owner, idempotency_key)
        counter = None
        if self.rate_window > 0 and token is not None:
            counter = keys.rate_key(game_id, token)
        mark = None if seen is None or token is None else (hash_token(token), seen)
        if idem is not None or counter is not None or presence or mark is not None:
            read = self._read_with(game_id, idem, counter, cost, presence, mark)
        else:
            read = _Read(self.direct.hgetall(keys.game_key(game_id)))
        if not read.fields or b"v" not in read.fields:
            raise GameNotFound(game_id)
        kept = None
        if read.kept:
            kept = KeptResponse.decode(read.kept, seal_key(owner or "", idempotency_key or ""))
        count = int(read.rate[0])
        reset = max(int(read.rate[1]), 1) if count else 0
        return _record(game_id, read.fields, kept, count, reset, read.presence)

    def _read_with(
        self,
        game_id: str,
        idem: str | None,
        counter: str | None,
        cost: int,
        presence: bool,
        mark: tuple[bytes, int] | None,
    ) -> _Read:
        """The game and what rides with it (its presence hash, a seat's mark, the response
        kept under ``idem``, the rate ``counter``) in one pipeline: one round trip."""
        gkey, pkey = keys.game_key(game_id), keys.presence_key(game_id)
        pipe = self.client.pipeline(transaction=False)
        pipe.hgetall(gkey)
        # The scripts are sent as raw EVAL: a cluster pipeline neither loads scripts for
        # EVALSHA nor offers eval(), yet routes EVAL by its key.
        if mark is not None:
            args = (*mark, PRESENCE_KEEP_SECONDS)
            pipe.execute_command("EVAL", scripts.MARK_SEAT_SEEN, 2, gkey, pkey, *args)
        if presence:  # after the mark: the caller's process keeps this copy a while
            pipe.hgetall(pkey)
        if idem is not None:
            pipe.get(idem)
        if counter is not None:
            pipe.execute_command("EVAL", scripts.COUNT_REQUEST, 1, counter, self.rate_window, cost)
        # The mark and the counter are writes riding on a read: one Redis refuses (full, or a
        # replica after a failover) leaves the read standing, unmarked and uncounted, as what
        # is refused then is every change anyway. An error of a read is raised.
        replies = iter(pipe.execute(raise_on_error=False))
        read = _Read(_read_reply(next(replies)))
        if mark is not None:
            _write_reply(next(replies))  # the seat marked, or -1
        if presence:
            read.presence = _read_reply(next(replies))
        if idem is not None:
            read.kept = _read_reply(next(replies))
        if counter is not None:
            counted = _write_reply(next(replies))
            if counted is not None:
                read.rate = counted
        return read

    def save(
        self,
        game_id: str,
        expected_version: int,
        change: Change,
        *,
        kept: KeptResponse | None = None,
        token: str | None = None,
        idempotency_key: str | None = None,
        dealt: bool = True,
        seen: tuple[int, int] | None = None,
        due: int | None = None,
    ) -> int:
        """Compare-and-set: store ``change`` on top of ``expected_version``; the version grows
        by its number of records.

        With an Idempotency-Key, ``kept`` is stored in the same atomic step. ``dealt``: the new
        state was ever dealt (else the game keeps its short TTL). ``seen``: (seat, time in ms)
        of a request to mark in the game's presence with the change, saving the mark its own
        round trip (marked only if the change is stored). ``due``: when the server owes the
        game its next change by itself after this one (see :mod:`.due`), if it does. Raises
        VersionConflict, GameNotFound, IdempotentReplay or LogFull; on any of them nothing was
        written.
        """
        if not change.records:
            # Every stored change moves the version: a game's version then names its whole
            # record, which is what lets the API act on a copy it read at that version.
            raise ValueError("a change without log records")
        ttl = self.ttl(dealt)
        key_list = [
            keys.game_key(game_id),
            keys.log_key(game_id),
            keys.wakeup_channel(game_id),
            keys.presence_key(game_id),
            keys.due_key(game_id, self.sharded),
        ]
        fields = change.fields()
        sealing = seal_key(token or "", idempotency_key or "")
        args: list[bytes | int | str] = [expected_version, ttl, len(fields) // 2, b"", 0]
        if idempotency_key is not None and token is not None and kept is not None:
            key_list.append(keys.idem_key(game_id, token, idempotency_key))
            args[3:5] = [kept.encode(sealing), min(self.idem_ttl, ttl)]
        if change.spends is not None:
            key_list.append(change.spends)
        args.append(self.max_entries)
        mark = ("", 0) if seen is None else (request_field(seen[0]), seen[1])
        args += [*mark, PRESENCE_KEEP_SECONDS, _due_arg(due)]
        result = self._cas(keys=key_list, args=[*args, *fields, *change.records])
        outcome = int(result[0])
        if outcome == 1:
            return int(result[1])
        if outcome == 0:
            raise VersionConflict(int(result[1]))
        if outcome == 2:
            raise IdempotentReplay(KeptResponse.decode(result[1], sealing))
        if outcome == 3:
            raise LogFull(game_id)
        raise GameNotFound(game_id)

    def set_due(self, game_id: str, version: int, due: int | None) -> bool:
        """The game's due time (see :mod:`.due`) as found at ``version``, unless a change
        was stored since (it set its own); a game gone leaves the due set. Whether set."""
        names = [keys.game_key(game_id), keys.due_key(game_id, self.sharded)]
        return bool(self._set_due(keys=names, args=[game_id, version, _due_arg(due)]))

    def postpone_due(self, game_id: str, at_ms: int) -> None:
        """The game's due time (see :mod:`.due`) moved on to ``at_ms``, if it is sooner and the
        game is in the set (a game whose server moves failed: see service/worker/play.py)."""
        self.client.zadd(keys.due_key(game_id, self.sharded), {game_id: at_ms}, xx=True, gt=True)

    def peek(self, game_ids: Sequence[str]) -> list[GameRecord | None]:
        """Several games' records in one round trip per node (None: gone): listings."""
        pipe = self.client.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.hgetall(keys.game_key(game_id))
        return [
            _record(game_id, fields) if fields and b"v" in fields else None
            for game_id, fields in zip(game_ids, pipe.execute(), strict=True)
        ]

    def claim_rematch(self, game_id: str, who: str, *, closes: bool = True) -> bool:
        """Record that ``who`` (a seat, or the table) took its place in the game's rematch;
        True the first time. Kept beside the record, not a change of the game. Raises
        GameNotFound when the game is gone, and RematchClosed for a first claim that
        ``closes`` with the claim window, once it closed."""
        args: list[str | int] = [f"rc:{who}", int(closes)]
        claimed = int(self._claim_rematch(keys=[keys.game_key(game_id)], args=args))
        if claimed == -1:
            raise GameNotFound(game_id)
        if claimed == -2:
            raise RematchClosed(game_id)
        return claimed == 1

    def rematch_claims(self, game_id: str) -> set[str]:
        """Who took their place in the game's rematch so far (the game gone: nobody)."""
        return _claims(self.client.hkeys(keys.game_key(game_id)))

    def close_rematch_claims(self, game_id: str) -> set[str] | None:
        """Close the game's rematch claims: who took their place in time; None when the game
        is gone, and with it who claimed."""
        fields = self._close_rematch_claims(keys=[keys.game_key(game_id)])
        return _claims(fields) if fields else None  # a game's hash always has fields

    def rating_basis(self, game_id: str, read: bytes) -> bytes:
        """The ratings a finished rated game is rated from: the first rater's ``read``, kept in
        the game's hash, so that a rater after a crash, or one at the same time, rates the
        players left against the same ratings and not against ones this game already moved.
        A game gone keeps nothing: ``read`` itself."""
        kept = self._keep_rating_basis(keys=[keys.game_key(game_id)], args=[read])
        return kept if isinstance(kept, bytes) else read

    def ratings_done(self, game_id: str) -> None:
        """Every player of the finished rated game is rated: clear its mark."""
        self.client.hdel(keys.game_key(game_id), "rp")

    def log(self, game_id: str, after: int = 0) -> tuple[int, list[bytes]]:
        """The game's version and its log records from entry ``after + 1`` on, read together."""
        pipe = self.client.pipeline(transaction=False)
        pipe.hget(keys.game_key(game_id), "v")
        pipe.lrange(keys.log_key(game_id), after, -1)
        version, records = pipe.execute()
        if version is None:
            raise GameNotFound(game_id)
        return int(version), list(records)

    def holds_record(self, game_id: str, index: int, record: bytes) -> bool | None:
        """Whether the game's log holds ``record`` at ``index`` (entry ``index + 1``): a change
        whose compare-and-set failed with a Redis error is stored if its first record is there,
        and can no longer be if another is. None: the log does not reach ``index`` (yet), or
        the game is gone."""
        found = self.client.lindex(keys.log_key(game_id), index)
        return None if found is None else found == record

    def log_records(self, game_id: str, after: int = 0) -> list[bytes]:
        """The game's log records from entry ``after + 1`` on (none for a game that is gone)."""
        return cast("list[bytes]", self.client.lrange(keys.log_key(game_id), after, -1))

    def wakeups(
        self, on_wakeup: Callable[[bytes], None], on_subscribed: Callable[[list[str]], None]
    ) -> WakeupSubscriber:
        """Subscriptions to followed games' wake-ups, each on the node that holds the game (see
        :mod:`.subscriber`): ``on_wakeup`` gets each message, ``on_subscribed`` the games whose
        subscription now stands (what they did before it is to be read from the log)."""
        return WakeupSubscriber(self.client, on_wakeup, on_subscribed)

    def versions_and_records(
        self, games: Sequence[tuple[str, int]]
    ) -> list[tuple[int | None, bytes | None]]:
        """For each ``(game_id, n)``: the game's version (None: gone) and its log record of
        version ``n`` (None for 0, or when the log lacks it), in one round trip per node."""
        pipe = self.client.pipeline(transaction=False)
        for game_id, n in games:
            pipe.hget(keys.game_key(game_id), "v")
            pipe.lindex(keys.log_key(game_id), max(n - 1, 0))
        replies = pipe.execute()
        return [
            (None if version is None else int(version), record if n else None)
            for (_, n), version, record in zip(games, replies[::2], replies[1::2], strict=True)
        ]

    def game_keys(self, game_id: str) -> list[bytes]:
        """Every key of one game (tests, memory benchmark): SCAN within the game's prefix."""
        pattern = keys.game_key(game_id).replace("{", "\\{").replace("}", "\\}")
        found = (
            [keys.game_key(game_id).encode()] if self.client.exists(keys.game_key(game_id)) else []
        )
        found += list(self.client.scan_iter(match=pattern + ":*"))
        return found


def _record(
    game_id: str,
    fields: dict[bytes, bytes],
    kept: KeptResponse | None = None,
    rate_count: int = 0,
    rate_reset: int = 0,
    presence: dict[bytes, bytes] | None = None,
) -> GameRecord:
    seats = fields.get(b"t", b"")
    return GameRecord(
        game_id=game_id,
        version=int(fields[b"v"]),
        state=fields[b"s"],
        host_digest=fields.get(b"h", b""),
        seat_digests=tuple(seats[i : i + DIGEST_SIZE] for i in range(0, len(seats), DIGEST_SIZE)),
        table=fields.get(b"x", b""),
        kept=kept,
        table_digest=fields.get(b"m", b""),
        ratings_pending=b"rp" in fields,
        rematch=fields.get(b"rm", b""),
        rate_count=rate_count,
        rate_reset=rate_reset,
        presence=presence,
    )


def _read_reply(reply: Any) -> Any:
    """A pipelined read's reply; its error raised."""
    if isinstance(reply, Exception):
        raise reply
    return reply


#: What a Redis that refuses every write says (full under ``noeviction``, or a replica after a
#: failover), as such or inside a script's error.
WRITES_REFUSED = ("OOM command not allowed", "READONLY", "read only replica")


def _write_reply(reply: Any) -> Any:
    """A pipelined write's reply riding on a read: None when Redis refuses writes (the read
    stands), any other error raised."""
    if isinstance(reply, redis.ResponseError):
        if isinstance(reply, redis.exceptions.OutOfMemoryError | redis.exceptions.ReadOnlyError):
            return None
        if any(refusal in str(reply) for refusal in WRITES_REFUSED):
            return None
    return _read_reply(reply)


def _due_arg(due: int | None) -> int | str:
    return "" if due is None else due


def _claims(fields: Any) -> set[str]:
    """The rematch claims among a game hash's field names."""
    return {f.decode()[3:] for f in fields if isinstance(f, bytes) and f.startswith(b"rc:")}
