"""Tournament runner: determinism, local == HTTP, CLI outputs, statistics."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from mexican_train_client import Client

from devstack.redis_server import free_port
from service.tournament.__main__ import main
from service.tournament.runner import game_specs, play_http, play_local, run_http
from service.tournament.stats import wilson

TWO_ROUNDS = {"rounds": 2}


def test_seat_order_and_bot_seeds_come_from_the_seed_alone() -> None:
    a = game_specs(["planner", "greedy", "random", "random"], 5, base_seed=40)
    b = game_specs(["planner", "greedy", "random", "random"], 5, base_seed=40)
    assert a == b
    assert [s.seed for s in a] == [40, 41, 42, 43, 44]
    assert all(sorted(s.bots) == ["greedy", "planner", "random", "random"] for s in a)


def test_local_play_is_deterministic() -> None:
    specs = game_specs(["planner", "random", "greedy"], 3, base_seed=5, options=TWO_ROUNDS)
    first = [play_local(s, record=True) for s in specs]
    again = [play_local(s, record=True) for s in specs]
    assert [(r.digest, r.totals, r.move_log) for r in first] == [
        (r.digest, r.totals, r.move_log) for r in again
    ]
    assert len({r.digest for r in first}) == 3, "different seeds should give different games"


def test_local_and_http_play_identical_games(live_server: str) -> None:
    specs = game_specs(
        ["planner", "greedy", "random", "random"], 3, base_seed=900, options=TWO_ROUNDS
    )
    with Client(live_server) as client:
        remote = [play_http(client, s, record=True) for s in specs]
    local = [play_local(s, record=True) for s in specs]
    for r, loc in zip(remote, local, strict=True):
        assert r.move_log == loc.move_log
        assert (r.rounds, r.totals, r.winners) == (loc.rounds, loc.totals, loc.winners)


def test_concurrent_http_games_match_local(live_server: str) -> None:
    specs = game_specs(["planner", "random"], 6, base_seed=300, options={"rounds": 1})
    results = list(run_http(live_server, specs, concurrency=4))
    assert all(not isinstance(r, BaseException) for r in results), results
    by_index = {r.index: r for r in results if not isinstance(r, BaseException)}
    for spec in specs:
        assert by_index[spec.index].digest == play_local(spec).digest


def test_cli_local_writes_json_and_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jf, cf = tmp_path / "out.json", tmp_path / "games.csv"
    args = ["play", "--local", "--games", "6", "--bots", "planner,random,random", "--rounds", "2"]
    code = main([*args, "--seed", "3", "--json", str(jf), "--csv", str(cf), "--quiet"])
    assert code == 0
    out = capsys.readouterr().out
    assert "planner" in out and "95% CI" in out and "aggregated by name" in out
    doc = json.loads(jf.read_text())
    assert doc["games"] == 6
    assert set(doc["bots"]) == {"planner", "random"}
    assert doc["bots"]["random"]["games"] == 12  # two seats per game, aggregated by name
    for entry in doc["bots"].values():
        assert {"wins", "games", "mean_total", "mean_round", "ci95"} <= set(entry)
    rows = list(csv.DictReader(cf.open()))
    assert len(rows) == 6
    assert [int(r["seed"]) for r in rows] == [3, 4, 5, 6, 7, 8]
    total_wins = sum(e["wins"] for e in doc["bots"].values())
    assert total_wins >= 6  # every game has at least one winner; shared wins count for each


def test_cli_http_matches_cli_local(live_server: str, tmp_path: Path) -> None:
    common = ["play", "--games", "4", "--bots", "planner,greedy", "--rounds", "1", "--quiet"]
    assert main([*common, "--server", live_server, "--csv", str(tmp_path / "h.csv")]) == 0
    assert main([*common, "--local", "--csv", str(tmp_path / "l.csv")]) == 0
    assert (tmp_path / "h.csv").read_text() == (tmp_path / "l.csv").read_text()


def test_cli_rejects_unknown_bot(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--local", "--bots", "planner,nobody", "--games", "1"]) == 2
    assert "nobody" in capsys.readouterr().out


@pytest.mark.parametrize(("wins", "n"), [(0, 10), (5, 10), (10, 10), (450, 1000), (1, 3)])
def test_wilson_interval_brackets_the_rate(wins: int, n: int) -> None:
    lo, hi = wilson(wins, n)
    assert 0.0 <= lo <= wins / n <= hi <= 1.0
    wider = wilson(wins * 10, n * 10)
    assert wider[1] - wider[0] < hi - lo  # more games, narrower interval


def test_cli_reports_an_unreachable_server(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    assert main(["play", "--server", url, "--games", "1", "--quiet"]) == 2
    assert "cannot reach" in capsys.readouterr().out


def test_cli_plays_a_bot_given_as_module_and_factory(tmp_path: Path) -> None:
    """A bot living outside the package joins by ``module:Factory``; results use that name."""
    jf = tmp_path / "out.json"
    custom = "service.bots.simple:GreedyBot"
    args = ["play", "--local", "--games", "2", "--bots", f"{custom},random", "--rounds", "1"]
    assert main([*args, "--quiet", "--json", str(jf)]) == 0
    assert set(json.loads(jf.read_text())["bots"]) == {custom, "random"}
    assert main(["play", "--local", "--games", "1", "--bots", "no.such.module:Bot"]) == 2
