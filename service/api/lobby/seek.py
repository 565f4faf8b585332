"""Quick play: a seek seats its player at the oldest table of its kind with a free seat, or
makes one. The seat comes from one script over the seek bucket (``Lobby.claim``): concurrent
seeks on any number of instances are served one after another, and a table never has more
seekers than seats. Then the seat is taken through the game transaction, like a join."""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import time
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import redis
from flask import Response

from service import rules
from service.rules.log import TICK_MS, By, Kind, Record, seat_events
from service.seating import Listing, Seat, SeatKind, Table, open_seat_name
from service.store import GameIdTaken
from service.store.tokens import hash_token, new_game_id, new_token

from ..codes import Problem
from ..games.creation import player_of, turn_seconds_of
from ..idempotency import MIN_CREATE_KEY, request_idempotency_key
from ..owed import owe
from ..problems import ApiError
from ..store_access import store
from ..transaction import (
    Decision,
    Loaded,
    NewGame,
    create,
    keep_answer,
    now_ms,
    reopen_if_held,
    replay_unscoped,
    server_moves,
    transact,
    with_seat_token,
)

#: Claims a seek makes before it gives up (a claimed seat can go to a bot meanwhile).
SEEK_ATTEMPTS = 6
#: How long a seeker waits for a table another seek is making at that moment.
MADE_WAIT_SECONDS = 3.0


@dataclass(frozen=True)
class Seek:
    name: str
    preset: str
    players: int
    turn_seconds: int
    rated: bool
    fill_after: int | None
    player: str | None

    @classmethod
    def of(cls, body: dict[str, Any]) -> Seek:
        player = player_of(body["player_token"]).player_id if "player_token" in body else None
        if body["rated"] and player is None:
            raise ApiError(Problem.UNRATED_SEAT, "A rated seek needs a player_token.")
        # Judged before any seat is claimed: a table the rules refuse (the classic preset is
        # for 2 to 10 players) would otherwise be claimed in its bucket and never made.
        rules.resolve_rules(body["preset"], None, body["players"])
        return cls(
            body["name"],
            body["preset"],
            body["players"],
            turn_seconds_of(body["turn_seconds"]),
            body["rated"],
            body["fill_with_bots_after"],
            player,
        )

    @property
    def bucket(self) -> str:
        """Seeks of one bucket share tables: the same rules, player count, clock and rating.
        Not the bot fill: a table fills at the earliest time one of its seekers asked for."""
        return f"{self.preset}|{self.players}|{self.turn_seconds}|{int(self.rated)}"

    def fill_at(self, now: int, table_fill_at: int | None) -> int | None:
        """When the table's open seats go to bots once this seek sits there."""
        if self.fill_after is None:
            return table_fill_at
        mine = now + self.fill_after * 1000
        return mine if table_fill_at is None else min(table_fill_at, mine)


def seek(body: dict[str, Any]) -> Response:
    """The seeker's seat. With an Idempotency-Key the answer is kept as a created game's is
    (sealed: it holds the seat's token), so a retry after a lost answer gets that seat, not
    a second one."""
    wanted = Seek.of(body)
    # No caller identity scopes the key and the answer holds a token: as for POST /games.
    key = request_idempotency_key(MIN_CREATE_KEY)
    replay_unscoped(key)
    seated = _seat(wanted, claim_base(key))
    # If a concurrent request with the same key was seated first, its answer stands, and the
    # seat taken here is left to the table's clock and bot fill, as a leaver's is.
    keep_answer(key, seated)
    return seated


def claim_base(key: str | None) -> str:
    """What names this seek's claims, one per attempt: a digest of its Idempotency-Key (bound
    to the request already), so that a retry of a seek answered 503 finds the seat it claimed,
    else a random id, which only a resend of the same claim uses."""
    if key is None:
        return secrets.token_hex(16)
    return hashlib.sha256(b"seek-claim\n" + key.encode()).hexdigest()[:32]


