"""The document gives a rematch answer as the one of its two shapes it is, each with every field
it always carries: a seat's `{"game_id", "seat", "token"}`, the table token's
`{"game_id", "table_token"}` (the contract's Rematch section), so a typed client needs no
optional fields to read either."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SPEC = json.loads((Path(__file__).resolve().parents[2] / "openapi" / "openapi.json").read_text())
SHAPES = [{"game_id", "seat", "token"}, {"game_id", "table_token"}]


def resolved(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" not in schema:
        return schema
    found: dict[str, Any] = SPEC["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return found


def test_a_rematch_answer_is_a_seats_or_the_tables() -> None:
    responses = SPEC["paths"]["/api/v1/games/{game_id}/rematch"]["post"]["responses"]
    for status in ("200", "201"):
        body = responses[status]["content"]["application/json"]["schema"]
        body = resolved(body)
        shapes = [resolved(branch) for branch in body.get("oneOf", [body])]
        assert [set(s["properties"]) for s in shapes] == SHAPES, status
        assert [set(s["required"]) for s in shapes] == SHAPES, status
