"""The OpenAPI document's ``webhooks``: what each delivery a player's webhook receives holds,
so a receiver's types are generated from the document as a client's are.

The bodies are made in :mod:`.notifications` and signed in :mod:`service.worker.deliveries`;
``tests/players/test_webhooks.py`` checks every delivery it receives against this."""

from __future__ import annotations

from typing import Any

from service.store.hooks import HookEvent

#: The Standard Webhooks headers of every delivery.
HEADERS = {
    "webhook-id": "the delivery's id, the same on each of its attempts: drop duplicates by it",
    "webhook-timestamp": "Unix seconds of this attempt",
    "webhook-signature": (
        "`v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed "
        "with the webhook's secret decoded: the base64 after its `whsec_` prefix"
    ),
}

SUMMARIES = {
    HookEvent.YOUR_TURN: "A change started a turn and left it with one of the player's seats.",
    HookEvent.GAME_OVER: "A game with one of the player's seats ended.",
    HookEvent.REMATCH: "A rematch was made of a game with one of the player's seats.",
}


def _body(event: HookEvent) -> dict[str, Any]:
    data: dict[str, Any] = {
        "type": "object",
        "properties": {
            "game_id": {"type": "string"},
            "seat": {"type": "integer", "description": "the player's seat in that game"},
            "version": {"type": "integer", "description": "the game's version after the change"},
        },
        "required": ["game_id", "seat", "version"],
    }
    if event is HookEvent.REMATCH:
        data["properties"]["next_game_id"] = {"type": "string", "description": "the new game"}
        data["required"].append("next_game_id")
    return {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": [event.value]},
            "timestamp": {"type": "string", "description": "RFC 3339, when the change was made"},
            "data": data,
        },
        "required": ["type", "timestamp", "data"],
    }


def _delivery(event: HookEvent) -> dict[str, Any]:
    headers = [
        {"name": name, "in": "header", "required": True, "description": text,
         "schema": {"type": "string"}}
        for name, text in HEADERS.items()
    ]  # fmt: skip
    return {
        "post": {
            "summary": SUMMARIES[event],
            "description": "Never carries a hidden tile or a token.",
            "parameters": headers,
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _body(event)}},
            },
            "responses": {
                "2XX": {"description": "taken"},
                "default": {"description": "not taken: sent again with backoff, up to an hour"},
            },
        }
    }


def webhooks_doc() -> dict[str, Any]:
    """The document's top-level ``webhooks``: one per event a webhook may ask for."""
    return {event.value: _delivery(event) for event in HookEvent}
