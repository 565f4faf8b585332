"""Issuing and claiming seat transfer tickets (the store keeps them: service/store/transfers).

A claim gives the seat a new token and appends a ``transfer`` entry: the old token stops
working at once, on its open streams too (the entry revokes it, as a seat change does), so a
seat is never held on two devices.
"""

from __future__ import annotations

import secrets
from typing import Any

from flask import Response, request

from service.rules import RoleKind, Status
from service.rules.log import By, Kind, Record, rfc3339
from service.store import keys
from service.store.tokens import hash_token, new_token
from service.store.transfers import TRANSFER_SECONDS, Claim, Transfer

from ..codes import Problem
from ..etag import check_if_match
from ..limits import PerAddress, limit_address
from ..problems import ApiError
from ..store_access import store
from ..transaction import (
    Decision,
    Loaded,
    answered_once,
    load_game,
    now_ms,
    scoped_key,
    transact,
    with_seat_token,
)
from ..web import json_response

#: Tickets start with this, which no token, invite or stream ticket does.
TICKET_PREFIX = "tt."
#: Keys a claim's Idempotency-Key by its ticket (the claimant has no token yet): only who holds
#: the ticket finds, and can unseal, the kept answer.
CLAIM_SCOPE = "transfer\n"


def issue(game_id: str) -> Response:
    """A ticket for the caller's seat (its seat token only); asked again with the same
    Idempotency-Key, the same ticket, once the token is known to hold the seat still."""
    g = load_game(game_id, RoleKind.SEAT)
    if g.seat is None or g.token is None:
        raise ApiError(Problem.NOT_A_SEAT, "Only a seat's own token moves it to another device.")
    check_not_over(g)
    return answered_once(lambda: issued(g), ttl=TRANSFER_SECONDS)


def issued(g: Loaded) -> Response:
    # A ticket changes no version, but an If-Match the client sent is judged as on every other
    # request of a game (400 malformed, 412 stale): a precondition is never silently dropped.
    check_if_match(g.record.version)
    return json_response(new_ticket(g), 201)


def new_ticket(g: Loaded) -> dict[str, Any]:
    assert g.seat is not None and g.token is not None
    game_id, ticket = g.record.game_id, TICKET_PREFIX + secrets.token_urlsafe(24)
    store().transfers.issue(game_id, ticket, Transfer(g.seat, hash_token(g.token)))
    return {
        "ticket": ticket,
        "url": f"{request.host_url.rstrip('/')}/#/take/{game_id}/{ticket}",
        "expires_at": rfc3339(now_ms() + TRANSFER_SECONDS * 1000),
    }


def claim(game_id: str, ticket: str) -> Response:
    """Claim the ticket: the seat's new token, the old one revoked. With an Idempotency-Key
    the answer is kept (sealed: it holds the token), and a retry of a claim whose answer was
    lost gets it, where the spent ticket alone would answer 409 and the seat's new token
    would be lost with its old one revoked."""
    limit_address(PerAddress.JOIN)
    scope = CLAIM_SCOPE + ticket
    if scoped_key(scope) is not None:
        _replay_kept(game_id, scope)
    transfers = store().transfers
    outcome, moved = transfers.find(game_id, ticket)
    if outcome is Claim.SPENT:
        raise used()
    if moved is None:
        raise gone()
    spends = keys.transfer_key(game_id, ticket)
    try:
        return transact(game_id, lambda g: _moved(g, moved, spends), attempts=8, scope=scope)
    except ApiError as err:
        # A concurrent claim of this ticket won: its seat has another token now, and the
        # ticket was spent by the same compare-and-set that gave it.
        if (
            err.kind is Problem.TRANSFER_NOT_FOUND
            and transfers.find(game_id, ticket)[0] is Claim.SPENT
        ):
            raise used() from None
        raise


def _replay_kept(game_id: str, scope: str) -> None:
    """Raise the kept answer to this claim's Idempotency-Key, if there is one, before the
    ticket is read (an unknown game is left to the claim to answer, as without a key)."""
    try:
        load_game(game_id, mutating=True, scope=scope, mark=False)
    except ApiError as err:
        if err.kind is not Problem.GAME_NOT_FOUND:
            raise


def check_not_over(g: Loaded) -> None:
    """After the game its seats no longer move (as they no longer change): a rematch made of it
    holds the seats' tokens as they were, and a token moved here would not move there."""
    if g.state.status == Status.GAME_OVER:
        raise ApiError(
            Problem.GAME_OVER,
            "The game is over: its seats no longer move (move the seat in its rematch).",
        )


def _moved(g: Loaded, moved: Transfer, spends: str) -> Decision:
    check_not_over(g)
    seat = moved.seat
    if g.record.seat_digests[seat] != moved.digest:
        raise gone()  # the seat changed hands since the ticket was issued
    token = new_token()
    record = Record(Kind.TRANSFER, By.PLAYER, now_ms(), seat)

    def answer(g: Loaded, version: int, _: Any) -> tuple[int, dict[str, Any]]:
        name = g.state.players[seat]
        body = {"game_id": g.record.game_id, "seat": seat, "name": name, "token": token}
        return 201, {**body, "version": version}

    digests = with_seat_token(g, seat, token)
    return Decision(record, [], digests, answer=answer, secret=True, spends=spends, takes=seat)


def used() -> ApiError:
    return ApiError(Problem.TRANSFER_USED, "This transfer ticket was claimed already.")


def gone() -> ApiError:
    return ApiError(
        Problem.TRANSFER_NOT_FOUND,
        "There is no such transfer ticket: it expired, is not this game's, or its seat changed "
        "hands since.",
    )
