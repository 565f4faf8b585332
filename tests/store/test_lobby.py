"""The lobby's listing and the seek buckets' claims, on a real Redis."""

from __future__ import annotations

import threading

import pytest
import redis

from service.store import keys
from service.store.lobby import Filter, Lobby, TableKind


@pytest.fixture()
def lobby(redis_client: redis.Redis) -> Lobby:
    return Lobby(redis_client, bucket_ttl=3600)


THREE = TableKind("standard", 3, 0)


def test_listing_is_newest_first_and_forgets_removed_tables(lobby: Lobby) -> None:
    lobby.add(THREE, {f"table{n:04}": 1000 + n for n in range(5)})
    lobby.add(THREE, {"tie": 1002})

    def ids(below: float | None, skip: int, count: int) -> list[str]:
        return [game_id for game_id, _ in lobby.page(Filter(), below, skip, count)]

    assert lobby.page(Filter(), None, 0, 2) == [("table0004", 1004.0), ("table0003", 1003.0)]
    assert ids(None, 0, 4) == ["table0004", "table0003", "tie", "table0002"]
    assert ids(1002, 1, 4) == ["table0002", "table0001", "table0000"]  # after one at 1002
    lobby.remove("table0004", "table0002")
    lobby.remove()
    assert ids(None, 0, 10) == ["table0003", "tie", "table0001", "table0000"]
    assert ids(1003, 1, 10) == ["tie", "table0001", "table0000"]


def listed(lobby: Lobby, wanted: Filter) -> list[str]:
    return [game_id for game_id, _ in lobby.page(wanted, None, 0, 100)]


def test_a_table_is_listed_under_every_filter_it_fits_and_leaves_them_all(
    lobby: Lobby, redis_client: redis.Redis
) -> None:
    """One script lists a table in the set of each combination of filters it fits, another
    takes it out of all of them: a filter reads only the tables that fit it."""
    lobby.add(THREE, {"three000": 1})
    lobby.add(TableKind("classic", 2, 30), {"two00000": 2})
    assert listed(lobby, Filter()) == ["two00000", "three000"]
    assert listed(lobby, Filter(players=3)) == ["three000"]
    assert listed(lobby, Filter("standard", 3, 0)) == ["three000"]
    assert listed(lobby, Filter("classic", turn_seconds=30)) == ["two00000"]
    assert listed(lobby, Filter("classic", 3)) == []
    lobby.remove("three000", "gone0000")
    assert [listed(lobby, f) for f in (Filter(), Filter(players=3))] == [["two00000"], []]
    assert all(redis_client.zscore(key, "three000") is None for key in THREE.sets())
    assert redis_client.hkeys(keys.LOBBY_KINDS) == [b"two00000"]


def test_a_table_listed_without_its_kind_leaves_that_listing_once_listed_with_it(
    lobby: Lobby, redis_client: redis.Redis
) -> None:
    redis_client.zadd(keys.LOBBY_UNSORTED, {"old00000": 5, "old00001": 6, "gone0000": 7})
    assert lobby.unsorted(2) == [("gone0000", 7.0), ("old00001", 6.0)]
    lobby.add(THREE, {"old00001": 6})
    lobby.remove("gone0000")
    assert lobby.unsorted(10) == [("old00000", 5.0)]
    assert listed(lobby, Filter(players=3)) == ["old00001"]
    lobby.remove("old00000")
    assert lobby.unsorted(10) == []


def test_seekers_fill_the_oldest_table_then_make_a_new_one(lobby: Lobby) -> None:
    claims = [lobby.claim("b", f"fresh{n:04}", 3, 1000 + n, claim_id=f"c{n}") for n in range(7)]
    assert claims == [
        ("fresh0000", 0, True),
        ("fresh0000", 1, False),
        ("fresh0000", 2, False),
        ("fresh0003", 0, True),
        ("fresh0003", 1, False),
        ("fresh0003", 2, False),
        ("fresh0006", 0, True),
    ]
    assert lobby.claim("other", "fresh9999", 3, 2000, claim_id="c") == ("fresh9999", 0, True)


