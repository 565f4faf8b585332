"""The committed OpenAPI document types the players' loop answers as closely as the rest: a
closed vocabulary is an enum (the contract's conventions: "with enums for closed
vocabularies"), and a lobby table's rules are the `Rules` every game answer has."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SPEC = json.loads((Path(__file__).resolve().parents[2] / "openapi" / "openapi.json").read_text())
SCHEMAS: dict[str, Any] = SPEC["components"]["schemas"]


def query_parameter(path: str, name: str) -> dict[str, Any]:
    found = [p for p in SPEC["paths"][path]["get"]["parameters"] if p.get("name") == name]
    assert len(found) == 1, found
    schema: dict[str, Any] = found[0]["schema"]
    return schema


def test_a_leaderboards_kind_is_the_enum_its_query_takes() -> None:
    asked = query_parameter("/api/v1/leaderboard", "kind")["enum"]
    assert asked == ["people", "bots"]
    assert SCHEMAS["Leaderboard"]["properties"]["kind"].get("enum") == asked


def test_a_lobby_tables_rules_are_the_rules_of_a_game() -> None:
    rules = SCHEMAS["LobbyTable"]["properties"]["rules"]
    assert rules == {"$ref": "#/components/schemas/Rules"}, rules


def test_a_new_games_preset_is_the_enum_of_the_presets() -> None:
    """`CreateGame.preset` had only a length: a generated client took any string. Every body
    that names a preset (a seek, the rules of an answer) lists the same three."""
    presets = SCHEMAS["Rules"]["properties"]["preset"]["enum"]
    assert presets == ["standard", "tournament", "classic"]
    assert SCHEMAS["CreateGame"]["properties"]["preset"].get("enum") == presets
    assert SCHEMAS["Seek"]["properties"]["preset"].get("enum") == presets