def _seat(wanted: Seek, base: str) -> Response:
    for attempt in range(SEEK_ATTEMPTS):
        fresh = new_game_id()
        claim_id = f"{base}.{attempt}"
        # A retry starts at attempt 0, and its first try's claim may be a later attempt's.
        others = [f"{base}.{n}" for n in range(SEEK_ATTEMPTS) if n != attempt]
        game_id, seat, made = store().lobby.claim(
            wanted.bucket,
            fresh,
            wanted.players,
            now_ms(),
            wanted.player,
            claim_id=claim_id,
            others=others,
        )
        if seat < 0:
            raise already_seated(game_id)
        seated = _sit_or_forget(game_id, seat, made, wanted, claim_id)
        if seated is not None:
            return seated
    raise ApiError(
        Problem.SEAT_TAKEN, "Every seat this seek was given went to someone else; seek again."
    )


def _sit_or_forget(
    game_id: str, seat: int, made: bool, wanted: Seek, claim_id: str
) -> Response | None:
    """Take the seat the claim ``claim_id`` gave (making the table first when it is new); a
    seat not taken, for whatever reason, no longer counts its player as seated at that table."""
    lobby = store().lobby
    tokens: list[bytes] = []  # the digest of each seat token offered, the last one tried
    try:
        seated: Response | None
        if made:
            try:
                seated = make_table(game_id, wanted, tokens)
            except GameIdTaken:  # made by a try of this seek answered 503, whose claim this holds
                made = False
                seated = take_seat(game_id, seat, wanted, tokens)
        else:
            seated = take_seat(game_id, seat, wanted, tokens)
    except Exception as err:
        if isinstance(err, redis.RedisError) and tokens:
            reopen_later(game_id, tokens[-1])
        with contextlib.suppress(redis.RedisError):
            if made:  # a table not made stays out of its bucket: no later seek waits for it
                lobby.close(wanted.bucket, game_id)
            lobby.forget(wanted.bucket, game_id, wanted.player)
            if not made:  # the seat is still open: the next seek takes it (else its table
                lobby.give_back(wanted.bucket, claim_id)  # waits for nobody, out of the bucket)
        raise
    if seated is None:
        lobby.forget(wanted.bucket, game_id, wanted.player)
    return seated


def reopen_later(game_id: str, digest: bytes) -> None:
    """After a sit, or a table's making, that failed with a Redis error (answered 503): Redis
    may run it all the same, seating the seeker under a token nobody was given. Once Redis
    answers, that seat opens again if it holds the token (and the table is listed again), so
    that the 503 stands for a seek that changed nothing; the seeker's retry is seated anew."""
    games = store()
    reopen = partial(reopen_if_held, games, game_id, digest, open_seat_name)
    owe(f"reopen:{game_id}:{digest.hex()[:16]}", reopen)


def take_seat(
    game_id: str, seat: int, wanted: Seek, tokens: list[bytes] | None = None
) -> Response | None:
    """Sit at ``seat`` of a seek table (waiting a moment for a table another seek is still
    making); None when that seat is gone (to a bot) or the table is. ``tokens``: the digest
    of each seat token offered is added to it."""
    deadline = time.monotonic() + MADE_WAIT_SECONDS
    offered = [] if tokens is None else tokens
    while True:
        try:
            return transact(
                game_id, lambda g: sit(g, seat, wanted, offered), keyed=False, attempts=8
            )
        except ApiError as err:
            if err.kind is Problem.SEAT_TAKEN:  # no seat is open: full, or given to bots
                store().lobby.close(wanted.bucket, game_id)
                return None
            if err.kind is not Problem.GAME_NOT_FOUND:
                raise
            if time.monotonic() > deadline:
                store().lobby.close(wanted.bucket, game_id)
                return None
            time.sleep(0.05)


