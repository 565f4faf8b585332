"""docs/rules.md §13: when the server picks the randomness, a 128-bit deal secret joins the
seed, so neither the seed nor anything a seat sees rebuilds the deals; a chosen seed alone still
reproduces every deal, and positions carry the secret so the host can reproduce the game."""

from __future__ import annotations

from typing import Any

import pytest

from service.rules import (
    InvalidPosition,
    deal,
    dumps,
    export_position,
    game_view,
    import_position,
    loads,
    new_game,
)
from service.rules.engine import apply, legal_moves
from service.rules.observer import seat_view
from service.rules.rng import SECRET_BYTES, valid_secret
from service.rules.state import GameState

PLAYERS = ["ann", "bo", "cy", "di"]


def _hands_after_deal(doc: dict[str, Any]) -> list[Any]:
    state = import_position(doc)
    deal(state)
    return state.hands


def test_a_server_chosen_game_draws_a_128_bit_secret() -> None:
    secrets_seen = {new_game(PLAYERS).deal_secret for _ in range(50)}
    assert len(secrets_seen) == 50
    assert all(valid_secret(s) and len(s or "") == 2 * SECRET_BYTES == 32 for s in secrets_seen)
    assert new_game(PLAYERS, seed=31337).deal_secret is None


def test_the_seed_alone_does_not_rebuild_a_server_chosen_deal() -> None:
    game = new_game(PLAYERS)
    undealt = export_position(game)
    assert undealt["deal_secret"] == game.deal_secret
    deal(game)
    # The host's position reproduces the deal exactly...
    assert _hands_after_deal(undealt) == game.hands
    # ...the seed without the secret deals something else.
    assert _hands_after_deal({**undealt, "deal_secret": None}) != game.hands


def test_a_seat_sees_nothing_that_rebuilds_the_deal() -> None:
    game = new_game(PLAYERS)
    deal(game)
    for _ in range(6):  # a few moves, so views carry trains and draws too
        seat = game.turn
        assert seat is not None
        apply(game, seat, legal_moves(game, seat)[0])
    for seat in range(len(PLAYERS)):
        seen = repr(game_view(game, seat)) + repr(seat_view(game, seat))
        assert game.deal_secret not in seen and str(game.seed) not in seen


def test_a_chosen_seed_reproduces_every_deal() -> None:
    a, b = new_game(PLAYERS, seed=31337), new_game(PLAYERS, seed=31337)
    deal(a), deal(b)
    assert a.hands == b.hands and a.boneyard == b.boneyard
    assert export_position(a)["deal_secret"] is None


def test_the_secret_round_trips_through_storage_and_positions() -> None:
    game = new_game(PLAYERS)
    deal(game)
    assert loads(dumps(game)).deal_secret == game.deal_secret
    assert import_position(export_position(game)).deal_secret == game.deal_secret
    # Without a seed the server picks the randomness again: a fresh seed and secret.
    doc = export_position(new_game(PLAYERS))
    fresh = import_position({k: v for k, v in doc.items() if k not in ("seed", "deal_secret")})
    assert valid_secret(fresh.deal_secret) and fresh.deal_secret != doc["deal_secret"]


def test_states_stored_before_secrets_decode_without_one() -> None:
    game = new_game(PLAYERS, seed=5)
    older = dumps(game).removesuffix(b",null]") + b"]"  # the body of a state stored before
    assert isinstance(loads(older), GameState) and loads(older).deal_secret is None


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ({"deal_secret": "ab" * 15}, "32 lowercase hex digits"),
        ({"deal_secret": "AB" * 16}, "32 lowercase hex digits"),
        ({"deal_secret": 5}, "32 lowercase hex digits"),
        ({"seed": None, "deal_secret": "ab" * 16}, "goes with the 'seed'"),
    ],
)
def test_a_malformed_secret_is_refused(extra: dict[str, Any], reason: str) -> None:
    doc = {**export_position(new_game(PLAYERS, seed=3)), **extra}
    with pytest.raises(InvalidPosition, match=reason):
        import_position(doc)
