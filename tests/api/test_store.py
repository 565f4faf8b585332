"""The Redis store on a real redis-server: CAS, idempotency, expiry, token digests."""

from __future__ import annotations

from queue import Queue

import pytest
import redis

from service.rules import Role
from service.store import (
    Change,
    GameNotFound,
    GameStore,
    IdempotentReplay,
    KeptResponse,
    RematchClosed,
    VersionConflict,
)
from service.store import keys as K
from service.store.games import NO_TOKEN
from service.store.presence import KEEP_SECONDS as PRESENCE_KEEP_SECONDS
from service.store.tokens import hash_token, new_token
from service.store.transfers import TRANSFER_SECONDS, Claim, Transfer, Transfers
from service.store.wakeup import Wakeup, parse_wakeup


@pytest.fixture()
def gs(redis_client: redis.Redis) -> GameStore:
    return GameStore(redis_client, game_ttl=1000, idem_ttl=500)


def test_create_load_and_identify(gs: GameStore, redis_client: redis.Redis) -> None:
    host, seats = new_token(), [new_token() for _ in range(3)]
    gid = gs.create(b"state-bytes", host, [hash_token(t) for t in seats], [b"r1"])
    rec = gs.load(gid)
    assert (rec.version, rec.state) == (1, b"state-bytes")
    assert rec.identify(host) == Role.HOST
    assert [rec.identify(t) for t in seats] == [Role.of_seat(0), Role.of_seat(1), Role.of_seat(2)]
    assert rec.identify(new_token()) is None
    raw = redis_client.hgetall(K.game_key(gid))
    # Only digests are stored, never a token.
    assert all(t.encode() not in b"".join(raw.values()) for t in [host, *seats])
    assert raw[b"h"] == hash_token(host)
    assert 0 < redis_client.ttl(K.game_key(gid)) <= 1000


def test_compare_and_set(gs: GameStore, redis_client: redis.Redis) -> None:
    gid = gs.create(b"s1", new_token(), [hash_token(new_token())] * 2, [b"r1"])
    redis_client.expire(K.game_key(gid), 10)
    assert gs.save(gid, 1, Change(b"s2", [b"r2"])) == 2
    # The write renewed the TTL.
    assert redis_client.ttl(K.game_key(gid)) > 10
    with pytest.raises(VersionConflict) as info:
        gs.save(gid, 1, Change(b"lost", [b"r2"]))
    assert info.value.current == 2
    assert gs.load(gid).state == b"s2"


def test_a_stored_change_marks_the_callers_presence_in_the_same_step(
    gs: GameStore, redis_client: redis.Redis
) -> None:
    gid = gs.create(b"s1", new_token(), [hash_token(new_token())] * 2, [b"r1"])
    assert gs.save(gid, 1, Change(b"s2", [b"r2"]), seen=(1, 12345)) == 2
    assert redis_client.hgetall(K.presence_key(gid)) == {b"r1": b"12345"}
    assert 0 < redis_client.ttl(K.presence_key(gid)) <= PRESENCE_KEEP_SECONDS
    # A refused change marks nothing; a change without a mark leaves presence as it was.
    with pytest.raises(VersionConflict):
        gs.save(gid, 1, Change(b"lost", [b"r2"]), seen=(0, 99999))
    assert gs.save(gid, 2, Change(b"s3", [b"r3"])) == 3
    assert redis_client.hgetall(K.presence_key(gid)) == {b"r1": b"12345"}


def test_a_change_of_seat_tokens_drops_the_presence_of_the_seats_it_changes(
    gs: GameStore, redis_client: redis.Redis
) -> None:
    digests = [hash_token(new_token()) for _ in range(3)]
    gid = gs.create(b"s1", new_token(), digests, [b"r1"])
    key = K.presence_key(gid)
    redis_client.hset(key, mapping={"r0": 1, "r1": 2, "t1:a": 3, "t1:b": 4, "r2": 5, "t2:c": 6})
    # Seat 1 changes hands and its new occupant's request marks it in the same step; seat 0
    # keeps its token, seat 2 goes to a bot.
    changed = [digests[0], hash_token(new_token()), NO_TOKEN]
    assert gs.save(gid, 1, Change(b"s2", [b"r2"], seat_digests=changed), seen=(1, 777)) == 2
    assert redis_client.hgetall(key) == {b"r0": b"1", b"r1": b"777"}
    # A change that leaves every token as it was drops nothing.
    redis_client.hset(key, "t0:d", 8)
    assert gs.save(gid, 2, Change(b"s3", [b"r3"], seat_digests=changed)) == 3
    assert gs.save(gid, 3, Change(b"s4", [b"r4"])) == 4
    assert redis_client.hgetall(key) == {b"r0": b"1", b"r1": b"777", b"t0:d": b"8"}


