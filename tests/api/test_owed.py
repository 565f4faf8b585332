"""Writes owed after a stored change (service/api/owed.py), on a real Redis: made once Redis
takes them; one that Redis refuses for itself holds none of the others back and is given up in
the end; a Redis that is away holds them all for the next turn."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
from prometheus_client import REGISTRY

from devstack.gunicorn import Gunicorn
from devstack.redis_server import RedisServer
from service.api import owed
from tests.eventually import eventually
from tests.metrics import metric_total
from tests.redis_clients import flushed_client, keys_not_starting, user_without


def made_within(check: Callable[[], bool], seconds: float = 5) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_write_refused_for_itself_holds_back_no_other(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(owed, "RETRY_SECONDS", 0.05)
    monkeypatch.setattr(owed, "MAX_TRIES", 5)
    before = given_up(owed.GiveUp.TRIES)
    with flushed_client(redis_server) as client:
        owing = owed.Owed()
        owing.add("bad", lambda: client.execute_command("NO.SUCH.COMMAND"))
        owing.add("good", lambda: client.set("made", 1))
        assert made_within(lambda: client.get("made") == b"1")
        assert made_within(lambda: len(owing) == 0), "the refused write was never given up"
    assert given_up(owed.GiveUp.TRIES) == before + 1


def given_up(reason: owed.GiveUp) -> float:
    """This process's count of owed writes given up for ``reason``."""
    return REGISTRY.get_sample_value("owed_writes_given_up_total", {"reason": reason}) or 0.0


