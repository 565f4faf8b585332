"""Query and bodies of the events resource, and the schemas of log entries' actions and
events (made from the engine's event types)."""

from __future__ import annotations

import typing
from typing import Any, get_args

import marshmallow as ma

from service.bots.registry import BOTS
from service.rules import events as engine_events
from service.rules.log import By

from ..fields import (
    OneValueQuery,
    QueryInt,
    QueryNumber,
    ResponseSchema,
    StrictInt,
    component,
    one_of,
)
from ..games.schemas import PositionSchema, RulesSchema, legal_moves_field
from ..typed_schema import of_typed_dict

#: The longest a long-poll may wait, in seconds.
MAX_WAIT_SECONDS = 60
#: The most entries one JSON page holds (a long game has well over a thousand).
MAX_PAGE_ENTRIES = 500


#: A reconnecting EventSource's header: the last entry it got.
LAST_EVENT_ID = "Last-Event-ID"


class EventsHeadersSchema(ma.Schema):
    last_event_id = ma.fields.String(
        data_key=LAST_EVENT_ID,
        metadata={
            "description": "resume after this version (a reconnecting "
            "EventSource sends the last `id:` it got); wins over `after`. A value that is not "
            "a version is ignored"
        },
    )


class EventsQuerySchema(OneValueQuery):
    after = QueryInt(
        load_default=0,
        validate=ma.validate.Range(min=0),
        metadata={"description": "only entries with a greater version"},
    )
    wait = QueryNumber(
        load_default=0,
        validate=ma.validate.Range(0, MAX_WAIT_SECONDS),
        metadata={"description": "JSON only: seconds to hold the request while nothing is new"},
    )
    limit = QueryInt(
        load_default=MAX_PAGE_ENTRIES,
        validate=ma.validate.Range(1, MAX_PAGE_ENTRIES),
        metadata={
            "description": f"JSON only: at most this many entries (1 to {MAX_PAGE_ENTRIES}); "
            "`more` tells whether later entries were left for the next page"
        },
    )
    access_token = ma.fields.String(
        metadata={
            "description": "a stream ticket (`POST .../stream-tickets`), for clients that "
            "cannot send headers (a browser's EventSource); a token here still works but is "
            "deprecated (`Deprecation` header): it would sit in proxies' logs"
        }
    )


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


_BOT_LEVEL: dict[str, Any] = {"type": ["string", "null"], "enum": [*BOTS, None]}
#: Fields whose type alone says too little: a ``list[int]`` that is a tile, a bot level.
_EVENT_FIELDS: dict[str, dict[str, Any]] = {"tile": _ref("Tile"), "bot": _BOT_LEVEL}
EVENT_TYPES: tuple[type, ...] = get_args(engine_events.Event)


def _event_type(cls: type) -> str:
    """The ``type`` an event class names (its ``Literal``)."""
    (literal,) = get_args(typing.get_type_hints(cls)["type"])
    return str(literal)


def _action(name: str, description: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "properties": {"action": {"type": "string", "enum": [name]}, **fields},
        "required": ["action", *fields],
    }


def _components() -> dict[str, dict[str, Any]]:
    """Each event type (``<Type>Event``), ``Event`` (their union, told apart by ``type``), each
    kind of entry action and ``LogAction`` (a move, or what else changed the game)."""
    found: dict[str, dict[str, Any]] = {}
    mapping = {}
    for cls in EVENT_TYPES:
        name = f"{cls.__name__}Event"
        found[name] = of_typed_dict(cls, _EVENT_FIELDS)
        mapping[_event_type(cls)] = f"#/components/schemas/{name}"
    found["Event"] = {
        "description": "what a change did (rules §12); `type` tells which",
        "oneOf": [{"$ref": ref} for ref in mapping.values()],
        "discriminator": {"propertyName": "type", "mapping": mapping},
    }
    found["CreateAction"] = _action("create", "the game was created")
    found["DealAction"] = _action("deal", "a round was dealt")
    found["JoinAction"] = _action("join", "a person took an open seat", seat={"type": "integer"})
    found["SeatAction"] = _action(
        "seat",
        "the host handed a seat to a bot or reopened it",
        seat={"type": "integer"},
        bot=_BOT_LEVEL,
        open={"type": "boolean"},
    )
    found["RematchAction"] = _action(
        "rematch",
        "the next game of the same table was made (after the game's end)",
        game_id={"type": "string"},
    )
    found["TransferAction"] = _action(
        "transfer",
        "a seat moved to another device: a new token, the old one stops working",
        seat={"type": "integer"},
    )
    found["LogAction"] = {
        "description": "a move object (`Move`), or the change that was no move",
        "oneOf": [
            _ref(name)
            for name in (
                "Move",
                "CreateAction",
                "DealAction",
                "JoinAction",
                "SeatAction",
                "RematchAction",
                "TransferAction",
            )
        ],
    }
    return found


COMPONENTS = _components()


class EntrySchema(ResponseSchema):
    version = StrictInt(required=True)
    at = ma.fields.String(required=True, metadata={"description": "RFC 3339, UTC"})
    seat = ma.fields.Integer(required=True, allow_none=True)
    by = one_of(By, required=True)
    action = component("LogAction", required=True)
    events = ma.fields.List(component("Event"), required=True)
    legal_moves = legal_moves_field("the reader's seat, when its turn follows this entry")


class EventsPageSchema(ResponseSchema):
    game_id = ma.fields.String(required=True)
    version = ma.fields.Integer(required=True)
    entries = ma.fields.List(ma.fields.Nested(EntrySchema), required=True)
    more = ma.fields.Boolean(
        required=True,
        metadata={"description": "later entries exist: ask again with `after` = the last one's"},
    )


class StreamTicketSchema(ResponseSchema):
    ticket = ma.fields.String(
        required=True, metadata={"description": "secret, single use: pass as `access_token`"}
    )
    expires_at = ma.fields.String(
        required=True, metadata={"description": "RFC 3339: open the stream before this"}
    )


class HistoryEntrySchema(EntrySchema):
    position = ma.fields.Nested(
        PositionSchema, metadata={"description": "deal entries: the position after it"}
    )


HISTORY_FORMAT = "mexican-train-history/1"


class HistorySchema(ResponseSchema):
    format = one_of([HISTORY_FORMAT], required=True, metadata={"example": HISTORY_FORMAT})
    game_id = ma.fields.String(required=True)
    players = ma.fields.List(ma.fields.String(), required=True)
    rules = ma.fields.Nested(RulesSchema, required=True)
    seed = ma.fields.Integer(required=True)
    entries = ma.fields.List(ma.fields.Nested(HistoryEntrySchema), required=True)
