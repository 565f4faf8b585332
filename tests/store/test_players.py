"""Players in Redis: tokens kept as digests, a game counted once, leaderboards from five games."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from service.store import keys
from service.store.players import (
    LEADERBOARD_GAMES,
    START_MU,
    PlayerKind,
    Players,
    Recorded,
    Result,
    bot_player_id,
)


@pytest.fixture()
def players(redis_client: redis.Redis) -> Players:
    return Players(redis_client)


def test_a_person_is_known_by_its_token_only(players: Players, redis_client: redis.Redis) -> None:
    person, token = players.create("Ada")
    assert players.identify(token) == person
    assert players.get(person.player_id) == person
    stored = redis_client.hgetall(keys.player_key(person.player_id))
    assert token.encode() not in b"".join(stored.values())
    assert (person.kind, person.mu, person.games) == (PlayerKind.PERSON, START_MU, 0)


@pytest.mark.parametrize(
    "forged",
    ["", "p.", "p.nosuchplayer1.x", "q.whatever", "p.../../etc.x", "p.bot-easy.x"],
)
def test_a_forged_or_foreign_token_is_nobody(players: Players, forged: str) -> None:
    players.create("Ada")
    assert players.identify(forged) is None


def test_a_changed_secret_is_nobody(players: Players) -> None:
    _, token = players.create("Ada")
    assert players.identify(token[:-1] + ("A" if token[-1] != "A" else "B")) is None


def test_bots_are_made_once_and_have_no_token(players: Players, redis_client: redis.Redis) -> None:
    first = players.ensure_bot("hard")
    again = players.ensure_bot("hard")
    assert first == again and first.player_id == bot_player_id("hard") == "bot-hard"
    assert first.kind is PlayerKind.BOT
    assert redis_client.hget(keys.player_key("bot-hard"), "t") is None


@pytest.mark.parametrize("player_id", ["", "short", "x" * 40, "{lobby}", "bot-Hard"])
def test_unknown_or_malformed_ids(players: Players, player_id: str) -> None:
    assert players.get(player_id) is None


def test_a_game_counts_once(players: Players) -> None:
    person, _ = players.create("Ada")
    result = Result(person.player_id, 27.5, 7.0, won=True, seen_games=0)
    assert players.record("game0001", result) is Recorded.COUNTED
    again = Result(person.player_id, 99.0, 1.0, won=True, seen_games=1)
    assert players.record("game0001", again) is Recorded.ALREADY
    after = players.get(person.player_id)
    assert after is not None
    assert (after.mu, after.sigma, after.games, after.wins) == (27.5, 7.0, 1, 1)
    assert after.display == pytest.approx(27.5 - 21.0)


def test_a_result_computed_from_a_rating_another_game_changed_is_refused(
    players: Players,
) -> None:
    """Two games of one player ending together: the one read before the other counted is not
    written over it, and says so, so that its rater computes it again."""
    person, _ = players.create("Ada")
    first = Result(person.player_id, 27.5, 7.0, won=True, seen_games=0)
    late = Result(person.player_id, 22.0, 7.5, won=False, seen_games=0)  # read before `first`
    assert players.record("game0001", first) is Recorded.COUNTED
    assert players.record("game0002", late) is Recorded.STALE
    after = players.get(person.player_id)
    assert after is not None
    assert (after.mu, after.sigma, after.games, after.wins) == (27.5, 7.0, 1, 1)
    redone = Result(person.player_id, 26.0, 6.5, won=False, seen_games=after.games)
    assert players.record("game0002", redone) is Recorded.COUNTED
    final = players.get(person.player_id)
    assert final is not None and (final.mu, final.games, final.wins) == (26.0, 2, 1)


def test_the_leaderboard_shows_the_rating_of_the_last_game_counted(
    players: Players, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two games of one player counted back to back by two raters: the first rater's leaderboard
    write may come after the second's, and must not put the older rating back."""
    person, _ = players.create("Ada")
    for n in range(LEADERBOARD_GAMES - 1):
        players.record(f"game{n:04}", Result(person.player_id, 25.0, 5.0, True, n))
    real = players._rate
    newest = Result(person.player_id, 40.0, 1.0, True, LEADERBOARD_GAMES)

    def another_rater_right_after(*args: Any, **kwargs: Any) -> Any:
        done = real(*args, **kwargs)
        if kwargs["args"][0] == "first001":  # between this game's script and its board write
            assert players.record("second01", newest) is Recorded.COUNTED
        return done

    monkeypatch.setattr(players, "_rate", another_rater_right_after)
    first = Result(person.player_id, 10.0, 5.0, False, LEADERBOARD_GAMES - 1)
    assert players.record("first001", first) is Recorded.COUNTED
    after = players.get(person.player_id)
    assert after is not None and (after.mu, after.sigma) == (40.0, 1.0)
    board = keys.leaderboard_key(PlayerKind.PERSON.value)
    assert redis_client.zscore(board, person.player_id) == pytest.approx(after.display)


def test_leaderboards_take_players_from_five_games_by_display(players: Players) -> None:
    strong, _ = players.create("strong")
    weak, _ = players.create("weak")
    bot = players.ensure_bot("easy")
    for n in range(LEADERBOARD_GAMES):
        players.record(f"game{n:04}", Result(strong.player_id, 30.0, 2.0, True, n))
        players.record(f"game{n:04}", Result(bot.player_id, 20.0, 2.0, False, n))
        if n < LEADERBOARD_GAMES - 1:  # one game short
            players.record(f"game{n:04}", Result(weak.player_id, 40.0, 1.0, True, n))
        board = players.leaderboard(PlayerKind.PERSON, 10)
        assert [p.player_id for p in board] == ([strong.player_id] if n == 4 else [])
    players.record("game9999", Result(weak.player_id, 40.0, 1.0, True, LEADERBOARD_GAMES - 1))
    board = players.leaderboard(PlayerKind.PERSON, 10)
    assert [p.name for p in board] == ["weak", "strong"]
    assert [p.name for p in players.leaderboard(PlayerKind.PERSON, 1)] == ["weak"]
    assert [p.player_id for p in players.leaderboard(PlayerKind.BOT, 10)] == ["bot-easy"]
