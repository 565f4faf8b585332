"""The per-process memories of the hot path: remembered move bodies and decoded states are
handed out fresh, never shared, and never make an invalid request valid."""

from __future__ import annotations

import pytest
from flask import Flask
from werkzeug.exceptions import HTTPException

from service import rules
from service.api.moves.schemas import MoveSchema, PlaySchema
from service.api.parsing import OrjsonParser
from service.api.records import Decoded

PLAY = b'{"tile": [5, 3], "train": "mexican"}'


def parse(app: Flask, parser: OrjsonParser, schema: object, body: bytes) -> object:
    with app.test_request_context("/x", method="POST", data=body, content_type="application/json"):
        return parser.parse(schema, location="json")


def test_a_remembered_body_comes_back_as_new_objects() -> None:
    app, parser, schema = Flask(__name__), OrjsonParser(), PlaySchema()
    first = parse(app, parser, schema, PLAY)
    assert isinstance(first, dict)
    first["tile"].append(99)
    first["train"] = "changed"
    assert parse(app, parser, schema, PLAY) == {"tile": [5, 3], "train": "mexican"}


def test_a_body_valid_for_one_schema_is_still_checked_for_another() -> None:
    app, parser = Flask(__name__), OrjsonParser()
    assert parse(app, parser, PlaySchema(), PLAY) == {"tile": [5, 3], "train": "mexican"}
    with pytest.raises(HTTPException) as refused:  # MoveSchema needs an action
        parse(app, parser, MoveSchema(), PLAY)
    assert refused.value.code == 422


def test_an_invalid_body_is_refused_every_time() -> None:
    app, parser, schema = Flask(__name__), OrjsonParser(), MoveSchema()
    for _ in range(3):
        with pytest.raises(HTTPException):
            parse(app, parser, schema, b'{"action": "jump"}')


def test_decoded_states_are_copies_and_bounded() -> None:
    state = rules.new_game(["a", "b", "c"], seed=3)
    rules.deal(state)
    raw = rules.dumps(state)
    decoded = Decoded(2, rules.loads, rules.GameState.copy)
    one, two = decoded.get(raw), decoded.get(raw)
    assert one is not two and rules.dumps(one) == rules.dumps(two) == raw
    turn = one.turn
    assert turn is not None
    rules.apply(one, turn, rules.legal_moves(one, turn)[0])
    assert rules.dumps(decoded.get(raw)) == raw  # the kept state did not move
    for seed in (4, 5, 6):
        decoded.keep(rules.dumps(rules.new_game(["a", "b"], seed=seed)), state)
    assert len(decoded.kept) == 2
