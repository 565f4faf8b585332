"""Request and response bodies of the games resource (the game view, positions, scores)."""

from __future__ import annotations

from typing import Any

import marshmallow as ma

from service.bots.registry import BOTS, MAX_SEATS, too_many
from service.rules import FORMAT, MAX_NAME_LENGTH, MAX_SEED, PRESETS, Rules, Status
from service.rules.options import valid_name
from service.seating import MAX_TURN_SECONDS

from ..fields import ResponseSchema, StrictBool, StrictInt, component, one_of, out_tile
from ..moves.schemas import MoveSchema
from ..typed_schema import TILE, of_dataclass

#: Schemas of the document made from the engine's types (registered by the app factory).
COMPONENTS: dict[str, dict[str, Any]] = {
    "Tile": {**TILE, "description": "a tile: two pip numbers"},
    "Options": {
        **of_dataclass(Rules, leave_out=("preset",)),
        "description": "every option of the game, resolved (rules §10)",
    },
}

# A bound on the request's size, above every preset's player count: within it, the engine judges
# the count and its refusal (invalid_rules) says what the preset allows.
MAX_LISTED_PLAYERS = 20


_NAME_RULE = f"a name is 1 to {MAX_NAME_LENGTH} printable characters"
_SEAT_SHAPES = (
    'a name, {"name": ...}, {"name": ..., "bot": <level>}, {"name": ..., "player_token": ...} '
    'or {"open": true}'
)
_SEAT_KEYS = ({"name"}, {"name", "bot"}, {"name", "player_token"}, {"open"})


