"""The steps every game view shares: authenticate, load, check preconditions, save, respond.

Views call :func:`load_game` then either answer from the loaded state or hand an engine call
to :func:`commit`. Nothing here knows a rule; the engine (``service.rules``) decides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from flask import Response, current_app, url_for

from service import rules
from service.store import (
    GameNotFound,
    GameRecord,
    IdempotentReplay,
    KeptResponse,
    VersionConflict,
)

from .observability import record_cas_conflict, record_move
from .problems import ApiError
from .store_access import store
from .web import bearer_token, if_match_ok, json_response, request_idempotency_key

Need = Literal["seat", "host"] | None
UNAUTHORIZED_HEADERS = {"WWW-Authenticate": 'Bearer realm="mexican-train"'}


class Replay(Exception):
    """A kept idempotent response must be returned instead of running the view."""

    def __init__(self, kept: KeptResponse) -> None:
        super().__init__("replay")
        self.kept = kept


@dataclass
class Loaded:
    record: GameRecord
    state: rules.GameState
    role: int | str | None
    token: str | None
    idem_key: str | None
    if_match: bool | None

    @property
    def seat(self) -> int | None:
        return self.role if isinstance(self.role, int) else None

    def view(self, version: int | None = None) -> dict[str, Any]:
        """The game view for the caller: a seat sees its hand, anyone else the public view."""
        return {
            "game_id": self.record.game_id,
            "version": self.record.version if version is None else version,
            **rules.game_view(self.state, self.seat),
        }


def not_found(game_id: str) -> ApiError:
    return ApiError(404, "game_not_found", f"There is no game {game_id!r} (or it expired).")


def load_game(game_id: str, need: Need = None, *, mutating: bool = False) -> Loaded:
    token = bearer_token()
    if need is not None and token is None:
        raise ApiError(
            401, "missing_token", "This request needs a bearer token.", headers=UNAUTHORIZED_HEADERS
        )
    key = request_idempotency_key() if mutating else None
    try:
        record = store().load(game_id, token=token, idempotency_key=key)
    except GameNotFound:
        raise not_found(game_id) from None
    limit = current_app.config["RATE_LIMIT_PER_MINUTE"]
    if limit and record.rate_count > limit:
        raise ApiError(
            429,
            "rate_limited",
            f"More than {limit} requests a minute with this token on this game.",
            headers={"Retry-After": str(record.rate_reset)},
        )
    role = record.identify(token) if token is not None else None
    if token is not None and role is None:
        raise ApiError(
            401,
            "invalid_token",
            "The token is not one of this game's.",
            headers=UNAUTHORIZED_HEADERS,
        )
    if need == "seat" and not isinstance(role, int):
        raise ApiError(403, "not_a_seat", "Only a seat token may do this.")
    if need == "host" and role != "host":
        raise ApiError(403, "not_host", "Only the host token may do this.")
    if record.kept is not None:
        raise Replay(record.kept)
    match = if_match_ok(record.version) if mutating else None
    if match is False:
        raise stale(record.version)
    return Loaded(record, rules.loads(record.state), role, token, key, match)


def stale(version: int) -> ApiError:
    return ApiError(
        412,
        "stale_version",
        f"The game is at version {version}; reload it and try again.",
        headers={"ETag": f'"{version}"'},
        extra={"version": version},
    )


def commit(g: Loaded, action: Callable[[rules.GameState], list[rules.Event]]) -> Response:
    """Run an engine action, store the new state with compare-and-set, answer with the view.

    An engine refusal raises before anything is written. A lost race is 412 with If-Match and
    409 without: never retried blindly, since the move was judged against an old state.
    """
    events = action(g.state)
    version = g.record.version + 1
    body = g.view(version)
    body["events"] = rules.visible_events(events, g.seat)
    payload = orjson.dumps(body)
    kept = KeptResponse(200, payload) if g.idem_key is not None else None
    try:
        store().save(
            g.record.game_id,
            g.record.version,
            rules.dumps(g.state),
            kept=kept,
            token=g.token,
            idempotency_key=g.idem_key,
        )
    except VersionConflict as conflict:
        record_cas_conflict()
        if g.if_match:
            raise stale(conflict.current) from None
        raise ApiError(
            409,
            "version_conflict",
            "Another action on this game was applied first; reload and try again.",
            extra={"version": conflict.current},
        ) from None
    except IdempotentReplay as replay:
        return replay_response(replay.kept)
    except GameNotFound:
        raise not_found(g.record.game_id) from None
    record_move()
    return json_response(payload, version=version)


def replay_response(kept: KeptResponse) -> Response:
    """The first response to an Idempotency-Key, byte for byte, marked as a replay."""
    body = orjson.loads(kept.body)
    version = body.get("version")
    headers = {"Idempotent-Replayed": "true"}
    if kept.status == 201:
        headers["Location"] = url_for("games.Game", game_id=body["game_id"])
    return json_response(
        kept.body,
        kept.status,
        version=version if isinstance(version, int) else None,
        headers=headers,
    )
