"""Two rated games that end at the same time for one player both count in its rating: the
second rater to write builds on the first one's result instead of writing over it."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import redis
from flask import Flask
from openskill.models import PlackettLuce

from devstack.redis_server import RedisServer
from service import rules
from service.api import ratings
from service.api.app import create_app
from service.api.store_access import store
from service.seating import Listing, Seat, SeatKind, Table
from service.store import NO_TOKEN, keys
from service.store.players import LEADERBOARD_GAMES, Player, PlayerKind
from tests.redis_clients import keys_not_starting, user_without
from tests.rules.helpers import play_random_game


def finished_game(seed: int) -> rules.GameState:
    """A real two-seat game played to its end (one short round)."""
    state, _ = play_random_game("standard", 2, seed, {"set": 6, "rounds": 1})
    return state


def rated_table(*players: Player) -> Table:
    return Table(
        [Seat(SeatKind.PERSON, player=p.player_id) for p in players],
        listing=Listing(rated=True),
    )


def openskill_after(
    before: list[tuple[float, float]], state: rules.GameState
) -> list[tuple[float, float]]:
    """openskill on its own: each seat's rating after the game, from the ratings before it."""
    model = PlackettLuce()
    teams = [[model.rating(mu=mu, sigma=sigma)] for mu, sigma in before]
    rated = model.rate(teams, ranks=[float(r) for r in ratings.ranks(state)])
    return [(team[0].mu, team[0].sigma) for team in rated]


def rating(player_id: str) -> tuple[float, float, int]:
    found = store().players.get(player_id)
    assert found is not None
    return found.mu, found.sigma, found.games


