"""``GET /events`` and ``GET /history``: the log, shown to each reader as it may see it."""

from __future__ import annotations

from typing import Any

import orjson
from flask import Response, current_app, request
from flask.views import MethodView

from service.rules import Status
from service.rules.log import Entry, Replayer

from ..docs import OPTIONAL_TOKEN, SEAT_OR_HOST, doc, problems, responds
from ..gameplay import Loaded, load_game, settle_overdue
from ..parsing import Blueprint
from ..problems import ApiError
from ..store_access import store
from ..web import UNAUTHORIZED_HEADERS, json_response
from .formats import STREAM_HEADERS, Media, Viewer, stream
from .hub import Hub
from .schemas import EventsPageSchema, EventsQuerySchema, HistorySchema

blp = Blueprint(
    "events",
    __name__,
    url_prefix="/api/v1/games/<string:game_id>",
    description="Follow a game live, replay a finished one",
)

HUB_EXTENSION = "mexican_train_hub"
HISTORY_FORMAT = "mexican-train-history/1"
LAST_EVENT_ID = "Last-Event-ID"
_SSE_EXAMPLE = (
    'id: 7\nevent: entry\ndata: {"version": 7, "at": "2026-12-01T10:00:00.123Z", "seat": 2, '
    '"by": "player", "action": {"action": "draw"}, "events": [{"type": "tile_drawn", '
    '"seat": 2}]}\n\n'
)
STREAM_DESCRIPTION = (
    "JSON by default; with `Accept: text/event-stream` (SSE) or `application/x-ndjson`, a "
    "stream of the same entries, then each new one, ending after the game's last entry"
)
STREAM_CONTENT = {
    Media.JSON.value: {"schema": {"$ref": "#/components/schemas/EventsPage"}},
    Media.SSE.value: {
        "schema": {"type": "string", "description": "one message per entry (id = version)"},
        "example": _SSE_EXAMPLE,
    },
    Media.NDJSON.value: {
        "schema": {"type": "string", "description": "one entry JSON per line"},
    },
}


def hub() -> Hub:
    """This process's hub, made on first use (each worker process has its own)."""
    found = current_app.extensions.get(HUB_EXTENSION)
    if found is None:
        app = current_app._get_current_object()  # type: ignore[attr-defined]

        def settle(game_id: str) -> None:
            with app.app_context():
                settle_overdue(game_id)

        found = current_app.extensions[HUB_EXTENSION] = Hub(store(), settle)
    assert isinstance(found, Hub)
    return found


def viewer(g: Loaded) -> Viewer:
    return Viewer(g.seat, g.role.is_host)


def media_type() -> Media:
    best = request.accept_mimetypes.best_match([m.value for m in Media], default=Media.JSON)
    return Media(best)


def resume_point(after: int) -> int:
    """``Last-Event-ID`` (a reconnecting EventSource sends it) wins over ``after``."""
    raw = request.headers.get(LAST_EVENT_ID, "").strip()
    if raw.isdigit() and len(raw) < 12:
        return int(raw)
    return after


@blp.route("/events")
class Events(MethodView):
    @doc(
        security=OPTIONAL_TOKEN,
        responses={"200": {"description": STREAM_DESCRIPTION, "content": STREAM_CONTENT}},
    )
    @blp.arguments(EventsQuerySchema(), location="query")
    @responds(
        200,
        EventsPageSchema,
        description=STREAM_DESCRIPTION,
    )
    @problems(400, 401, 404, 422, 429)
    def get(self, query: dict[str, Any], game_id: str) -> Response:
        """The log from `after` on, as the caller may see it; streamed with SSE or NDJSON."""
        g = load_game(game_id, query=True)
        media, after = media_type(), resume_point(query["after"])
        if media is Media.JSON:
            return page(g, after, query["wait"])
        return streamed(g, after, media)


def page(g: Loaded, after: int, wait: float) -> Response:
    reader = viewer(g)
    with hub().follow(g.record.game_id, g.record.version) as feed:
        over = g.state.status == Status.GAME_OVER
        if wait and not over and feed.known <= after and feed.wait(after, wait):
            feed.catch_up()
        entries = [orjson.Fragment(reader.entry(feed, entry)) for entry in feed.since(after)]
        version = max(feed.known, len(feed.entries))
    body = {"game_id": g.record.game_id, "version": version, "entries": entries}
    return json_response(body)


def streamed(g: Loaded, after: int, media: Media) -> Response:
    reader, game_id, version, events_hub = viewer(g), g.record.game_id, g.record.version, hub()
    final = version if g.state.status == Status.GAME_OVER else None

    def frames() -> Any:
        with events_hub.follow(game_id, version) as feed:
            yield from stream(feed, after, reader, media, final)

    response = Response(frames(), mimetype=media.value, headers=STREAM_HEADERS)
    response.direct_passthrough = True
    return response


@blp.route("/history")
class History(MethodView):
    @doc(security=SEAT_OR_HOST)
    @responds(200, HistorySchema)
    @problems(400, 401, 403, 404, 429)
    def get(self, game_id: str) -> Response:
        """The whole log, unredacted, with the position after each deal: the host at any
        time, anyone once the game is over."""
        g = load_game(game_id)
        if g.state.status != Status.GAME_OVER and not g.role.is_host:
            if g.token is None:
                raise ApiError(
                    401,
                    "missing_token",
                    "Until the game is over, its history is for the host token only.",
                    headers=UNAUTHORIZED_HEADERS,
                )
            raise ApiError(403, "not_host", "Until the game is over, only the host may read it.")
        return json_response(history(g))


def history(g: Loaded) -> dict[str, Any]:
    _, records = store().log(g.record.game_id)
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
