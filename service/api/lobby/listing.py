"""The lobby's listing: the newest public tables with open seats, read a page at a time."""

from __future__ import annotations

from typing import Any

from service.rules.log import rfc3339
from service.seating import SeatKind

from ..records import DECODED, table_of
from ..store_access import store
from .schemas import MAX_LISTED

#: Listed tables read in one round trip.
PAGE = 2 * MAX_LISTED
#: The most listed tables one listing reads: a filter that fits none of them has its answer
#: (empty) after that many, however full the lobby. Anyone may list, so this bounds what one
#: anonymous request costs: about a quarter of a second of a worker for 1000 tables.
MAX_SCANNED = 5 * PAGE


def tables(query: dict[str, Any]) -> list[dict[str, Any]]:
    """Listed tables that fit ``query`` (preset, players, turn_seconds), newest first, at most
    ``MAX_LISTED``: read a page at a time, so that a filter finds its tables behind any number
    of newer ones of other kinds, up to ``MAX_SCANNED``. Tables that are gone or full leave
    the lobby as the listing meets them."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    below: float | None = None  # each read starts after the last table read, by its time
    skip = 0  # the tables listed at ``below`` read already
    for _ in range(MAX_SCANNED // PAGE):
        page = store().lobby.page(below, skip, PAGE)
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


def _fitting(query: dict[str, Any], ids: list[str], stale: list[str]) -> list[dict[str, Any]]:
    """The entries of the tables ``ids`` that fit ``query``; ``stale`` gets those gone or full."""
    out: list[dict[str, Any]] = []
    if not ids:
        return out
    for game_id, record in zip(ids, store().peek(ids), strict=True):
        if record is None:
            stale.append(game_id)
            continue
        state = DECODED.peek(record.state)
        table = table_of(record, state, keep=False)
        if table.full:
            stale.append(game_id)
        elif _fits(query, state.rules.preset, state.n_players, table.turn_seconds):
            out.append(_entry(game_id, state, table))
    return out


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