def test_a_load_brings_the_presence_hash_in_the_same_round_trip_when_asked(
    gs: GameStore,
) -> None:
    tok = new_token()
    gid = gs.create(b"s1", new_token(), [hash_token(tok)] * 2, [b"r1"])
    assert gs.load(gid, presence=True).presence == {}
    kept = KeptResponse(200, b'{"version":2}')
    change = Change(b"s2", [b"r2"])
    gs.save(gid, 1, change, kept=kept, token=tok, idempotency_key="k1", seen=(0, 777))
    assert gs.load(gid, presence=True).presence == {b"r0": b"777"}
    # With a key, in the same pipeline as the response kept for it.
    rec = gs.load(gid, token=tok, idempotency_key="k1", presence=True)
    assert (rec.version, rec.kept, rec.presence) == (2, kept, {b"r0": b"777"})
    rec = gs.load(gid, token=tok, idempotency_key="k1")
    assert (rec.kept, rec.presence) == (kept, None)
    # And with the token's rate counter.
    counted = GameStore(gs.client, game_ttl=1000, idem_ttl=500, rate_window=60)
    rec = counted.load(gid, token=tok, idempotency_key="k1", presence=True)
    assert (rec.kept, rec.presence, rec.rate_count) == (kept, {b"r0": b"777"}, 1)


def test_a_load_marks_the_seat_of_its_token_in_the_same_round_trip(
    gs: GameStore, redis_client: redis.Redis
) -> None:
    host, seats = new_token(), [new_token() for _ in range(3)]
    gid = gs.create(b"s1", host, [hash_token(t) for t in seats], [b"r1"])
    for token in (host, new_token()):  # the host and a stranger are nobody's seat
        assert gs.load(gid, token=token, seen=5).version == 1
    assert redis_client.hgetall(K.presence_key(gid)) == {}
    rec = gs.load(gid, token=seats[2], seen=777, presence=True)
    assert rec.presence == {b"r2": b"777"}  # read after the mark, in the same pipeline
    assert redis_client.hgetall(K.presence_key(gid)) == {b"r2": b"777"}
    assert 0 < redis_client.ttl(K.presence_key(gid)) <= PRESENCE_KEEP_SECONDS
    # With everything else that rides in the read.
    kept = KeptResponse(200, b'{"version":2}')
    gs.save(gid, 1, Change(b"s2", [b"r2"]), kept=kept, token=seats[0], idempotency_key="k")
    counted = GameStore(gs.client, game_ttl=1000, idem_ttl=500, rate_window=60)
    rec = counted.load(gid, token=seats[0], idempotency_key="k", presence=True, seen=888)
    assert (rec.version, rec.kept, rec.rate_count) == (2, kept, 1)
    assert rec.presence == {b"r2": b"777", b"r0": b"888"}
    assert redis_client.hgetall(K.presence_key(gid)) == {b"r2": b"777", b"r0": b"888"}
    with pytest.raises(GameNotFound):
        gs.load("nosuchgame12", token=seats[0], seen=1)
    assert not redis_client.exists(K.presence_key("nosuchgame12"))


def test_unknown_and_malformed_ids(gs: GameStore) -> None:
    for gid in ["doesnotexist1", "x", "../../etc", "{a}b" * 5]:
        with pytest.raises(GameNotFound):
            gs.load(gid)
    with pytest.raises(GameNotFound):
        gs.save("doesnotexist1", 1, Change(b"x", [b"r2"]))