def test_a_closed_table_takes_no_more_seekers(lobby: Lobby) -> None:
    lobby.claim("b", "first0000", 4, 1, claim_id="c1")
    lobby.claim("b", "first0000", 4, 2, claim_id="c2")
    assert lobby.close("b", "first0000") == 2
    assert lobby.close("b", "first0000") == 0
    assert lobby.claim("b", "second000", 4, 3, claim_id="c3") == ("second000", 0, True)


def test_a_seat_given_back_is_claimed_again_first(lobby: Lobby) -> None:
    claimed = [lobby.claim("b", "first0000", 3, n, claim_id=f"c{n}") for n in range(3)]
    assert [seat for _, seat, _ in claimed] == [0, 1, 2]
    assert lobby.claim("b", "second000", 3, 10, claim_id="c10") == ("second000", 0, True)
    assert lobby.give_back("b", "c2")  # the table whose last claim failed, first again
    assert lobby.claim("b", "fresh0000", 3, 11, claim_id="c11") == ("first0000", 2, False)
    assert lobby.claim("b", "fresh0001", 3, 12, claim_id="c12") == ("second000", 1, False)
    assert lobby.close("b", "first0000") == 3  # its last seat taken at last
    assert not lobby.give_back("b", "c11")  # closed: given back no more
    assert lobby.claim("b", "fresh0002", 3, 13, claim_id="c13") == ("second000", 2, False)