def sit(g: Loaded, claimed: int, wanted: Seek, offered: list[bytes] | None = None) -> Decision:
    """Sit at the claimed seat, or at the first one open: a seat given back by a seek that
    failed is claimed again by number, maybe after a later seat's seeker took its own.
    ``offered``: the new token's digest is added to it."""
    not_seated(g, wanted)
    seat = open_seat(g, claimed)
    record = Record(Kind.JOIN, By.PLAYER, now_ms(), seat, text=wanted.name)
    g.state.players[seat] = wanted.name
    g.table.seats[seat] = Seat(SeatKind.PERSON, player=wanted.player)
    listing = g.table.listing
    g.table.listing = replace(listing, fill_at_ms=wanted.fill_at(record.at_ms, listing.fill_at_ms))
    token = new_token()
    digests = with_seat_token(g, seat, token)
    if offered is not None:
        offered.append(digests[seat])

    def answer(g: Loaded, version: int, _: Any) -> tuple[int, dict[str, Any]]:
        return 201, {"game_id": g.record.game_id, "version": version, "seat": seat, "token": token}

    return Decision(record, seat_events(record), digests, answer=answer, secret=True, takes=seat)


def not_seated(g: Loaded, wanted: Seek) -> None:
    """The seeker's claims forget a seek answered 503 whose change was stored all the same (a
    slow Redis ran it late), and its seat is given back: the table, first in line again, must
    not seat that player twice."""
    if wanted.player is not None and any(s.player == wanted.player for s in g.table.seats):
        raise already_seated(g.record.game_id)


def already_seated(game_id: str) -> ApiError:
    return ApiError(
        Problem.ALREADY_SEATED,
        "This player already has a seat at the table this seek would give.",
        extra={"game_id": game_id},
    )


def open_seat(g: Loaded, claimed: int) -> int:
    seats = g.table.seats
    if claimed < len(seats) and seats[claimed].kind == SeatKind.OPEN:
        return claimed
    found = next((n for n, seat in enumerate(seats) if seat.kind == SeatKind.OPEN), None)
    if found is None:
        raise ApiError(Problem.SEAT_TAKEN, "That seat was taken meanwhile.")
    return found


def make_table(game_id: str, wanted: Seek, offered: list[bytes] | None = None) -> Response:
    """The seek table ``game_id`` (claimed already), the seeker in seat 0, the rest open.
    ``offered``: the digest of the seeker's token is added to it."""
    created = now_ms()
    names = [wanted.name] + [open_seat_name(i) for i in range(1, wanted.players)]
    state = rules.new_game(names, wanted.preset)
    seats = [Seat(SeatKind.PERSON, player=wanted.player)]
    seats += [Seat(SeatKind.OPEN) for _ in range(1, wanted.players)]
    table = Table(seats, auto_deal=True, turn_seconds=wanted.turn_seconds)
    fill_at = wanted.fill_at(created, None)
    table.listing = Listing(public=True, rated=wanted.rated, seek=wanted.bucket, fill_at_ms=fill_at)
    table.created_ms, table.tick_ms = created, TICK_MS
    creation = Record(Kind.CREATE, By.HOST, created, state=rules.dumps(state), tick_ms=TICK_MS)
    applied = server_moves(state, table, creation, [], 1)
    tokens: list[str | None] = [new_token()] + [None] * (wanted.players - 1)
    if offered is not None:
        offered.append(hash_token(tokens[0] or ""))
    game = NewGame(
        state,
        table,
        applied,
        tokens,
        [None] * wanted.players,
        new_token(),
        new_token(),
        game_id,
        present=0,  # the seeker's own request: seat 0 is at the table
    )

    def answer(made: str) -> dict[str, Any]:
        # The version is the ETag's: a replay of the kept answer takes its ETag from the body.
        return {
            "game_id": made,
            "version": len(applied),
            "seat": 0,
            "token": tokens[0],
            "table_token": game.table_token,
        }

    return create(game, None, answer, lambda made: f"/api/v1/games/{made}")
