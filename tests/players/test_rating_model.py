"""The ratings' arithmetic against its published sources, without a server: openskill's
Plackett-Luce model is Weng and Lin's Algorithm 4 ("A Bayesian Approximation Method for Online
Ranking", JMLR 12, 2011) with openskill's defaults, and openskill's own published example."""

from __future__ import annotations

import math

import pytest
from openskill.models import PlackettLuce

from service.api.ratings import MODEL, new_ratings, ranks
from service.store.players import START_MU, START_SIGMA, Player, PlayerKind
from tests.rules.helpers import play_random_game

BETA, KAPPA, TAU = 25 / 6, 0.0001, 25 / 300  # openskill's defaults besides mu and sigma


def weng_lin_plackett_luce(
    ratings: list[tuple[float, float]], rank: list[int]
) -> list[tuple[float, float]]:
    """Algorithm 4 for one-player teams, ties shared (A_q), gamma = sigma / c, and openskill's
    additive dynamics: tau is added to every sigma before the update."""
    rs = [(mu, math.sqrt(sigma * sigma + TAU * TAU)) for mu, sigma in ratings]
    c = math.sqrt(sum(sigma * sigma + BETA * BETA for _, sigma in rs))
    n = len(rs)
    tied = [sum(1 for s in range(n) if rank[s] == rank[q]) for q in range(n)]
    below = [sum(math.exp(rs[s][0] / c) for s in range(n) if rank[s] >= rank[q]) for q in range(n)]
    out = []
    for i, (mu, sigma) in enumerate(rs):
        omega = delta = 0.0
        for q in range(n):
            if rank[i] < rank[q]:
                continue  # i is not among the teams ranked at or below q
            p = math.exp(mu / c) / below[q]
            omega += ((q == i) - p) / tied[q]
            delta += p * (1 - p) / tied[q]
        gamma = sigma / c
        new_sigma2 = sigma * sigma * max(1 - gamma * sigma * sigma / (c * c) * delta, KAPPA)
        out.append((mu + sigma * sigma / c * omega, math.sqrt(new_sigma2)))
    return out


def test_openskill_reproduces_its_published_example_without_dynamics() -> None:
    # openskill's README (3.x, before tau became a default): a1, a2 beat b1, b2.
    model = PlackettLuce(tau=0)
    teams = [
        [model.rating(), model.rating(mu=32.444, sigma=5.123)],
        [model.rating(mu=43.381, sigma=2.421), model.rating(mu=25.188, sigma=6.211)],
    ]
    got = [x for team in model.rate(teams) for r in team for x in (r.mu, r.sigma)]
    published = [
        *(28.669648436582808, 8.071520788025197),
        *(33.83086971107981, 5.062772998705765),
        *(43.071274808241974, 2.4166900452721256),
        *(23.149503312339064, 6.1378606973362135),
    ]
    assert got == pytest.approx(published, abs=1e-12)


def test_the_model_has_the_contracts_defaults() -> None:
    assert (MODEL.mu, MODEL.sigma) == (START_MU, START_SIGMA) == (25.0, 25 / 3)
    assert (MODEL.beta, MODEL.kappa, MODEL.tau) == pytest.approx((BETA, KAPPA, TAU))


@pytest.mark.parametrize("seats", [2, 4, 7, 14])
def test_a_games_new_ratings_are_weng_lin_algorithm_4(seats: int) -> None:
    state, _ = play_random_game("standard", seats, seats, {"rounds": 2})
    before = [(25.0 + 3 * s - seats, 8.333 - 0.4 * s) for s in range(seats)]
    players = [
        Player(f"player{s:06}", f"p{s}", PlayerKind.PERSON, mu, sigma, games=s)
        for s, (mu, sigma) in enumerate(before)
    ]
    # The contract's ranking, read from the totals: winners 1, then by total, ties shared.
    totals, winners = state.totals(), set(state.winners or [])
    others = sorted({t for s, t in enumerate(totals) if s not in winners})
    expected_rank = [1 if s in winners else 2 + others.index(totals[s]) for s in range(seats)]
    assert ranks(state) == expected_rank
    results = new_ratings(players, state, before)
    for result, player, (mu, sigma) in zip(
        results, players, weng_lin_plackett_luce(before, expected_rank), strict=True
    ):
        assert (result.mu, result.sigma) == pytest.approx((mu, sigma), abs=1e-9)
        assert (result.player_id, result.seen_games) == (player.player_id, player.games)
        assert result.won == (players.index(player) in winners)


def test_ranks_are_order_only_tied_ranks_share_and_gaps_do_not_matter() -> None:
    # Dense ranks (1, 2, 2, 3) and competition ranks (1, 2, 2, 4) give the same update.
    start = [(25.0, 25 / 3)] * 4
    assert weng_lin_plackett_luce(start, [1, 2, 2, 3]) == weng_lin_plackett_luce(
        start, [1, 2, 2, 4]
    )
    dense = MODEL.rate([[MODEL.rating()] for _ in range(4)], ranks=[1.0, 2.0, 2.0, 3.0])
    gaps = MODEL.rate([[MODEL.rating()] for _ in range(4)], ranks=[1.0, 2.0, 2.0, 4.0])
    assert [(t[0].mu, t[0].sigma) for t in dense] == [(t[0].mu, t[0].sigma) for t in gaps]
    tied = [x for mu_sigma in weng_lin_plackett_luce(start, [1, 2, 2, 3]) for x in mu_sigma]
    assert [x for t in dense for x in (t[0].mu, t[0].sigma)] == pytest.approx(tied, abs=1e-12)