class SeatField(ma.fields.Field):  # type: ignore[type-arg]
    """A seat of ``players``: a person's name, ``{"name"}``, a durable player's seat
    ``{"name", "player_token"}``, a server bot ``{"name", "bot"}``, or an open seat
    ``{"open": true}``; always parsed to the object form."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        seat = {"name": value} if isinstance(value, str) else value
        if not isinstance(seat, dict) or set(seat) not in _SEAT_KEYS:
            raise ma.ValidationError(f"a seat is {_SEAT_SHAPES}")
        if "open" in seat:
            if seat["open"] is not True:
                raise ma.ValidationError('an open seat is {"open": true}')
            return seat
        if not valid_name(seat["name"]):
            raise ma.ValidationError(_NAME_RULE)
        if "bot" in seat and (not isinstance(seat["bot"], str) or seat["bot"] not in BOTS):
            raise ma.ValidationError(f"unknown bot level; the levels are {', '.join(BOTS)}")
        if "player_token" in seat and not isinstance(seat["player_token"], str):
            raise ma.ValidationError("player_token is the token POST /players gave")
        return seat


SEAT_SCHEMA = {
    "oneOf": [
        {"type": "string", "minLength": 1, "maxLength": MAX_NAME_LENGTH},
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": MAX_NAME_LENGTH},
                "bot": {"type": "string", "enum": list(BOTS)},
                "player_token": {"type": "string", "description": "a durable player's token"},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"open": {"const": True}},
            "required": ["open"],
            "additionalProperties": False,
        },
    ]
}


#: What a position document already holds; the other fields are table options, which a game
#: made from a position takes none of (a position does not carry them, API.md).
_IN_POSITION = frozenset({"players", "preset", "options", "seed"})


def _beside_position(field: str) -> str:
    if field in _IN_POSITION:
        return "a position carries its own players and rules"
    return "a game made from a position takes no table options"


class CreateGameSchema(ma.Schema):
    """Either ``players`` (with optional ``preset``, ``options``, ``seed`` and the table options)
    or ``position``."""

    players = ma.fields.List(
        SeatField(metadata=SEAT_SCHEMA),
        validate=ma.validate.Length(1, MAX_LISTED_PLAYERS),
        metadata={
            "description": f"the seats, seat 0 first: each {_SEAT_SHAPES}",
            "example": ["ann", {"name": "cpu", "bot": "planner"}, {"open": True}],
        },
    )
    auto_deal = StrictBool(
        metadata={"description": "deal each round by itself once every seat is filled"}
    )
    public = StrictBool(
        metadata={"description": "listed in the lobby while seats are open (default false)"}
    )
    rated = StrictBool(
        metadata={
            "description": "rate every seat at the end (openskill); every seat must then be a "
            "player (player_token) or a bot by the deal, and with `auto_deal` a player, a bot "
            "or open at creation (422 unrated_seat). A rated game takes no `seed`, and its "
            "host token sees no hidden tile (nor exports the position) until the game is over"
        }
    )
    turn_seconds = StrictInt(
        validate=ma.validate.Range(0, MAX_TURN_SECONDS),
        metadata={
            "description": "a person's time per turn (0: no clock); a late turn is played as "
            "the planner bot would"
        },
    )
    # Documented as the closed vocabulary it is; judged by the engine, whose refusal of another
    # value is the contract's `422 invalid_rules` (bad rules), not a body's validation_failed.
    preset = ma.fields.String(
        validate=ma.validate.Length(1, 40),
        metadata={
            "description": f"{PRESETS[0]} (default), {', '.join(PRESETS[1:-1])} or {PRESETS[-1]}",
            "enum": list(PRESETS),
        },
    )
    options = ma.fields.Dict(
        keys=ma.fields.String(validate=ma.validate.Length(1, 64)),
        metadata={"description": "rule options overriding the preset (docs/rules.md)"},
    )
    seed = StrictInt(
        validate=ma.validate.Range(0, MAX_SEED),
        metadata={
            "description": (
                "shuffle seed, for reproducible games (tests, tournaments, analysis). Anyone who "
                "knows or guesses the seed knows every hand and the boneyard: omit it for a game "
                "with anything at stake, and the server draws the randomness itself (a 128-bit "
                "deal secret that only the host's position shows). A rated game takes none."
            )
        },
    )
    position = ma.fields.Dict(
        metadata={"description": "start from a `mexican-train-position/1` document instead"}
    )

    @ma.validates_schema
    def one_way(self, data: dict[str, Any], **kwargs: Any) -> None:
        if "position" in data:
            extra = sorted(set(data) - {"position"})
            if extra:
                raise ma.ValidationError(_beside_position(extra[0]), field_name=extra[0])
        elif "players" not in data:
            raise ma.ValidationError("give players (or a position)", field_name="players")
        else:
            levels = [s["bot"] for s in data["players"] if isinstance(s, dict) and s.get("bot")]
            crowded = too_many(levels)
            if crowded is not None:
                raise ma.ValidationError(
                    f"at most {MAX_SEATS[crowded]} {crowded} bots a table", field_name="players"
                )


class SeatTokenSchema(ResponseSchema):
    seat = ma.fields.Integer(required=True)
    name = ma.fields.String(required=True)
    token = ma.fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "secret: this seat only (null for bot and open seats)"},
    )
    bot = one_of(BOTS, required=True, allow_none=True, metadata={"description": "bot level"})
    invite = ma.fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "an open seat's invite code, for POST /join (once)"},
    )
    invite_url = ma.fields.String(
        required=True, allow_none=True, metadata={"description": "a link to share the invite"}
    )


class RulesSchema(ResponseSchema):
    preset = one_of(PRESETS, required=True)
    options = component("Options", required=True, description="every option resolved")


def status_field() -> ma.fields.String:
    return one_of(Status, required=True)


class CreatedGameSchema(ResponseSchema):
    game_id = ma.fields.String(required=True)
    version = ma.fields.Integer(required=True)
    status = status_field()
    seats = ma.fields.List(ma.fields.Nested(SeatTokenSchema), required=True)
    host_token = ma.fields.String(
        required=True,
        metadata={
            "description": "secret, sees every hidden tile (a referee's credential; never give "
            "it to a seated player): deals, changes seats, exports the position"
        },
    )
    table_token = ma.fields.String(
        required=True,
        metadata={
            "description": "secret, sees only the public view: deals, changes seats, reads "
            "the history once the game is over (what a front end keeps for its creator)"
        },
    )
    rules = ma.fields.Nested(RulesSchema, required=True)


class PlayerSchema(ResponseSchema):
    seat = ma.fields.Integer(required=True)
    name = ma.fields.String(required=True)
    hand_size = ma.fields.Integer(required=True)
    score = ma.fields.Integer(required=True)
    marked = ma.fields.Boolean(required=True, metadata={"description": "its train is marked"})
    opened = ma.fields.Boolean(
        required=True, metadata={"description": "had its opening turn this round"}
    )
    bot = one_of(BOTS, required=True, allow_none=True, metadata={"description": "bot level"})
    open = ma.fields.Boolean(required=True, metadata={"description": "waiting for a player"})
    present = ma.fields.Boolean(
        required=True,
        metadata={
            "description": "the seat has an open stream or made a request within the last "
            "PRESENCE_SECONDS (default 30)"
        },
    )


class ClockSchema(ResponseSchema):
    turn_seconds = ma.fields.Integer(required=True, metadata={"description": "0: no clock"})
    deadline = ma.fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "RFC 3339 time the current turn runs out (null: none)"},
    )


class TrainSchema(ResponseSchema):
    id = ma.fields.String(required=True, metadata={"description": 'seat number or "mexican"'})
    owner = ma.fields.Integer(required=True, allow_none=True)
    tiles = ma.fields.List(
        out_tile(), required=True, metadata={"description": "oriented from the engine outwards"}
    )
    open_end = ma.fields.Integer(required=True, allow_none=True)
    marked = ma.fields.Boolean(required=True)
    started = ma.fields.Boolean(required=True, metadata={"description": "holds a tile"})


class TurnStateSchema(ResponseSchema):
    drawn = ma.fields.Boolean(
        required=True,
        metadata={"description": "the player on turn drew since the turn began (or their double)"},
    )
    tiles_played = ma.fields.Integer(required=True, metadata={"description": "this turn"})
    must_follow = ma.fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "the train of a double the player must follow, or null"},
    )


def winners_field() -> ma.fields.List[Any]:
    return ma.fields.List(
        ma.fields.Integer(),
        required=True,
        allow_none=True,
        metadata={"description": "the winning seats once the game is over, else null"},
    )


def legal_moves_field(when: str) -> ma.fields.List[Any]:
    """A seat's legal moves, sent to that seat alone so that it needs no legal-moves call."""
    return ma.fields.List(
        ma.fields.Nested(MoveSchema),
        metadata={
            "description": f"exactly what legal-moves lists, each a `Move` body; only for {when}"
        },
    )


