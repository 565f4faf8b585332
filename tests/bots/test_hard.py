"""The hard bot decides from its seat's view alone: hidden tiles cannot change its choice."""

from __future__ import annotations

import random

from mexican_train_client import Client

from service.bots.hard import HardBot
from service.bots.planner import PlannerBot, _best_chain
from service.rules import (
    GameState,
    Move,
    View,
    apply,
    deal,
    export_position,
    legal_moves,
    new_game,
    seat_view,
)
from service.tournament.runner import game_specs, play_http, play_local


def a_choice(seed: int) -> GameState:
    """A 4-player standard game played by planners until the seat on turn has 3+ plays."""
    state = new_game(["a", "b", "c", "d"], seed=seed)
    deal(state)
    planner = PlannerBot()
    for _ in range(2000):
        if state.status != "in_round":
            deal(state)
        seat = state.turn
        assert seat is not None
        moves = legal_moves(state, seat)
        if len(moves) >= 3 and state.opened[seat]:
            return state
        apply(state, seat, planner.choose(seat_view(state, seat), moves))
    raise AssertionError("no position with a real choice")


def rehide(state: GameState, seat: int, rng: random.Random) -> GameState:
    """The same game for ``seat``, every tile it cannot see dealt afresh (and another seed)."""
    twin = state.copy()
    others = [s for s in range(state.n_players) if s != seat]
    hidden = [t for s in others for t in twin.hands[s]] + twin.boneyard
    rng.shuffle(hidden)
    for s in others:
        size = len(twin.hands[s])
        twin.hands[s], hidden = sorted(hidden[:size]), hidden[size:]
    twin.boneyard = hidden
    twin.reindex()
    twin.seed = state.seed + 1
    return twin


def test_the_decision_ignores_what_the_seat_cannot_see() -> None:
    rng = random.Random(5)
    decided = 0
    for seed in range(6):
        state = a_choice(seed)
        seat = state.turn
        assert seat is not None
        twin = rehide(state, seat, rng)
        assert export_position(twin)["hands"] != export_position(state)["hands"]
        view, twin_view = seat_view(state, seat), seat_view(twin, seat)
        assert view == twin_view
        moves, twin_moves = legal_moves(state, seat), legal_moves(twin, seat)
        assert moves == twin_moves
        choice = HardBot(seed=seed, moves=1500).choose(view, moves)
        assert HardBot(seed=seed, moves=1500).choose(twin_view, twin_moves) == choice
        assert choice in moves
        decided += 1
    assert decided == 6


def test_the_seed_fixes_the_decision_and_the_search_uses_it() -> None:
    """Same seed, same choice (the roll-out budget is a count, not a time)."""
    state = a_choice(3)
    seat = state.turn
    assert seat is not None
    view, moves = seat_view(state, seat), legal_moves(state, seat)
    first = [HardBot(seed=s, moves=1500).choose(view, moves) for s in range(4)]
    assert [HardBot(seed=s, moves=1500).choose(view, moves) for s in range(4)] == first


def test_over_http_it_plays_the_same_game_as_in_process(live_server: str) -> None:
    """It decides from the view the API serves exactly as from the in-process one."""
    specs = game_specs(["hard", "planner", "greedy"], 1, base_seed=31, options={"rounds": 1})
    with Client(live_server) as client:
        remote = play_http(client, specs[0], record=True)
    local = play_local(specs[0], record=True)
    assert remote.move_log == local.move_log
    assert (remote.rounds, remote.winners) == (local.rounds, local.winners)


def test_the_chain_search_cache_does_not_change_the_decision() -> None:
    """Searches are charged to the budget whether the cache answers them or not: a process
    that searched these hands before decides as a new one does."""
    for seed in (1, 4):
        state = a_choice(seed)
        seat = state.turn
        assert seat is not None
        view, moves = seat_view(state, seat), legal_moves(state, seat)
        _best_chain.cache_clear()
        cold = [decided(view, moves, s) for s in range(3)]
        assert _best_chain.cache_info().currsize > 0
        assert [decided(view, moves, s) for s in range(3)] == cold


def decided(view: View, moves: list[Move], seed: int) -> tuple[Move, int]:
    """The decision, and how far it ran its generator (how many samples it dealt)."""
    bot = HardBot(seed=seed, moves=1500)
    return bot.choose(view, moves), bot.rng.state