def test_a_write_that_fails_outside_redis_is_dropped_and_stops_no_other(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(owed, "RETRY_SECONDS", 0.05)
    before = given_up(owed.GiveUp.FAULT)
    with flushed_client(redis_server) as client:
        owing = owed.Owed()
        owing.add("broken", lambda: client.set("never", broken_value(object())))
        owing.add("good", lambda: client.set("made", 1))
        assert made_within(lambda: client.get("made") == b"1")
        assert made_within(lambda: len(owing) == 0), "the broken write is still owed"
        assert given_up(owed.GiveUp.FAULT) == before + 1
        owing.add("later", lambda: client.set("later", 1))
        assert made_within(lambda: client.get("later") == b"1")


def broken_value(value: object) -> bytes:
    raise TypeError(f"not serialisable: {value!r}")


def test_writes_wait_while_redis_is_away_and_are_made_when_it_is_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(owed, "RETRY_SECONDS", 0.05)
    with RedisServer(data_dir=str(tmp_path)) as server:
        client = redis.Redis.from_url(server.url, socket_timeout=0.5)
        owing = owed.Owed()
        server.stop()
        for n in range(3):
            owing.add(f"w{n}", lambda n=n: client.set(f"made{n}", 1))
        time.sleep(0.3)
        assert len(owing) == 3
        server.start()
        assert made_within(lambda: len(owing) == 0)
        assert [client.get(f"made{n}") for n in range(3)] == [b"1"] * 3


class _Hooks:
    def __init__(self) -> None:
        self.away = True
        self.queued: list[object] = []

    def enqueue(self, made: list[object], at_ms: int) -> None:
        if self.away:
            raise redis.ConnectionError("away")
        self.queued.extend(made)


def test_deliveries_owed_by_a_stored_change_survive_a_failed_change_at_its_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two changes at one version in one process: one stored, whose deliveries Redis refused
    (owed), and one whose compare-and-set failed with a Redis error (its deliveries owed if it
    turns out stored). Only the first is in the log: its deliveries must still be sent."""
    from types import SimpleNamespace

    from service.api import notifications

    monkeypatch.setattr(owed, "RETRY_SECONDS", 0.05)
    monkeypatch.setattr(owed, "OWED", owed.Owed())
    hooks = _Hooks()
    games = SimpleNamespace(hooks=hooks, log_records=lambda game_id, index: [b"stored"])
    monkeypatch.setattr(notifications, "store", lambda: games)
    monkeypatch.setattr(notifications, "_player", lambda table, seat: "p1")
    monkeypatch.setattr(notifications, "_all_deliveries", lambda *args: [args[4][-1].record.text])
    table: Any = SimpleNamespace(seats=[None])
    state: Any = None

    def change(text: str) -> Any:
        return [SimpleNamespace(record=SimpleNamespace(at_ms=1, text=text))]

    notifications.notify("g1", state, table, change("stored"), 5)
    notifications.notify_if_stored("g1", state, table, change("lost"), 5, (4, b"lost"))
    hooks.away = False
    assert made_within(lambda: len(owed.OWED) == 0)
    assert hooks.queued == ["stored"]


def test_a_look_that_finds_nothing_yet_is_made_again_later_and_given_up_in_the_end(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A look for a change whose compare-and-set failed (owed.NotYet while the change is not
    in Redis): made again at growing intervals, so a change stored after the first look is
    still acted on, and given up after LOOK_FOR_SECONDS when it never is."""
    monkeypatch.setattr(owed, "RETRY_SECONDS", 0.02)
    monkeypatch.setattr(owed, "LOOK_FIRST_SECONDS", 0.1)
    monkeypatch.setattr(owed, "LOOK_FOR_SECONDS", 1.0)
    with flushed_client(redis_server) as client:
        owing, looks = owed.Owed(), {"found": 0, "never": 0}

        def look(name: str) -> Callable[[], None]:
            def made() -> None:
                looks[name] += 1
                if client.get(name) is None:
                    raise owed.NotYet
                client.set(f"{name}:done", 1)

            return made

        owing.add("found", look("found"))
        owing.add("never", look("never"))
        assert made_within(lambda: looks["found"] >= 2)
        client.set("found", 1)  # the change lands after two looks
        assert made_within(lambda: client.get("found:done") == b"1")
        assert made_within(lambda: len(owing) == 0, 3), "a look that never finds is kept"
        # 0.1, 0.2, 0.4 s apart, then the next would pass 1 s: a few looks, not one a turn.
        assert 3 <= looks["never"] <= 5, looks


def test_a_write_to_a_redis_that_is_gone_holds_back_no_other_game(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A write owed to a Redis that never comes back (a node gone), owed first, while another
    game's write to a Redis that answers is made; a later write of the first game keeps its
    place behind it."""
    monkeypatch.setattr(owed, "RETRY_SECONDS", 0.05)
    with RedisServer(data_dir=str(tmp_path)) as gone, flushed_client(redis_server) as client:
        dead = redis.Redis.from_url(gone.url, socket_timeout=0.5)
        gone.stop()
        owing = owed.Owed()
        owing.add("delist:g1", lambda: dead.set("x", 1))
        owing.add("list:g1", lambda: client.set("g1", 1))
        owing.add("list:g2", lambda: client.set("g2", 1))
        assert made_within(lambda: client.get("g2") == b"1"), "held back by another game's write"
        time.sleep(0.3)
        assert client.get("g1") is None, "made before the earlier write of its game"
        assert len(owing) == 2


def test_an_owed_write_is_given_up_after_its_lifetime(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(owed, "RETRY_SECONDS", 0.05)
    monkeypatch.setattr(owed, "MAX_AGE_SECONDS", 0.5)
    with RedisServer(data_dir=str(tmp_path)) as gone:
        dead = redis.Redis.from_url(gone.url, socket_timeout=0.5)
        gone.stop()
        owing = owed.Owed()
        owing.add("work:g1:None", lambda: dead.set("x", 1))
        assert made_within(lambda: len(owing) == 0), "a write Redis never takes is owed for ever"


def test_an_owed_write_dropped_for_a_newer_one_with_the_queue_full_is_counted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(owed, "MAX_OWED", 1)
    before = given_up(owed.GiveUp.FULL)
    with RedisServer(data_dir=str(tmp_path)) as gone:
        dead = redis.Redis.from_url(gone.url, socket_timeout=0.5)
        gone.stop()
        owing = owed.Owed()
        owing.add("work:g1:None", lambda: dead.set("x", 1))
        owing.add("work:g2:None", lambda: dead.set("y", 1))
        assert len(owing) == 1
        assert given_up(owed.GiveUp.FULL) == before + 1
        with owing._lock:
            owing._writes.clear()


def test_a_write_made_while_its_game_owes_one_goes_behind_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A table's listing owed while Redis is away, then, Redis back before the owed write's
    next try, the delisting of the table a join filled: the delisting is made after the
    listing (it came last), and the table ends out of the lobby; another game's write is made
    at once."""
    monkeypatch.setattr(owed, "RETRY_SECONDS", 3.0)  # Redis is back well before the next try
    monkeypatch.setattr(owed, "OWED", owed.Owed())
    lobby = RedisServer(data_dir=str(tmp_path))
    with lobby:
        client = redis.Redis.from_url(lobby.url, socket_timeout=0.5)
        lobby.stop()
        owed.write_or_owe("list:g1", lambda: client.sadd("lobby", "g1"))
        assert len(owed.OWED) == 1
        lobby.start()
        owed.write_or_owe("delist:g1", lambda: client.srem("lobby", "g1"))
        owed.write_or_owe("list:g2", lambda: client.sadd("lobby", "g2"))
        assert client.smembers("lobby") == {b"g2"}, "another game's write was held back"
        assert made_within(lambda: len(owed.OWED) == 0, 20), "the owed writes were never made"
        assert client.smembers("lobby") == {b"g2"}, "the older listing overtook the delisting"


def test_writes_owed_and_given_up_are_counted_in_the_servers_metrics(tmp_path: Path) -> None:
    """A real server whose Redis refuses the worker's queue (an ACL: the table of bots stored,
    its hand-over owed), then goes away. /metrics shows the write owed, then, once it is given
    up after OWED_GIVE_UP_SECONDS, none owed and one given up (reason ``age``): a write given up
    is seen by the operator's scraper, not in the log alone."""
    with RedisServer(data_dir=str(tmp_path / "redis")) as server:
        admin = redis.Redis.from_url(server.url)
        app_url = user_without(server, admin, keys=keys_not_starting("mt:{work}"))
        env = {"OWED_GIVE_UP_SECONDS": "3", "LOG_LEVEL": "warning"}
        app = Gunicorn(app_url, workers=1, env=env, log_path=tmp_path / "app.log")
        with app:
            assert owed_metrics(app) == (0, 0)
            # More than a request's budget of bots' turns: the rest is handed to the worker.
            players = [{"name": f"b{n}", "bot": "hard"} for n in range(4)]
            body = {"players": players, "auto_deal": True, "seed": 3, "options": {"rounds": 2}}
            created = requests.post(app.url + "/api/v1/games", json=body, timeout=10)
            assert created.status_code == 201, created.text
            owing, given_up = owed_metrics(app)
            assert owing >= 1 and given_up == 0, (owing, given_up)
            server.stop()  # Redis goes away: the write is never taken
            eventually(lambda: owed_metrics(app)[0] == 0, 30, "the owed write is kept")
            assert owed_metrics(app) == (0, owing)
        assert "owed write given up after 3 s" in (tmp_path / "app.log").read_text()


def owed_metrics(app: Gunicorn) -> tuple[float, float]:
    """The server's writes owed at the scrape, and those given up for their age."""
    text = requests.get(app.url + "/metrics", timeout=10).text
    return (
        metric_total(text, "owed_writes"),
        metric_total(text, "owed_writes_given_up_total", reason=owed.GiveUp.AGE),
    )
