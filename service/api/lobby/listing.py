"""The lobby's listing: the newest public tables with open seats that fit its filters, read a
page at a time from the lobby's set for those filters."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from service.rules import GameState
from service.rules.log import rfc3339
from service.seating import SeatKind, Table
from service.store.lobby import Filter, TableKind

from ..records import DECODED, lobby_kind, table_of
from ..store_access import store
from .schemas import MAX_LISTED

#: Listed tables read in one round trip: those a listing shows, when none of them has left.
PAGE = MAX_LISTED
#: The most listed tables one listing reads. Each read is of tables that fit its filters
#: (the lobby keeps a set per combination of filters), so it goes on only past tables gone or
#: full, which it takes out of the lobby; this bounds what one anonymous request costs when
#: many expired at once. Also the most tables listed without their kind that one listing
#: sorts into the sets (:func:`sort_unsorted`).
MAX_SCANNED = 10 * PAGE
#: Tables of any kind each listing also looks at in turn, round the whole lobby: one gone
#: behind more open tables than any listing reads leaves the lobby all the same.
ROUND = 10


def tables(query: dict[str, Any]) -> list[dict[str, Any]]:
    """Listed tables that fit ``query`` (preset, players, turn_seconds), newest first, at most
    ``MAX_LISTED``, read from the lobby's set for those filters a page at a time. Tables that
    are gone or full leave the lobby as the listing meets them."""
    sort_unsorted()
    sweep()
    wanted = Filter(query.get("preset"), query.get("players"), query.get("turn_seconds"))
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    below: float | None = None  # each read starts after the last table read, by its time
    skip = 0  # the tables listed at ``below`` read already
    for _ in range(MAX_SCANNED // PAGE):
        page = store().lobby.page(wanted, below, skip, PAGE)
        fresh = [game_id for game_id, _ in page if game_id not in seen]  # one listed meanwhile
        seen.update(fresh)
        stale: list[str] = []
        out += _fitting(query, fresh, stale)
        store().lobby.remove(*stale)
        if len(page) < PAGE or len(out) >= MAX_LISTED:
            break
        last, gone = page[-1][1], set(stale)
        ties = sum(1 for game_id, listed in page if listed == last and game_id not in gone)
        skip = ties + (skip if below == last else 0)
        below = last
    return out[:MAX_LISTED]


def sort_unsorted() -> None:
    """List the tables listed without their kind (by a version of the service that kept one
    set for the whole lobby) in the sets of their kind, the newest first, up to
    ``MAX_SCANNED`` of them; gone or full ones leave the lobby. Once none is left, one read."""
    for _ in range(MAX_SCANNED // PAGE):
        page = store().lobby.unsorted(PAGE)
        if page:
            _sort(page)
        if len(page) < PAGE:
            return


def sweep() -> None:
    """Take the next ``ROUND`` tables of the lobby's round out of it if gone or full."""
    ids = store().lobby.round(ROUND)
    stale: list[str] = []
    for game_id, record in zip(ids, store().peek(ids), strict=True):
        if record is None or table_of(record, DECODED.peek(record.state), keep=False).full:
            stale.append(game_id)
    store().lobby.remove(*stale)


def _sort(page: list[tuple[str, float]]) -> None:
    kinds: dict[TableKind, dict[str, float]] = {}
    stale: list[str] = []
    listed = dict(page)
    for game_id, state, table in _open_tables(list(listed), stale):
        kinds.setdefault(lobby_kind(state, table), {})[game_id] = listed[game_id]
    for kind, listed_at in kinds.items():
        store().lobby.add(kind, listed_at)
    store().lobby.remove(*stale)


def _fitting(query: dict[str, Any], ids: list[str], stale: list[str]) -> list[dict[str, Any]]:
    """The entries of the tables ``ids`` that fit ``query``; ``stale`` gets those gone or full."""
    return [
        _entry(game_id, state, table)
        for game_id, state, table in _open_tables(ids, stale)
        if _fits(query, state.rules.preset, state.n_players, table.turn_seconds)
    ]


def _open_tables(ids: list[str], stale: list[str]) -> Iterator[tuple[str, GameState, Table]]:
    """The tables ``ids`` that are stored and have a seat open, each with its state and table,
    in order; ``stale`` gets those gone or full."""
    if not ids:
        return
    for game_id, record in zip(ids, store().peek(ids), strict=True):
        if record is None:
            stale.append(game_id)
            continue
        state = DECODED.peek(record.state)
        table = table_of(record, state, keep=False)
        if table.full:
            stale.append(game_id)
        else:
            yield game_id, state, table


def _fits(query: dict[str, Any], preset: str, players: int, turn_seconds: int) -> bool:
    wanted = {"preset": preset, "players": players, "turn_seconds": turn_seconds}
    return all(query[k] == v for k, v in wanted.items() if k in query)


def _entry(game_id: str, state: Any, table: Any) -> dict[str, Any]:
    filled = [state.players[n] for n, seat in enumerate(table.seats) if seat.kind != SeatKind.OPEN]
    return {
        "game_id": game_id,
        "players": filled,
        "open_seats": sum(1 for seat in table.seats if seat.kind == SeatKind.OPEN),
        "rules": state.rules.to_json(),
        "turn_seconds": table.turn_seconds,
        "rated": table.listing.rated,
        "created_at": rfc3339(table.created_ms),
    }
