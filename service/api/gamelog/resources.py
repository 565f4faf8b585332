"""``GET /events`` and ``GET /history``: the log, shown to each reader as it may see it."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson
from flask import Response, request, url_for
from flask.views import MethodView

from service.frameworks.gunicorn_body import body_writer
from service.rules import Role, Status
from service.rules.log import Entry, Replayer

from ..caching import CachePolicy, cache_policy
from ..codes import Problem
from ..config import settings
from ..docs import OPTIONAL_TOKEN, SEAT_OR_HOST, doc, problems, responds
from ..etag import check_if_match
from ..games.schemas import EmptySchema
from ..observability import StreamKind, stream_open
from ..parsing import Blueprint
from ..presence import StreamPresence
from ..problems import ApiError
from ..transaction import Loaded, answered_once, load_game, now_ms, read_log
from ..web import json_response, missing_token
from .access import (
    DEPRECATION_HEADERS,
    TICKET_SECONDS,
    issue_ticket,
    stream_reader,
    take_stream_slot,
)
from .formats import STREAM_HEADERS, Media, Viewer, stream
from .histories import FINISHED
from .hub import REWIND_WAIT_SECONDS, Feed, hub
from .schemas import (
    HISTORY_FORMAT,
    EventsHeadersSchema,
    EventsPageSchema,
    EventsQuerySchema,
    HistorySchema,
    StreamTicketSchema,
)

blp = Blueprint(
    "events",
    __name__,
    url_prefix="/api/v1/games/<string:game_id>",
    description="Follow a game live, replay a finished one",
)

_SSE_EXAMPLE = (
    'id: 7\nevent: entry\ndata: {"version": 7, "at": "2026-12-01T10:00:00.123Z", "seat": 2, '
    '"by": "player", "action": {"action": "draw"}, "events": [{"type": "tile_drawn", '
    '"seat": 2}]}\n\n'
)
STREAM_DESCRIPTION = (
    "JSON by default; with `Accept: text/event-stream` (SSE) or `application/x-ndjson`, a "
    "stream of the same entries, then each new one, ending after the game's last entry"
)
ENDED_DESCRIPTION = (
    "SSE and NDJSON: the game is over and the reader holds its last entry (`after` or "
    "`Last-Event-ID` at it): nothing more will come, ever. A browser's EventSource "
    "stops reconnecting on this answer"
)
ENTRY = {"$ref": "#/components/schemas/Entry"}
PRESENCE_FIELDS = {
    "seat": {"type": "integer"},
    "present": {
        "type": "boolean",
        "description": "the seat has an open stream or made a request within PRESENCE_SECONDS",
    },
}
#: A change of who is at the table: not a log entry (no version; a resumed stream skips it).
PRESENCE = {
    "type": "object",
    "properties": PRESENCE_FIELDS,
    "required": ["seat", "present"],
}
ENTRY_MESSAGE = {
    "type": "object",
    "description": "a log entry",
    "properties": {
        "id": {"type": "string", "description": "the entry's version"},
        "event": {"type": "string", "enum": ["entry"]},
        "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": ENTRY},
    },
    "required": ["id", "event", "data"],
}
PRESENCE_MESSAGE = {
    "type": "object",
    "description": "a seat came to the table or left it (no id: not an entry)",
    "properties": {
        "event": {"type": "string", "enum": ["presence"]},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": PRESENCE,
        },
    },
    "required": ["event", "data"],
}
PRESENCE_LINE = {
    "type": "object",
    "description": "a seat came to the table or left it (entries have no type)",
    "properties": {"type": {"type": "string", "enum": ["presence"]}, **PRESENCE_FIELDS},
    "required": ["type", "seat", "present"],
}
# A stream's messages, each described as OpenAPI 3.2 does (``itemSchema``), under an extension
# name a 3.1 document may carry: an SSE message's ``data`` is an entry or a presence change, an
# NDJSON line is one of them.
STREAM_CONTENT = {
    Media.JSON.value: {"schema": {"$ref": "#/components/schemas/EventsPage"}},
    Media.SSE.value: {
        "schema": {
            "type": "string",
            "description": "one message per entry (id = version), and presence changes",
        },
        "x-itemSchema": {"oneOf": [ENTRY_MESSAGE, PRESENCE_MESSAGE]},
        "example": _SSE_EXAMPLE,
    },
    Media.NDJSON.value: {
        "schema": {"type": "string", "description": "one entry JSON per line, and presence"},
        "x-itemSchema": {"oneOf": [ENTRY, PRESENCE_LINE]},
    },
}


def viewer(g: Loaded) -> Viewer:
    return Viewer(g.role, g.record.version)


def media_type() -> Media:
    best = request.accept_mimetypes.best_match([m.value for m in Media], default=Media.JSON)
    return Media(best)


#: A Last-Event-ID this service sent: a version, ASCII digits only (``str.isdigit`` also takes
#: superscripts and other scripts' digits, which ``int`` then refuses).
_EVENT_ID = re.compile(r"[0-9]{1,11}", re.ASCII)


def resume_point(after: int, last_event_id: str) -> int:
    """``Last-Event-ID`` (a reconnecting EventSource sends it) wins over ``after``; one that is
    not a version this service sent is ignored."""
    raw = last_event_id.strip()
    if _EVENT_ID.fullmatch(raw):
        return int(raw)
    return after


#: RFC 9745's header, sent when a token came in ``access_token`` (stream tickets replace it).
DEPRECATION_DOC = {
    "description": "Sent when a token came in `access_token`, which stream tickets replace "
    "(RFC 9745: the date since when)",
    "schema": {"type": "string"},
}


#: RFC 8288's link to the rest of a JSON page cut at ``limit``.
NEXT_PAGE_DOC = {
    "description": "JSON, when `more` is true: the next page, "
    '`<.../events?after=<last>&limit=<limit>>; rel="next"`',
    "schema": {"type": "string"},
}


@blp.route("/events")
class Events(MethodView):
    @doc(
        security=OPTIONAL_TOKEN,
        responses={
            "200": {
                "description": STREAM_DESCRIPTION,
                "content": STREAM_CONTENT,
                "headers": {"Deprecation": DEPRECATION_DOC, "Link": NEXT_PAGE_DOC},
            }
        },
    )
    @blp.arguments(EventsQuerySchema(), location="query")
    @blp.arguments(EventsHeadersSchema(), location="headers")
    @responds(
        200,
        EventsPageSchema,
        description=STREAM_DESCRIPTION,
    )
    @responds(204, description=ENDED_DESCRIPTION, success=False)
    @problems(400, 401, 404, 409, 422, 429)
    def get(self, query: dict[str, Any], headers: dict[str, str], game_id: str) -> Response:
        """The log from `after` on, as the caller may see it; streamed with SSE or NDJSON."""
        media = media_type()
        # A stream, and a long-poll (a JSON read with `wait`), holds one of the address's
        # open-stream slots while it waits: a long-poll holds a connection as a stream does.
        # The slot is taken before the credential is read: one refused for the address's open
        # streams (429) spends no single-use ticket.
        holds = media is not Media.JSON or query["wait"] > 0
        release = take_stream_slot() if holds else _nothing_held
        try:
            g, deprecated = stream_reader(game_id)
            after = resume_point(query["after"], headers.get("last_event_id", ""))
            refuse_ahead(g, after)
            if media is Media.JSON:
                response = page(g, after, query["wait"], query["limit"])
            else:
                response = streamed(g, after, media, release)
        except BaseException:
            release()
            raise
        if media is Media.JSON:
            release()
        if deprecated:
            response.headers.update(DEPRECATION_HEADERS)
        return response


def _nothing_held() -> None:
    """What a JSON read without ``wait`` gives back: it holds no slot."""


def refuse_ahead(g: Loaded, after: int) -> None:
    """409 for a reader that holds entries the game's stored log does not: Redis lost them (a
    restart from an AOF that missed its last second, a failover to a replica behind), and the
    versions past the stored one will be written anew with other entries. Held, the reader
    would miss those, or wait for ever. The stored version is this request's own read of Redis,
    made after the client learnt ``after``, never a process's copy (a feed may lag a writer on
    another instance), so a reader that is merely fast is never refused."""
    stored = g.record.version
    if after > stored:
        raise ApiError(
            Problem.AFTER_AHEAD_OF_LOG,
            f"This game's log ends at version {stored}, before {after}: the entries after "
            f"{stored} that you hold are lost and will not come again. Reload the game (its "
            "view, or its events from after=0).",
            extra={"version": stored},
        )


def page(g: Loaded, after: int, wait: float, limit: int) -> Response:
    reader = viewer(g)
    with hub().follow(g.record.game_id, g.record.version) as feed:
        # A finished game's next entry can only be its rematch: once that came, none will.
        final = g.state.status == Status.GAME_OVER and bool(g.table.listing.next_game)
        if wait and not final and feed.known <= after and long_poll(feed, after, wait):
            feed.catch_up()
        settled(feed)
        shown = feed.since(after)
        more = len(shown) > limit
        entries = [orjson.Fragment(raw) for raw in reader.entries(feed, shown[:limit])]
        version = max(feed.known, len(feed.entries))
    body = {"game_id": g.record.game_id, "version": version, "entries": entries, "more": more}
    headers = {"Link": next_page(g.record.game_id, shown[limit - 1].version, limit)} if more else {}
    return json_response(body, headers=headers)


def next_page(game_id: str, last: int, limit: int) -> str:
    """RFC 8288's link to the page after the one cut at ``last``: a paging client follows it
    without knowing this API's cursor. It carries no ``access_token``: a ticket is spent, and
    a credential never goes in a URL the service hands out."""
    url = url_for("events.Events", game_id=game_id, after=last, limit=limit)
    return f'<{url}>; rel="next"'


def settled(feed: Feed) -> None:
    """A page is not read from a feed found stale (its entries may be lost ones): its rewind
    is waited for, a while."""
    if not feed.settle(REWIND_WAIT_SECONDS):
        raise ApiError(
            Problem.STORAGE_UNAVAILABLE,
            "This game's log is being read again; try again shortly.",
            headers={"Retry-After": "1"},
        )


def long_poll(feed: Feed, after: int, wait: float) -> bool:
    """Wait up to ``wait`` s for an entry after ``after``, counted open meanwhile; whether
    one came."""
    with stream_open(StreamKind.LONG_POLL):
        return feed.wait(after, wait)


#: The ``kind`` label of each streamed media type.
STREAM_KINDS = {Media.SSE: StreamKind.SSE, Media.NDJSON: StreamKind.NDJSON}


def streamed(g: Loaded, after: int, media: Media, release: Callable[[], None]) -> Response:
    """The stream of ``g`` after ``after``; ``release`` gives back the slot it holds."""
    linger = settings().rematch_seconds
    if g.state.status == Status.GAME_OVER and after >= g.record.version and ended(g, linger):
        # Nothing more will ever come: 204 is what stops a browser's EventSource reconnecting.
        release()
        return Response(status=204)
    reader, game_id, version, events_hub = viewer(g), g.record.game_id, g.record.version, hub()
    lifetime = settings().stream_max_seconds
    here = StreamPresence(game_id, reader.role.seat)
    writer = body_writer(request.environ)

    def frames() -> Any:
        try:
            here.beat()
            with (
                stream_open(STREAM_KINDS[media]),
                events_hub.follow(game_id, version, presence=True) as feed,
            ):
                beats = here.seat is not None
                for frame in stream(feed, after, reader, media, lifetime, linger, writer, beats):
                    yield frame
                    here.beat()
        finally:
            here.close()
            release()

    response = Response(frames(), mimetype=media.value, headers=STREAM_HEADERS)
    response.direct_passthrough = True
    # An answer whose body is never read (a HEAD's) never starts ``frames``: its slot is given
    # back when the server closes the answer (werkzeug then sends no body and closes the
    # response). Giving a slot back twice is harmless.
    response.call_on_close(release)
    return response


def ended(g: Loaded, linger: float) -> bool:
    """Whether a finished game's streams are over: its rematch came, or the wait for one is."""
    listing = g.table.listing
    ended_ms = listing.ended_ms or 0
    return bool(listing.next_game) or now_ms() >= ended_ms + linger * 1000