def test_concurrent_seekers_never_overfill_a_table(redis_client: redis.Redis) -> None:
    """Eight threads seek at once, each on a connection of the client's pool (a cluster
    client's too): every seat is given once."""
    got: list[tuple[str, int, bool]] = []
    lock = threading.Lock()

    def seek(n: int) -> None:
        mine = Lobby(redis_client, bucket_ttl=3600)
        for m in range(25):
            claim = mine.claim("busy", f"t{n}x{m:05}", 4, n * 100 + m, claim_id=f"{n}.{m}")
            with lock:
                got.append(claim)

    threads = [threading.Thread(target=seek, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seats = [(game, seat) for game, seat, _ in got]
    assert len(set(seats)) == len(seats) == 200
    tables = {game for game, _ in seats}
    assert len(tables) == 50
    assert all(sorted(s for g, s in seats if g == t) == [0, 1, 2, 3] for t in tables)
    assert sum(created for _, _, created in got) == 50


def test_a_delisting_leaves_a_table_listed_since_its_kind_was_read_to_its_next_try(
    lobby: Lobby, redis_client: redis.Redis
) -> None:
    """The script delists a table only as of the kind read before it (its sets are its keys):
    one listed in between is left whole and named, and the next try takes it out."""
    lobby.add(THREE, {"late0000": 1})
    assert lobby._delist(b"", ["late0000"]) == ["late0000"]  # read as listed under no kind
    assert listed(lobby, Filter(players=3)) == ["late0000"]
    lobby.remove("late0000")
    assert listed(lobby, Filter()) == listed(lobby, Filter(players=3)) == []
    assert redis_client.hlen(keys.LOBBY_KINDS) == 0


def test_a_table_sorted_into_its_sets_while_its_delisting_runs_leaves_them_all(
    lobby: Lobby, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table listed without its kind (by an older version) is read so by a delisting, then
    another instance's listing sorts it into the sets of its kind before the delisting's
    script runs: the script leaves it, and the delisting's next try takes it out of them."""
    redis_client.zadd(keys.LOBBY_UNSORTED, {"late0000": 1})
    read, sorted_once = Lobby._by_kind, []

    def read_then_sorted(self: Lobby, game_ids: list[str]) -> list[tuple[bytes, list[str]]]:
        found = read(self, game_ids)
        if not sorted_once:
            Lobby(redis_client, bucket_ttl=3600).add(THREE, {"late0000": 1})
            sorted_once.append(True)
        return found

    monkeypatch.setattr(Lobby, "_by_kind", read_then_sorted)
    lobby.remove("late0000")
    assert listed(lobby, Filter()) == listed(lobby, Filter(players=3)) == []
    assert redis_client.hlen(keys.LOBBY_KINDS) == 0
    assert lobby.unsorted(10) == []


def test_a_seek_buckets_keys_expire_once_its_tables_can_no_longer_live(
    redis_client: redis.Redis,
) -> None:
    """A bucket is named by its seek's options (``turn_seconds`` alone has tens of thousands of
    values): one whose last table expired unfilled, and that no seek uses again, must not keep
    its keys for ever. Each write of a bucket holds its keys for as long as a table can live
    since its last change (the game TTL), so a table still in the bucket is never dropped."""
    lobby = Lobby(redis_client, bucket_ttl=600)
    order, claims = keys.seek_keys("b")

    def lives() -> list[int]:
        return [int(redis_client.ttl(name)) for name in (order, claims)]

    lobby.claim("b", "first0000", 3, 1, "player000001", claim_id="c1")
    assert all(500 < ttl <= 600 for ttl in lives())
    redis_client.expire(order, 5)
    redis_client.expire(claims, 5)
    lobby.claim("b", "fresh0000", 3, 2, "player000002", claim_id="c2")
    assert all(500 < ttl <= 600 for ttl in lives())
    lobby.forget("b", "first0000", "player000002")
    # The table full: out of its bucket, counts kept.
    lobby.claim("b", "fresh0001", 3, 3, claim_id="c3")
    redis_client.expire(order, 5)
    redis_client.expire(claims, 5)
    assert lobby.give_back("b", "c3")
    assert all(500 < ttl <= 600 for ttl in lives())
    lobby.close("b", "first0000")
    redis_client.delete(order, claims)
    assert lobby.reopen("b", "first0000", 2)
    assert all(500 < ttl <= 600 for ttl in lives())
    redis_client.expire(order, 5)
    redis_client.expire(claims, 5)
    lobby.keep("b")  # a change of a table of the bucket with a seat open
    assert all(500 < ttl <= 600 for ttl in lives())


def test_a_claim_or_give_back_run_again_under_its_id_counts_once(
    lobby: Lobby, redis_client: redis.Redis
) -> None:
    """redis-py sends a script again after a broken connection, which Redis may have run: the
    claim run twice answers its first seat again (to a named seeker too, not as seated
    already), and the give-back run twice lowers the count once."""
    claims = keys.seek_keys("b")[1]
    assert lobby.claim("b", "first0000", 3, 1, claim_id="c1") == ("first0000", 0, True)
    assert lobby.claim("b", "fresh0000", 3, 1, claim_id="c1") == ("first0000", 0, True)
    for _ in range(2):
        got = lobby.claim("b", "fresh0001", 3, 2, "player000001", claim_id="c2")
        assert got == ("first0000", 1, False)
    assert redis_client.hget(claims, "first0000") == b"2"
    assert lobby.give_back("b", "c2")
    assert not lobby.give_back("b", "c2")
    assert redis_client.hget(claims, "first0000") == b"1"
    assert lobby.claim("b", "fresh0002", 3, 3, claim_id="c3") == ("first0000", 1, False)
    lobby.close("b", "first0000")
    assert redis_client.hkeys(claims) == []  # its claims are closed with it


def test_a_claim_made_under_another_attempts_id_is_answered_and_kept_under_this_one(
    lobby: Lobby, redis_client: redis.Redis
) -> None:
    """A retry starts at its first attempt; the claim its first try left may be a later
    attempt's. It must be answered, not doubled, and then be given back under the retry's id."""
    claims = keys.seek_keys("b")[1]
    assert lobby.claim("b", "first0000", 3, 1, claim_id="a") == ("first0000", 0, True)
    assert lobby.claim("b", "fresh0001", 3, 2, claim_id="s.1") == ("first0000", 1, False)
    again = lobby.claim("b", "fresh0002", 3, 3, claim_id="s.0", others=["s.1", "s.2"])
    assert again == ("first0000", 1, False)
    assert redis_client.hget(claims, "first0000") == b"2"
    assert redis_client.hget(claims, "first0000|c") == b" a s.0 "
    assert lobby.give_back("b", "s.0")
    assert not lobby.give_back("b", "s.1")
    assert redis_client.hget(claims, "first0000") == b"1"
