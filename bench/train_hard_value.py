"""Train ``bench/hard_value.json``: ``python -m bench.train_hard_value``.

Plays 4-player ``standard`` games in which every seat moves with ``hard``'s roll-out policy
(the planner with its chain search cut to a tenth), so the states and their outcomes are
those a roll-out meets. Every ``--every``-th state of a round in play is kept, with each seat's
features (``bench.hard_value.features``) and its round points minus the others' mean once the
round ended. A network of one hidden layer is fitted to them (mean squared error, Adam) on
all games but the last tenth, which measure it: the script prints the held-out error of the
network, of a linear fit and of the hands' points alone (the guess of the ``short`` variant).

Needs PyTorch, for training only (``pip install torch``); the bench reads the JSON with plain
Python. Seeds are fixed, so a run on the same code gives the same data.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import time
from pathlib import Path

from bench.hard_value import MODEL, SEAT_FEATURES, features
from service import rules
from service.bots.hard import policy
from service.rules import Status
from service.tournament.runner import BETWEEN_ROUNDS

Rows = list[tuple[list[float], float]]


def game_rows(game: int, every: int) -> Rows:
    """The kept (features, margin) pairs of one self-play game."""
    state = rules.new_game([f"p{s}" for s in range(4)], "standard", None, 900_000 + game)
    pick = random.Random(game)
    rows: Rows = []
    pending: list[list[list[float]]] = []
    while state.status != Status.GAME_OVER:
        if state.status in BETWEEN_ROUNDS:
            last = [s[-1] for s in state.scores] if state.scores[0] else []
            for kept in pending:
                for seat, x in enumerate(kept):
                    rows.append((x, last[seat] - (sum(last) - last[seat]) / 3))
            pending = []
            rules.deal(state)
            continue
        if state.tiles_played == 0 and not state.drawn and pick.randrange(every) == 0:
            pending.append([features(state, seat) for seat in range(4)])
        seat = state.turn
        assert seat is not None
        rules.apply(state, seat, policy(state, seat, rules.legal_moves(state, seat)))
    last = [s[-1] for s in state.scores]
    for kept in pending:
        for seat, x in enumerate(kept):
            rows.append((x, last[seat] - (sum(last) - last[seat]) / 3))
    return rows


def _task(args: tuple[int, int]) -> Rows:
    return game_rows(*args)


def hand_margin(x: list[float]) -> float:
    """The ``short`` variant's guess from the features: the hands' points as they stand."""
    k = len(SEAT_FEATURES)
    pts = [x[i * k] * 10 for i in range(4)]
    return pts[0] - sum(pts[1:]) / 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--every", type=int, default=2, help="keep one state in this many")
    parser.add_argument("--hidden", type=int, default=24)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=MODEL)
    args = parser.parse_args()

    import torch  # training only: the bench itself needs nothing beyond the project

    start = time.monotonic()
    with mp.Pool(args.jobs) as pool:
        per_game = pool.map(_task, [(g, args.every) for g in range(args.games)], chunksize=4)
    held = max(1, args.games // 10)
    train = [r for rows in per_game[:-held] for r in rows]
    test = [r for rows in per_game[-held:] for r in rows]
    print(f"{len(train)} training rows, {len(test)} held out, {time.monotonic() - start:.0f} s")

    torch.set_num_threads(1)  # a shared machine
    torch.manual_seed(0)
    xt = torch.tensor([x for x, _ in train])
    yt = torch.tensor([y for _, y in train]).unsqueeze(1)
    xv = torch.tensor([x for x, _ in test])
    yv = torch.tensor([y for _, y in test]).unsqueeze(1)
    mean = xt.mean(0)
    scale = 1 / xt.std(0).clamp(min=1e-6)
    zt, zv = (xt - mean) * scale, (xv - mean) * scale

    def fit(net: torch.nn.Module, epochs: int) -> float:
        opt = torch.optim.Adam(net.parameters(), lr=3e-3)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
        for _ in range(epochs):
            order = torch.randperm(len(zt))
            for i in range(0, len(zt), 1024):
                batch = order[i : i + 1024]
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(net(zt[batch]), yt[batch])
                loss.backward()
                opt.step()
            sched.step()
        with torch.no_grad():
            return float(torch.nn.functional.mse_loss(net(zv), yv))

    hand = torch.tensor([hand_margin(x) for x, _ in test]).unsqueeze(1)
    print(f"held-out RMSE, mean alone: {float(yv.std()):.2f}")
    print(f"held-out RMSE, hand points: {float(((hand - yv) ** 2).mean().sqrt()):.2f}")
    linear = torch.nn.Linear(zt.shape[1], 1)
    print(f"held-out RMSE, linear: {fit(linear, args.epochs // 2) ** 0.5:.2f}")
    net = torch.nn.Sequential(
        torch.nn.Linear(zt.shape[1], args.hidden), torch.nn.ReLU(), torch.nn.Linear(args.hidden, 1)
    )
    print(f"held-out RMSE, network ({args.hidden} hidden): {fit(net, args.epochs) ** 0.5:.2f}")

    first, _, last = net
    args.out.write_text(
        json.dumps(
            {
                "mean": [round(v, 6) for v in mean.tolist()],
                "scale": [round(v, 6) for v in scale.tolist()],
                "w1": [[round(v, 6) for v in row] for row in first.weight.tolist()],
                "b1": [round(v, 6) for v in first.bias.tolist()],
                "w2": [round(v, 6) for v in last.weight[0].tolist()],
                "b2": round(float(last.bias.detach()), 6),
            }
        )
        + "\n"
    )
    print(f"wrote {args.out} in {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