def test_a_game_rated_between_another_games_read_and_write_is_not_lost(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_a, game_b = finished_game(1), finished_game(2)
    with app.app_context():
        ann, _ = store().players.create("ann")
        bo, _ = store().players.create("bo")
        cy, _ = store().players.create("cy")
        start = (ann.mu, ann.sigma)
        # Another process rates game B (ann and cy) after this one read the ratings of game A
        # (ann and bo) and before it writes them: the interleaving of two games ending together.
        real = ratings.new_ratings
        interleaved: list[Any] = []

        def rate_b_meanwhile(players: Any, state: rules.GameState, *basis: Any) -> Any:
            out = real(players, state, *basis)
            if state is game_a and not interleaved:
                interleaved.append(ratings.rate_game("gameB0001", game_b, rated_table(ann, cy)))
            return out

        monkeypatch.setattr(ratings, "new_ratings", rate_b_meanwhile)
        assert ratings.rate_game("gameA0001", game_a, rated_table(ann, bo)) == 2
        assert interleaved == [2]
        # ann's part of A builds on her rating after B; bo's, written in the first pass, on
        # the ratings as they were read (both players new then).
        ann_after_b, cy_after_b = openskill_after([start, start], game_b)
        ann_after_a = openskill_after([ann_after_b, start], game_a)[0]
        bo_after_a = openskill_after([start, start], game_a)[1]
        for player_id, (mu, sigma) in (
            (ann.player_id, ann_after_a),
            (bo.player_id, bo_after_a),
            (cy.player_id, cy_after_b),
        ):
            got_mu, got_sigma, _ = rating(player_id)
            assert got_mu == pytest.approx(mu, abs=1e-9), player_id
            assert got_sigma == pytest.approx(sigma, abs=1e-9), player_id
        assert [rating(p.player_id)[2] for p in (ann, bo, cy)] == [2, 1, 1]
        # Read again (as a game's next read does): nothing counts twice.
        assert ratings.rate_game("gameA0001", game_a, rated_table(ann, bo)) == 0
        assert rating(ann.player_id)[2] == 2


def test_many_rated_games_of_one_player_rated_at_once_all_count(app: Flask) -> None:
    """Eight raters at once on real Redis, each of a game ann won against a new player: however
    they interleave, ann's rating is eight such wins in a row."""
    game = next(
        s for s in (finished_game(seed) for seed in range(100)) if s.winners == [0]
    )  # one game, seat 0 its only winner, rated eight times under eight game ids
    with app.app_context():
        ann, _ = store().players.create("ann")
        rivals = [store().players.create(f"r{n}")[0] for n in range(8)]
    barrier = threading.Barrier(len(rivals))

    def rate(n: int) -> int:
        with app.app_context():
            barrier.wait()
            return ratings.rate_game(f"game{n:04}", game, rated_table(ann, rivals[n]))

    with ThreadPoolExecutor(len(rivals)) as pool:
        assert list(pool.map(rate, range(len(rivals)))) == [2] * len(rivals)
    expected = (ann.mu, ann.sigma)
    for _ in rivals:
        expected = openskill_after([expected, (ann.mu, ann.sigma)], game)[0]
    with app.app_context():
        mu, sigma, games = rating(ann.player_id)
    assert games == len(rivals)
    assert (mu, sigma) == pytest.approx(expected, abs=1e-9)


def test_a_rater_after_a_crash_rates_the_players_left_from_the_first_raters_read() -> None:
    """The first rater counts ann, then Redis refuses bo's part (as when the process dies in
    between): the game's next rater rates bo against ann's rating ahead of the game, not
    against the one this very game gave her."""
    game = finished_game(1)
    with RedisServer() as server:
        admin = redis.Redis.from_url(server.url)
        app = create_app({"REDIS_URL": user_without(server, admin), "REDIS_CLUSTER": False})
        with app.app_context():
            ann, _ = store().players.create("ann")
            bo, _ = store().players.create("bo")
            gid = store().create(rules.dumps(game), "host", [NO_TOKEN] * 2, [], table=b"{}")
            start = (ann.mu, ann.sigma)
            no_bo = keys_not_starting(keys.player_key(bo.player_id))
            user_without(server, admin, keys=["%R~*", *(f"%RW~{k}" for k in no_bo)])
            assert ratings.rate_game(gid, game, rated_table(ann, bo)) == 0
            assert [rating(p.player_id)[2] for p in (ann, bo)] == [1, 0]
            user_without(server, admin)
            assert ratings.rate_game(gid, game, rated_table(ann, bo)) == 1
            expected = openskill_after([start, start], game)
            for player, (mu, sigma) in zip((ann, bo), expected, strict=True):
                got_mu, got_sigma, games = rating(player.player_id)
                assert (got_mu, got_sigma, games) == pytest.approx((mu, sigma, 1), abs=1e-9)


def test_a_player_counted_before_redis_refused_the_leaderboard_gets_there_on_the_next_read() -> (
    None
):
    """ann's fifth rated game counts, then Redis refuses the leaderboard's write (as when the
    process dies between the two): the game's next rater, which finds ann counted already,
    still puts her on the board with the rating her record holds."""
    game = finished_game(1)
    with RedisServer() as server:
        admin = redis.Redis.from_url(server.url)
        app = create_app({"REDIS_URL": user_without(server, admin), "REDIS_CLUSTER": False})
        with app.app_context():
            ann, _ = store().players.create("ann")
            for n in range(LEADERBOARD_GAMES - 1):
                rival, _ = store().players.create(f"r{n}")
                assert ratings.rate_game(f"game{n:04}", game, rated_table(ann, rival)) == 2
            bo, _ = store().players.create("bo")
            user_without(server, admin, "zadd")
            assert ratings.rate_game("game9999", game, rated_table(ann, bo)) == 0
            assert rating(ann.player_id)[2] == LEADERBOARD_GAMES
            user_without(server, admin)
            ratings.rate_game("game9999", game, rated_table(ann, bo))
            board = store().players.leaderboard(PlayerKind.PERSON, 10)
            assert [p.player_id for p in board] == [ann.player_id]
            assert board[0].mu == rating(ann.player_id)[0]
            score = admin.zscore(keys.leaderboard_key(PlayerKind.PERSON.value), ann.player_id)
            assert score == pytest.approx(board[0].display, abs=1e-9)


def test_many_more_raters_of_one_player_at_once_all_count(
    redis_server: RedisServer, redis_client: redis.Redis
) -> None:
    """48 raters at once, each of a game of ann: each refusal means another game of ann
    counted, so every rater ends with its game counted, none left to a next read that nobody
    owes a finished game."""
    game = next(s for s in (finished_game(seed) for seed in range(100)) if s.winners == [0])
    raters = 48
    # A connection each, as raters in as many processes have: the test is of the ratings.
    app = create_app({"REDIS_URL": redis_server.url, "REDIS_POOL_SIZE": raters + 2})
    with app.app_context():
        ann, _ = store().players.create("ann")
        rivals = [store().players.create(f"r{n}")[0] for n in range(raters)]
    barrier = threading.Barrier(raters)

    def rate(n: int) -> int:
        with app.app_context():
            barrier.wait()
            return ratings.rate_game(f"game{n:04}", game, rated_table(ann, rivals[n]))

    with ThreadPoolExecutor(raters) as pool:
        counted = list(pool.map(rate, range(raters)))
    expected = (ann.mu, ann.sigma)
    for _ in rivals:
        expected = openskill_after([expected, (ann.mu, ann.sigma)], game)[0]
    with app.app_context():
        mu, sigma, games = rating(ann.player_id)
    assert games == raters
    assert (mu, sigma) == pytest.approx(expected, abs=1e-9)
    assert counted == [2] * raters