def test_idempotency_kept_once(gs: GameStore, redis_client: redis.Redis) -> None:
    tok = new_token()
    gid = gs.create(b"s1", new_token(), [hash_token(tok)], [b"r1"])
    kept = KeptResponse(200, b'{"version":2}')
    assert gs.save(gid, 1, Change(b"s2", [b"r2"]), kept=kept, token=tok, idempotency_key="k1") == 2
    rec = gs.load(gid, token=tok, idempotency_key="k1")
    assert rec.kept == kept
    # Another token with the same key sees nothing kept.
    assert gs.load(gid, token=new_token(), idempotency_key="k1").kept is None
    # A concurrent duplicate that read version 1 replays instead of conflicting or applying.
    with pytest.raises(IdempotentReplay) as info:
        gs.save(gid, 1, Change(b"again", [b"r2"]), kept=kept, token=tok, idempotency_key="k1")
    assert info.value.kept == kept
    assert gs.load(gid).version == 2
    idem = K.idem_key(gid, tok, "k1")
    assert 0 < redis_client.ttl(idem) <= 500
    expected = [K.game_key(gid).encode(), K.log_key(gid).encode(), idem.encode()]
    assert sorted(gs.game_keys(gid)) == sorted(expected)
    for key in gs.game_keys(gid):
        assert redis_client.ttl(key) > 0


def test_log_records_are_appended_with_the_state_and_read_from_an_index(gs: GameStore) -> None:
    gid = gs.create(b"s1", new_token(), [hash_token(new_token())], [b"r1"], table=b"{}")
    assert gs.save(gid, 1, Change(b"s3", [b"r2", b"r3"], table=b'{"x":1}')) == 3
    assert gs.log(gid) == (3, [b"r1", b"r2", b"r3"])
    assert gs.log(gid, 2) == (3, [b"r3"])
    other = gs.create(b"t1", new_token(), [hash_token(new_token())], [b"q1"])
    assert gs.versions_and_records([(gid, 2), (other, 1), (gid, 0), ("missinggame1", 1)]) == [
        (3, b"r2"),
        (1, b"q1"),
        (3, None),
        (None, None),
    ]
    with pytest.raises(GameNotFound):
        gs.log("missinggame1")
    assert gs.log_records(gid, 1) == [b"r2", b"r3"]
    assert gs.log_records("missinggame1") == []


def test_every_change_publishes_its_records_as_a_wake_up(gs: GameStore) -> None:
    """On the game's own sharded channel, whose subscription is confirmed before the change."""
    gid = gs.create(b"s1", new_token(), [hash_token(new_token())], [b"r1"])
    heard: Queue[bytes] = Queue()
    standing: Queue[list[str]] = Queue()
    wakeups = gs.wakeups(heard.put, standing.put)
    wakeups.follow(gid)
    try:
        assert standing.get(timeout=10) == [gid]
        # Records are binary: spaces, colons and digits inside must survive.
        assert gs.save(gid, 1, Change(b"s2", [b"a b", b"12:x:", b""])) == 4
        assert parse_wakeup(heard.get(timeout=5)) == Wakeup(gid, 4, [b"a b", b"12:x:", b""])
        wakeups.unfollow(gid)
        other = gs.create(b"s1", new_token(), [hash_token(new_token())], [b"r1"])
        wakeups.follow(other)
        assert standing.get(timeout=10) == [other]
        gs.save(gid, 4, Change(b"s3", [b"unheard"]))  # no longer followed
        gs.save(other, 1, Change(b"s2", [b"heard"]))
        assert parse_wakeup(heard.get(timeout=5)) == Wakeup(other, 2, [b"heard"])
        assert heard.empty()
    finally:
        wakeups.unfollow(other)
        wakeups.repair()  # stops the idle listener
    assert Wakeup(gid, 4, [b"a b", b"12:x:", b""]).first == 2


def test_a_change_without_records_is_refused(gs: GameStore) -> None:
    # The version must move with every change: it names the whole record.
    gid = gs.create(b"s1", new_token(), [hash_token(new_token())], [b"r1"])
    with pytest.raises(ValueError, match="without log records"):
        gs.save(gid, 1, Change(b"s2", []))
    assert (gs.load(gid).version, gs.load(gid).state) == (1, b"s1")


@pytest.mark.parametrize(
    "data", [b"", b"game", b"game x", b"game x ", b"game 3 5:ab", b"game 3 x:ab", b"game 3 2ab"]
)
def test_a_wake_up_that_cannot_be_read_is_none(data: bytes) -> None:
    assert parse_wakeup(data) is None


def test_a_wake_up_without_records_still_names_the_version() -> None:
    """As an instance running the previous script publishes it, during a rolling deploy."""
    assert parse_wakeup(b"game1234 7") == Wakeup("game1234", 7, [])