class GameViewSchema(ResponseSchema):
    game_id = ma.fields.String(required=True)
    version = ma.fields.Integer(required=True, metadata={"description": "also the ETag"})
    status = status_field()
    round = ma.fields.Integer(required=True, metadata={"description": "1-based"})
    rounds = ma.fields.Integer(required=True, metadata={"description": "the game's rounds"})
    engine = ma.fields.Integer(required=True, allow_none=True)
    turn = ma.fields.Integer(required=True, allow_none=True)
    starter = ma.fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "the seat that started this round (null before the deal)"},
    )
    players = ma.fields.List(ma.fields.Nested(PlayerSchema), required=True)
    trains = ma.fields.List(ma.fields.Nested(TrainSchema), required=True)
    open_doubles = ma.fields.List(ma.fields.String(), required=True)
    boneyard_size = ma.fields.Integer(required=True)
    rules = ma.fields.Nested(RulesSchema, required=True)
    turn_state = ma.fields.Nested(TurnStateSchema, required=True)
    winners = winners_field()
    clock = ma.fields.Nested(ClockSchema, required=True)
    hand = ma.fields.List(out_tile(), metadata={"description": "only for the caller's seat"})
    legal_moves = legal_moves_field("the caller's seat, while it is its turn in a running round")


class ActionResultSchema(GameViewSchema):
    events = ma.fields.List(
        component("Event"),
        required=True,
        metadata={"description": "what the action did, as the caller may see it"},
    )