@blp.route("/stream-tickets")
class StreamTickets(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @blp.arguments(EmptySchema(), required=False)
    @responds(201, StreamTicketSchema)
    @problems(400, 401, 404, 412, 413, 415, 422, 429)
    @cache_policy(CachePolicy.PRIVATE)
    def post(self, _body: dict[str, Any], game_id: str) -> Response:
        """A single-use ticket for one stream of this game opened within 60 s, to pass as
        `access_token` where a header cannot be sent (a browser's EventSource): it sees what
        the token it was issued to sees, and never appears in a log as a lasting secret.
        A retry with the same Idempotency-Key (and token) gets the first ticket."""
        g = load_game(game_id)
        if g.token is None:
            raise missing_token(
                "A stream ticket is issued for a token: send it as 'Authorization: Bearer'."
            )
        return answered_once(lambda: issued(g), ttl=TICKET_SECONDS)


def issued(g: Loaded) -> Response:
    # As a transfer ticket: no version changes, but an If-Match sent is judged, not dropped.
    check_if_match(g.record.version)
    return json_response(issue_ticket(g), 201)


@blp.route("/history")
class History(MethodView):
    @doc(security=SEAT_OR_HOST)
    @responds(200, HistorySchema)
    @problems(400, 401, 403, 404, 409, 429)
    def get(self, game_id: str) -> Response:
        """The whole log, unredacted, with the position after each deal: the host at any
        time (a rated game's once it is over: `409 game_not_over`), anyone once the game is
        over."""
        g = load_game(game_id)
        if g.state.status != Status.GAME_OVER and not g.role.is_host:
            refuse_history(g)
        if g.state.status != Status.GAME_OVER:
            return json_response(history(g))
        body = FINISHED.get(game_id, g.record.version)
        if body is None:
            body = orjson.dumps(history(g))
            FINISHED.put(game_id, g.record.version, body)
        return json_response(body)


def refuse_history(g: Loaded) -> None:
    """Why a running game's history is not the caller's to read."""
    if g.token is None:
        raise missing_token("Until the game is over, its history is for the host token only.")
    if g.record.identify(g.token) is Role.HOST:  # a rated game's: blind until the end
        raise ApiError(Problem.GAME_NOT_OVER, "A rated game's history is shown once it is over.")
    raise ApiError(Problem.NOT_HOST, "Until the game is over, only the host may read it.")


def history(g: Loaded) -> dict[str, Any]:
    records = read_log(g)
    replay = Replayer(positions=True)
    entries: list[Entry] = [replay.feed(raw) for raw in records]
    first = replay.state
    assert first is not None
    return {
        "format": HISTORY_FORMAT,
        "game_id": g.record.game_id,
        "players": list(g.state.players),
        "rules": g.state.rules.to_json(),
        "seed": g.state.seed,
        "entries": [entry.to_json(entry.events) for entry in entries],
    }