def test_a_rematch_claim_counts_once_and_makes_no_key_for_a_game_gone(
    gs: GameStore, redis_client: redis.Redis
) -> None:
    gid = gs.create(b"s1", new_token(), [hash_token(new_token())] * 2, [b"r1"])
    assert (gs.claim_rematch(gid, "0"), gs.claim_rematch(gid, "0")) == (True, False)
    assert gs.claim_rematch(gid, "table", closes=False)
    assert gs.close_rematch_claims(gid) == {"0", "table"}
    assert not gs.claim_rematch(gid, "0")  # claimed in time: still its place
    with pytest.raises(RematchClosed):
        gs.claim_rematch(gid, "1")  # too late: the seat is open in the next game
    assert not gs.claim_rematch(gid, "table", closes=False)
    assert gs.close_rematch_claims(gid) == {"0", "table"}
    redis_client.delete(K.game_key(gid))  # it expired
    with pytest.raises(GameNotFound):
        gs.claim_rematch(gid, "1")
    assert gs.close_rematch_claims(gid) is None  # gone: who claimed is not known
    assert redis_client.exists(K.game_key(gid)) == 0


def test_thousands_of_records_are_stored_whole(redis_client: redis.Redis) -> None:
    # Lua's unpack takes about 8,000 values at most; a script that failed midway would keep
    # the version it had written without the records.
    gs = GameStore(redis_client, game_ttl=1000, idem_ttl=500, max_entries=30_000)
    many = [b"r%d" % i for i in range(9_000)]
    gid = gs.create(b"s1", new_token(), [hash_token(new_token())] * 2, many)
    assert gs.save(gid, 9_000, Change(b"s2", many)) == 18_000
    assert redis_client.llen(K.log_key(gid)) == 18_000
    assert redis_client.lrange(K.log_key(gid), 8_999, 9_000) == [b"r8999", b"r0"]
    assert gs.load(gid).state == b"s2"


@pytest.mark.parametrize("keyed", [False, True])
def test_a_change_spends_its_ticket_only_when_it_is_stored(
    gs: GameStore, redis_client: redis.Redis, keyed: bool
) -> None:
    tok = new_token()
    gid = gs.create(b"s1", new_token(), [hash_token(tok)], [b"r1"])
    transfers = Transfers(redis_client)
    transfers.issue(gid, "tt.one", Transfer(0, hash_token(tok)))
    ticket = K.transfer_key(gid, "tt.one")
    kept = KeptResponse(201, b"{}") if keyed else None
    spending = Change(b"s2", [b"r2"], spends=ticket)
    with pytest.raises(VersionConflict):
        gs.save(gid, 2, spending, kept=kept, token=tok, idempotency_key="k")
    assert transfers.find(gid, "tt.one")[0] is Claim.FOUND  # refused: still to be claimed
    assert gs.save(gid, 1, spending, kept=kept, token=tok, idempotency_key="k") == 2
    assert transfers.find(gid, "tt.one") == (Claim.SPENT, None)
    assert 0 < redis_client.ttl(ticket) <= TRANSFER_SECONDS  # spent, and still expires
    assert (gs.load(gid, token=tok, idempotency_key="k").kept is not None) == keyed
    # A ticket gone meanwhile is not made again by its spending.
    gone = K.transfer_key(gid, "tt.expired")
    assert gs.save(gid, 2, Change(b"s3", [b"r3"], spends=gone)) == 3
    assert redis_client.exists(gone) == 0


def test_a_windows_reset_is_never_before_its_counter_expires(
    gs: GameStore, redis_client: redis.Redis
) -> None:
    """``Retry-After`` is the reset: a client that waits exactly that long must find the window
    over. Redis's ``TTL`` rounds to the nearest second, so 2.3 s left read as 2."""
    gid = gs.create(b"s1", new_token(), [hash_token(new_token())], [b"r1"])
    tok, counter = new_token(), "rate:{probe}:addr"
    counted = GameStore(gs.client, game_ttl=1000, idem_ttl=500, rate_window=3)
    counted.load(gid, token=tok)
    gs.count_request(counter, 3)
    for key in (K.rate_key(gid, tok), counter):  # each window now ends in 2.3 s: TTL reads 2
        redis_client.pexpire(key, 2300)
    rec = counted.load(gid, token=tok)
    left_ms = redis_client.pttl(K.rate_key(gid, tok))
    assert rec.rate_count == 2 and rec.rate_reset * 1000 >= left_ms > 0
    count, reset = gs.count_request(counter, 3)
    left_ms = redis_client.pttl(counter)
    assert count == 2 and reset * 1000 >= left_ms > 0