class LegalMovesSchema(ResponseSchema):
    version = ma.fields.Integer(required=True)
    seat = ma.fields.Integer(required=True)
    turn = ma.fields.Integer(required=True, allow_none=True)
    moves = ma.fields.List(
        ma.fields.Nested(MoveSchema),
        required=True,
        metadata={"description": "each a `Move` body, ready to be sent to `/moves`"},
    )


class ScorePlayerSchema(ResponseSchema):
    seat = ma.fields.Integer(required=True)
    name = ma.fields.String(required=True)
    rounds = ma.fields.List(ma.fields.Integer(), required=True)
    total = ma.fields.Integer(required=True)
    zero_rounds = ma.fields.Integer(required=True)


class ScoreSchema(ResponseSchema):
    game_id = ma.fields.String(required=True)
    version = ma.fields.Integer(required=True)
    status = status_field()
    round = ma.fields.Integer(required=True)
    rounds = ma.fields.Integer(required=True, metadata={"description": "the game's rounds"})
    players = ma.fields.List(ma.fields.Nested(ScorePlayerSchema), required=True)
    totals = ma.fields.List(ma.fields.Integer(), required=True)
    winners = winners_field()


class PositionSchema(ResponseSchema):
    format = one_of([FORMAT], required=True, metadata={"example": FORMAT})
    players = ma.fields.List(ma.fields.String(), required=True)
    rules = ma.fields.Nested(RulesSchema, required=True)
    round = ma.fields.Integer(required=True, metadata={"description": "0 before the first deal"})
    engine = ma.fields.Integer(
        required=True, allow_none=True, metadata={"description": "null before the first deal"}
    )
    turn = ma.fields.Integer(
        required=True, allow_none=True, metadata={"description": "null between rounds"}
    )
    opened = ma.fields.List(ma.fields.Boolean(), required=True)
    hands = ma.fields.List(ma.fields.List(out_tile()), required=True)
    boneyard = ma.fields.List(out_tile(), required=True)
    trains = ma.fields.Dict(
        keys=ma.fields.String(),
        values=ma.fields.List(out_tile(), allow_none=True),
        required=True,
        metadata={"description": "train id -> its tiles (the Mexican train: null until started)"},
    )
    marked = ma.fields.List(ma.fields.Boolean(), required=True)
    open_doubles = ma.fields.List(ma.fields.String(), required=True)
    scores = ma.fields.List(ma.fields.List(ma.fields.Integer()), required=True)
    status = status_field()
    starter = ma.fields.Integer(required=True, allow_none=True)
    turn_state = ma.fields.Nested(TurnStateSchema, required=True)
    winners = winners_field()
    seed = ma.fields.Integer(metadata={"description": "the game's seed (rules §13)"})
    deal_secret = ma.fields.String(
        allow_none=True,
        metadata={
            "description": (
                "32 hex digits mixed into every deal when the server drew the randomness (null "
                "when the seed alone fixes the deals); with the seed it reproduces the game. "
                "Secret: whoever has it knows every future hand."
            )
        },
    )


class EmptySchema(ma.Schema):
    """No body, or ``{}``."""


class SeatRematchSchema(ResponseSchema):
    """A seat's place in the next game."""

    game_id = ma.fields.String(required=True, metadata={"description": "the next game"})
    seat = ma.fields.Integer(required=True, metadata={"description": "the caller's seat there"})
    token = ma.fields.String(
        required=True,
        metadata={"description": "the seat's token there: the same as in the finished game"},
    )


class TableRematchSchema(ResponseSchema):
    """The table token's place in the next game."""

    game_id = ma.fields.String(required=True, metadata={"description": "the next game"})
    table_token = ma.fields.String(
        required=True, metadata={"description": "the table token there: the same"}
    )


def rematch_answer() -> dict[str, Any]:
    """A rematch answer: a seat's or the table token's (a fresh dict each time: the document's
    builder writes its references into the one it is given)."""
    return {"oneOf": [SeatRematchSchema, TableRematchSchema]}
