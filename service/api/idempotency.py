"""``Idempotency-Key``: parsing the header, binding it to one request, and the one replay path.

Whoever finds a response kept for the key (the game load, the compare-and-set save, the keyed
``POST /games``) raises :class:`~service.store.IdempotentReplay`; :func:`handle_replay`, the
app's one handler for it, answers with the first response byte for byte.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import orjson
from flask import Response, request, url_for

from service.store import IdempotentReplay

from .codes import Problem
from .problems import ApiError
from .web import json_response

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_IDEMPOTENCY_KEY = 255
# The key of POST /games (and of the other requests no token scopes whose answer holds a
# credential: a seek, POST /players, a join, a transfer's claim) is global, or scoped by an
# invite or a ticket that a group shares, so it must be unguessable: 22 characters carry 128
# bits in base64url, and a UUID has 36.
MIN_CREATE_KEY = 22

# RFC 8941 sf-string: printable ASCII between quotes, with only \" and \\ escaped.
_SF_STRING = re.compile(r'"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"')
# A bare key, as most APIs take it (a UUID, base64, hex): visible ASCII without a quote. An
# RFC 8941 token must start with a letter, which would refuse most UUIDs; a bare key need not.
_BARE_KEY = re.compile(r"[\x21\x23-\x7e]+")

PARAMETERS: dict[str, dict[str, Any]] = {
    "IdempotencyKey": {
        "name": HEADER,
        "in": "header",
        "required": False,
        "description": (
            "A bare key (`9b2f8c4e-3a71-...`: visible ASCII, no quote) or the same as an RFC 8941 "
            'string (`"9b2f8c4e-3a71-..."`), the same key either way. A retry of the same '
            "request (same key, token, endpoint and body) returns the first response (kept "
            "24 h) and applies nothing; the same key on another request is judged afresh. "
            "The answers to `POST /games`, a seek, `POST /players`, a join and a transfer's "
            "claim hold tokens and no token scopes their key (an invite or a ticket others may "
            f"hold does, at most): there the key must have at least {MIN_CREATE_KEY} characters "
            "(128 random bits, e.g. a UUID), else `400 short_idempotency_key`."
        ),
        "schema": {"type": "string"},
    },
}


def idempotency_key() -> str | None:
    """``Idempotency-Key`` as an RFC 8941 sf-string (``"abc"``) or bare (``abc``), the same key
    either way; else 400."""
    raw = request.headers.get(HEADER)
    if raw is None:
        return None
    raw = raw.strip()
    m = _SF_STRING.fullmatch(raw)
    if m:
        key = m.group(1).replace('\\"', '"').replace("\\\\", "\\")
    elif _BARE_KEY.fullmatch(raw):
        key = raw
    else:
        key = ""
    if not key or len(key) > MAX_IDEMPOTENCY_KEY:
        raise ApiError(
            Problem.MALFORMED_IDEMPOTENCY_KEY,
            "Idempotency-Key must be 1 to 255 visible ASCII characters, bare (f3a9c0) or as a "
            'quoted string ("f3a9c0").',
        )
    return key


def request_idempotency_key(min_length: int = 1) -> str | None:
    """The Idempotency-Key bound to this request (its path and body, JSON key order aside).

    A key names one request: the same key on another endpoint or with another body (a client
    reusing one key for every deal, or someone guessing another's key) is a new request, never
    a replay of a different answer. A key shorter than ``min_length`` is refused (400)."""
    key = idempotency_key()
    if key is None:
        return None
    if len(key) < min_length:
        raise ApiError(
            Problem.SHORT_IDEMPOTENCY_KEY,
            f"The Idempotency-Key of this request must have at least {min_length} characters "
            "(128 random bits, e.g. a UUID): anyone who guesses it with the same body gets the "
            "answer, which holds a credential (a token, an invite or a secret).",
        )
    data = request.get_data(cache=True)
    try:
        canonical = orjson.dumps(orjson.loads(data), option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        # Empty, not JSON, or nested deeper than orjson writes (it reads 1,024 levels and
        # writes 254): the bytes themselves name the request, and validation refuses it.
        canonical = data
    digest = hashlib.sha256(request.path.encode() + b"\n" + canonical).hexdigest()
    return f"{key}\n{digest}"


#: The endpoints whose first 201 may name the game it made in ``Location``: a creation, and a
#: seek that made its table (a join, a claim or a seek at a table that was there already
#: answers 201 for a seat, and names none).
CREATES, SEEKS = "games.Games", "lobby.Seek"
#: The endpoint whose 201 names the player it made.
NEW_PLAYER = "players.Players"
#: The endpoint whose every 201 (a place claimed in the next game) names that game.
REMATCH = "games.Rematch"


def _made_a_game(body: dict[str, Any]) -> bool:
    """Whether the kept 201 names a game: one it made, or the next game a rematch claim took
    a place in (only the seek that made its table is given the table token)."""
    if "game_id" not in body:
        return False
    if request.endpoint in (CREATES, REMATCH):
        return True
    return request.endpoint == SEEKS and "table_token" in body


def _made(body: dict[str, Any]) -> str | None:
    """Where the kept 201 named what it made, as its first answer did."""
    if _made_a_game(body):
        return url_for("games.Game", game_id=body["game_id"])
    if request.endpoint == NEW_PLAYER and "player_id" in body:
        return url_for("players.OnePlayer", player_id=body["player_id"])
    return None


def handle_replay(replay: IdempotentReplay) -> Response:
    """The first response to an Idempotency-Key, byte for byte, marked as a replay."""
    kept = replay.kept
    body = orjson.loads(kept.body)
    version = body.get("version")
    headers = {REPLAYED_HEADER: "true"}
    where = _made(body) if kept.status == 201 else None
    if where is not None:
        headers["Location"] = where
    return json_response(
        kept.body,
        kept.status,
        version=version if isinstance(version, int) else None,
        headers=headers,
    )
