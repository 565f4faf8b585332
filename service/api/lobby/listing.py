"""The lobby's listing: the newest public tables with open seats, read in one round trip."""

from __future__ import annotations

from typing import Any

from service.rules.log import rfc3339
from service.seating import SeatKind

from ..records import DECODED, table_of
from ..store_access import store
from .schemas import MAX_LISTED


def tables(query: dict[str, Any]) -> list[dict[str, Any]]:
    """Listed tables that fit ``query`` (preset, players, turn_seconds), newest first; tables
    that are gone or full leave the lobby as the listing meets them."""
    ids = store().lobby.list(MAX_LISTED)
    out, stale = [], []
    for game_id, record in zip(ids, store().peek(ids), strict=True):
        if record is None:
            stale.append(game_id)
            continue
        state = DECODED.get(record.state)
        table = table_of(record, state)
        if table.full:
            stale.append(game_id)
        elif _fits(query, state.rules.preset, state.n_players, table.turn_seconds):
            out.append(_entry(game_id, state, table))
    store().lobby.remove(*stale)
    return out[:MAX_LISTED]


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
