"""A parked stream reader (``Feed.park``) is sent new entries by the feed itself, over a real
socket through :class:`BodyWriter`, and is woken only for what it must see to itself: an entry
that ends the game, presence, a feed behind, the part of a push its socket did not take. The
bytes it receives are the chunks the reader's own loop would have written."""

from __future__ import annotations

import dataclasses
import os
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
from gunicorn.http.wsgi import Response as GunicornResponse

from devstack.gunicorn import Gunicorn
from devstack.redis_server import RedisServer
from service.api.gamelog import formats
from service.api.gamelog.formats import (
    FRAMES,
    KEEPALIVE_SECONDS,
    Media,
    Reader,
    Viewer,
    sse_message,
    stream,
)
from service.api.gamelog.hub import Feed, Hub
from service.frameworks.gunicorn_body import ENVIRON_KEY, body_writer
from service.rules import Role, log
from service.rules.log import Replayer
from service.store import GameStore, keys
from tests.live.conftest import LIVE_ENV
from tests.live.helpers import (
    NDJSON,
    SSE,
    Game,
    check_seen,
    create,
    entries,
    follow_stream,
    play_people,
)

WAIT = 5.0


@pytest.fixture(scope="module")
def records(live: str, redis_server: RedisServer) -> list[bytes]:
    players = [{"name": f"cpu{i}", "bot": "random"} for i in range(4)]
    game = create(live, players=players, auto_deal=True, options={"rounds": 1})
    store = GameStore(redis.Redis.from_url(redis_server.url))
    _, found = store.log(game["game_id"])
    assert len(found) > 40
    return found


@pytest.fixture()
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A server side and a client side, both with small buffers. The server side is as
    gevent's: non-blocking for the OS, while its ``sendall`` waits (a timeout does both)."""
    server, client = socket.socketpair()
    for sock in (server, client):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    server.settimeout(WAIT)
    with server, client:
        yield server, client


def reader_on(server: socket.socket, last: int) -> Reader:
    resp = GunicornResponse(None, server, None)
    resp.headers_sent, resp.chunked = True, True
    writer = body_writer({ENVIRON_KEY: resp})
    assert writer is not None and writer.ready
    return Reader(Viewer(Role.PUBLIC), Media.SSE, last, writer)


def parked_reader(
    redis_server: RedisServer, records: list[bytes], server: socket.socket, upto: int
) -> tuple[Feed, Reader, threading.Thread, list[bool]]:
    """A feed of the first ``upto`` records, and a reader sent them all, parked on it in a
    thread (which puts whether it was woken in the list)."""
    feed = new_feed(redis_server, records, upto)
    reader = reader_on(server, upto)
    thread, woken = parked(feed, reader)
    return feed, reader, thread, woken


def parked(feed: Feed, reader: Reader) -> tuple[threading.Thread, list[bool]]:
    woken: list[bool] = []
    thread = threading.Thread(target=lambda: woken.append(feed.park(reader, WAIT, 0)))
    thread.start()
    deadline = time.monotonic() + WAIT
    while reader not in feed._parked and time.monotonic() < deadline:
        time.sleep(0.001)
    assert reader in feed._parked
    return thread, woken


def chunks(feed: Feed, versions: range) -> bytes:
    """What the reader's own loop would write: one chunk of the entries' SSE messages."""
    viewer = Viewer(Role.PUBLIC)
    data = b"".join(viewer.frame(feed, feed.entries[v - 1], Media.SSE) for v in versions)
    return b"%X\r\n%s\r\n" % (len(data), data)


def read_exactly(sock: socket.socket, n: int) -> bytes:
    out = bytearray()
    sock.settimeout(WAIT)
    while len(out) < n:
        out += sock.recv(n - len(out))
    return bytes(out)


def new_feed(redis_server: RedisServer, records: list[bytes], upto: int) -> Feed:
    feed = Feed("g1", GameStore(redis.Redis.from_url(redis_server.url)))
    feed._append(records[:upto])
    feed.heard(upto)
    return feed


@pytest.fixture()
def at_ten(
    redis_server: RedisServer, records: list[bytes], pair: tuple[socket.socket, socket.socket]
) -> tuple[socket.socket, Feed, Reader, threading.Thread, list[bool]]:
    """The client's socket, and a reader sent the first 10 entries parked on their feed."""
    server, client = pair
    return (client, *parked_reader(redis_server, records, server, 10))


def test_a_parked_reader_is_sent_new_entries_without_waking(
    records: list[bytes], at_ten: tuple[socket.socket, Feed, Reader, threading.Thread, list[bool]]
) -> None:
    client, feed, reader, thread, woken = at_ten
    for first in (11, 13):  # two wake-ups' worth, each appended and heard as a wake-up does
        feed._append(records[first - 1 : first + 1])
        feed.heard(first + 1)
        expected = chunks(feed, range(first, first + 2))
        assert read_exactly(client, len(expected)) == expected
    assert reader.last == 14 and reader.pushed and reader in feed._parked and not woken
    feed.saw((True, False, False, False))  # presence: the reader tells it itself
    thread.join(WAIT)
    assert woken == [True] and reader not in feed._parked


def test_what_the_socket_does_not_take_wakes_the_reader_who_sends_it_first(
    redis_server: RedisServer, records: list[bytes], pair: tuple[socket.socket, socket.socket]
) -> None:
    server, client = pair
    feed, reader, thread, woken = parked_reader(redis_server, records, server, 1)
    end = len(records) - 1  # all but the game's last entry, more than the buffers hold
    feed._append(records[1:end])
    feed.heard(end)
    thread.join(WAIT)
    expected = chunks(feed, range(2, end + 1))
    assert woken == [True] and reader.rest and len(reader.rest) < len(expected)
    assert reader.last == end
    got: list[bytes] = []
    taker = threading.Thread(target=lambda: got.append(read_exactly(client, len(expected))))
    taker.start()
    reader.flush()
    taker.join(WAIT)
    assert got == [expected] and not reader.rest


def nothing_sent(client: socket.socket) -> bool:
    client.setblocking(False)
    try:
        client.recv(1)
    except BlockingIOError:
        return True
    finally:
        client.setblocking(True)
    return False


def test_a_quiet_parked_reader_is_sent_keep_alives_without_waking(
    records: list[bytes], at_ten: tuple[socket.socket, Feed, Reader, threading.Thread, list[bool]]
) -> None:
    client, feed, reader, thread, woken = at_ten
    keepalive = FRAMES[Media.SSE][1]
    quiet_since = reader.wrote_at
    feed.sweep(quiet_since + KEEPALIVE_SECONDS - 0.5)
    assert nothing_sent(client)
    feed.sweep(quiet_since + KEEPALIVE_SECONDS)
    framed = b"%X\r\n%s\r\n" % (len(keepalive), keepalive)
    assert read_exactly(client, len(framed)) == framed
    feed._append(records[10:12])  # entries pushed: the stream is not quiet any more
    feed.heard(12)
    expected = chunks(feed, range(11, 13))
    assert read_exactly(client, len(expected)) == expected
    feed.sweep(reader.wrote_at + KEEPALIVE_SECONDS - 0.5)
    assert nothing_sent(client)
    assert reader in feed._parked and not woken
    feed.vanish()
    thread.join(WAIT)
    assert woken == [True]


@pytest.mark.parametrize("why", ["a full socket", "the peer gone"])
def test_a_keep_alive_the_socket_cannot_take_wakes_the_reader(
    pair: tuple[socket.socket, socket.socket],
    at_ten: tuple[socket.socket, Feed, Reader, threading.Thread, list[bool]],
    why: str,
) -> None:
    server, client = pair
    _, feed, reader, thread, woken = at_ten
    if why == "a full socket":
        filler = b"x" * 4096
        while True:
            try:
                os.write(server.fileno(), filler)
            except BlockingIOError:
                break
    else:
        client.close()
    feed.sweep(reader.wrote_at + KEEPALIVE_SECONDS)
    thread.join(WAIT)
    assert woken == [True] and reader not in feed._parked
    assert reader.rest if why == "a full socket" else reader.broken


class Counted:
    """A parked reader that counts the sweep's calls and keeps its stream quiet."""

    def __init__(self, wrote_at: float) -> None:
        self.last, self.wrote_at, self.calls = 0, wrote_at, 0

    def push(self, *_: object) -> bool:
        return True

    def keep_alive(self, now: float) -> bool:
        self.calls += 1
        if now >= self.due():
            self.wrote_at = now
        return True

    def due(self) -> float:
        return self.wrote_at + KEEPALIVE_SECONDS


def test_a_sweep_before_any_keep_alive_is_due_calls_no_reader(redis_server: RedisServer) -> None:
    """Thousands of readers pushed to each second owe no keep-alive: the hub's once-a-second
    sweep of their feed is then one comparison, not a call per reader."""
    feed = Feed("g1", GameStore(redis.Redis.from_url(redis_server.url)))
    readers = [Counted(100.0 + i) for i in range(3)]
    threads = [threading.Thread(target=feed.park, args=(r, WAIT, 0)) for r in readers]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + WAIT
    while len(feed._parked) < len(readers) and time.monotonic() < deadline:
        time.sleep(0.001)
    feed.sweep(100.0 + KEEPALIVE_SECONDS - 0.1)
    assert [r.calls for r in readers] == [0, 0, 0]
    feed.sweep(100.0 + KEEPALIVE_SECONDS)  # the first is due: one walk, its keep-alive sent
    assert [r.calls for r in readers] == [1, 1, 1]
    assert readers[0].wrote_at == 100.0 + KEEPALIVE_SECONDS
    feed.sweep(100.5 + KEEPALIVE_SECONDS)  # the next is due at 101 + the period
    assert [r.calls for r in readers] == [1, 1, 1]
    feed.sweep(101.0 + KEEPALIVE_SECONDS)
    assert [r.calls for r in readers] == [2, 2, 2]
    late = Counted(50.0)  # a reader parking with an older stream brings the next walk forward
    threads.append(threading.Thread(target=feed.park, args=(late, WAIT, 0)))
    threads[-1].start()
    while late not in feed._parked and time.monotonic() < deadline:
        time.sleep(0.001)
    feed.sweep(102.0 + KEEPALIVE_SECONDS - 0.5)
    assert late.calls == 1 and late.wrote_at == 102.0 + KEEPALIVE_SECONDS - 0.5
    feed.vanish()
    for thread in threads:
        thread.join(WAIT)
    assert not feed._parked


def test_a_stream_sends_keep_alives_while_redis_is_away(
    records: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its feed is behind and cannot read the log: every wait ends at once, and the stream
    still sends a keep-alive each period rather than nothing until Redis is back."""
    monkeypatch.setattr(formats, "KEEPALIVE_SECONDS", 1.0)
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        gone = f"redis://127.0.0.1:{unused.getsockname()[1]}"
    feed = Feed("g1", GameStore(redis.Redis.from_url(gone)))
    feed._append(records[:10])
    feed.heard(12)  # two entries heard of, unreadable
    items = stream(feed, 10, Viewer(Role.PUBLIC), Media.NDJSON, lifetime=3.5)
    sent = [item for item in items if item]
    assert len(sent) >= 2 and set(sent) == {FRAMES[Media.NDJSON][1]}, sent


def test_a_seat_stream_whose_keep_alive_the_sweep_sent_beats_without_another(
    redis_server: RedisServer,
    records: list[bytes],
    pair: tuple[socket.socket, socket.socket],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(formats, "KEEPALIVE_SECONDS", 1.0)
    server, client = pair
    feed = new_feed(redis_server, records, 10)
    writer = reader_on(server, 10).writer
    items = stream(feed, 10, Viewer(Role.of_seat(0)), Media.SSE, 60, writer=writer, beats=True)
    assert next(items) == b"retry: 1000\n\n"
    got: list[bytes] = []
    waiting = threading.Thread(target=lambda: got.append(next(items)))
    waiting.start()
    deadline = time.monotonic() + WAIT
    while not feed._parked and time.monotonic() < deadline:
        time.sleep(0.001)
    (reader,) = feed._parked
    feed.sweep(reader.wrote_at + 1.0)
    keepalive = FRAMES[Media.SSE][1]
    framed = b"%X\r\n%s\r\n" % (len(keepalive), keepalive)
    assert read_exactly(client, len(framed)) == framed
    waiting.join(WAIT)
    assert got == [b""]  # the seat's loop ran (its presence beat), and wrote nothing more
    assert nothing_sent(client)


@pytest.mark.parametrize("why", ["the game's last entry", "a feed behind", "the game gone"])
def test_the_reader_sees_to_these_itself(
    redis_server: RedisServer,
    records: list[bytes],
    pair: tuple[socket.socket, socket.socket],
    why: str,
) -> None:
    server, client = pair
    before_end = len(records) - 1
    feed, reader, thread, woken = parked_reader(redis_server, records, server, before_end)
    if why == "the game's last entry":
        feed._append(records[before_end:])
        feed.heard(len(records))
    elif why == "a feed behind":
        feed.heard(len(records))  # heard of, not yet read
    else:
        feed.vanish()
    thread.join(WAIT)
    assert woken == [True] and reader.last == before_end and not reader.pushed
    client.setblocking(False)
    with pytest.raises(BlockingIOError):
        client.recv(1)  # nothing was written for it


@pytest.fixture(scope="module")
def streams(redis_server: RedisServer) -> Iterator[str]:
    """The streams pool as deployed: gevent, the feed writing to parked readers."""
    with Gunicorn(redis_server.url, workers=1, pool="streams", env=LIVE_ENV) as pool:
        yield pool.url


@pytest.mark.slow
def test_every_reader_of_the_streams_pool_sees_every_entry_once(live: str, streams: str) -> None:
    """Readers hang up at random and resume, so entries reach them both ways: written by
    their own loop (the backlog at each opening) and pushed while they are parked."""
    game = Game(create(live, players=["ann", "bo", "cy", "di"], options={"rounds": 2}))
    readers = list(game.readers().items())
    ways = [(name, token, media) for name, token in readers for media in (SSE, NDJSON)]
    with ThreadPoolExecutor(len(ways) + 1) as pool:
        follows = {
            (name, media): pool.submit(
                follow_stream, [streams], game.id, token, media, random.Random(n)
            )
            for n, (name, token, media) in enumerate(ways)
        }
        final = pool.submit(play_people, [live], game, random.Random(5)).result(timeout=300)
        got = {key: future.result(timeout=120) for key, future in follows.items()}
    whole = entries(live, game.id, game.host)["entries"]
    assert [e["version"] for e in whole] == list(range(1, final["version"] + 1))
    for (name, media), seen in got.items():
        if name == "host":
            assert seen == whole, (name, media)
        else:
            check_seen(seen, whole, game.seat_of(name))


@pytest.mark.slow
def test_a_quiet_public_stream_of_the_streams_pool_gets_its_keep_alive(
    live: str, streams: str
) -> None:
    """The hub's sweep sends it (the parked reader's own greenlet sleeps on), within the 15 s
    clients allow."""
    game = create(live, players=["ann", "bo"])
    host, _, port = streams.removeprefix("http://").partition(":")
    path = f"/api/v1/games/{game['game_id']}/events"
    request = f"GET {path} HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n".encode()
    with socket.create_connection((host, int(port)), timeout=20) as sock:
        sock.sendall(request)
        got = b""
        while b"id: 1\n" not in got:
            got += received(sock, got)
        quiet_since = time.monotonic()
        while FRAMES[Media.SSE][1] not in got:
            got += received(sock, got)
    waited = time.monotonic() - quiet_since
    assert KEEPALIVE_SECONDS - 1 <= waited <= 15, waited


def received(sock: socket.socket, got: bytes) -> bytes:
    data = sock.recv(4096)
    assert data, f"the stream ended: {got!r}"
    return data


def test_a_stream_not_sent_a_lost_entry_goes_on_after_a_rewind(
    records: list[bytes], redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis lost entries 9 and 10, which this stream (at 8) was never sent; the game took
    new ones before the stream woke. The stream must go on with the stored log: it ended,
    judged on the new entries it had just sent as if they were lost ones."""
    client = redis.Redis.from_url(redis_server.url)
    game_id = f"rewind{random.randrange(10**9)}"
    client.hset(keys.game_key(game_id), "v", 8)
    client.rpush(keys.log_key(game_id), *records[:8])
    f = Feed(game_id, GameStore(client))
    f._append(records[:8])
    f.heard(8)
    waiting, ended, sent = threading.Event(), threading.Event(), bytearray()
    wait = f.wait

    def watched(
        after: int, timeout: float, presence_seq: int | None = None, rewinds: int | None = None
    ) -> bool:
        waiting.set()
        return wait(after, timeout, presence_seq, rewinds)

    monkeypatch.setattr(f, "wait", watched)

    def follow() -> None:
        for data in stream(f, 8, Viewer(Role.PUBLIC), Media.SSE, lifetime=3 * WAIT):
            sent.extend(data)
        ended.set()

    threading.Thread(target=follow, daemon=True).start()
    assert waiting.wait(WAIT)
    f._append(records[8:10])  # published, then lost: a waiting stream is not woken for them
    f.rewind()  # the ticker read version 8

    def has(version: int) -> Callable[[], bool]:
        return lambda: b"id: %d\n" % version in sent

    for version in (9, 10, 11):  # the game goes on from the stored log
        client.rpush(keys.log_key(game_id), records[version - 1])
        client.hset(keys.game_key(game_id), "v", version)
        f.heard(version)
        assert until(has(version)), (version, bytes(sent))
    assert not ended.is_set()


def until(holds: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WAIT
    while not holds():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_waiting_stream_sent_a_lost_entry_ends_at_the_rewind(
    records: list[bytes], redis_server: RedisServer
) -> None:
    """A stream with no writer of the feed's (it waits on the feed's bell) was sent entries 9
    and 10, then Redis lost them. It must end at the rewind, not at its next keep-alive: its
    wait, for a version past 10, went on through the rewind's ring."""
    client = redis.Redis.from_url(redis_server.url)
    game_id = f"rewind{random.randrange(10**9)}"
    client.hset(keys.game_key(game_id), "v", 8)
    client.rpush(keys.log_key(game_id), *records[:8])
    f = Feed(game_id, GameStore(client))
    f._append(records[:10])
    f.heard(10)
    ended, sent = threading.Event(), bytearray()

    def follow() -> None:
        for data in stream(f, 8, Viewer(Role.PUBLIC), Media.SSE, lifetime=3 * KEEPALIVE_SECONDS):
            sent.extend(data)
        ended.set()

    threading.Thread(target=follow, daemon=True).start()
    assert until(lambda: b"id: 10\n" in sent)
    time.sleep(0.2)  # the stream waits for a version past 10
    f.rewind()
    assert ended.wait(KEEPALIVE_SECONDS / 2), "the stream sent lost entries waits on"


def other_record(raw: bytes, earlier: list[bytes], later_ms: int) -> bytes:
    """``raw`` (the record after ``earlier``) made ``later_ms`` later: the same change at the
    same version, as another history of the game (one that lost the first) would hold it."""
    replay = Replayer()
    for record in earlier:
        replay.feed(record)
    state = replay.state
    assert state is not None
    found = log.decode(raw, replay.created_ms, state.n_players, replay.tick_ms)
    moved = dataclasses.replace(found, at_ms=found.at_ms + later_ms)
    return log.encode(moved, replay.created_ms, state.n_players, replay.tick_ms)


def test_a_wake_up_at_the_feeds_last_version_with_another_record_rewinds_it(
    records: list[bytes], redis_server: RedisServer
) -> None:
    """Redis lost entries 9 and 10 and the game took two others at those versions while this
    process stayed subscribed: the wake-up of the new 10 carries another record than the
    feed's 10. The feed must be rebuilt from the stored log (a stream sent the lost 9 and 10
    ends); it took the new 10 for one it had, and appended the game's next entry to the lost
    ones."""
    client = redis.Redis.from_url(redis_server.url)
    game_id = f"rewritten{random.randrange(10**9)}"
    other = [other_record(records[i], records[:i], 10 * log.TICK_MS) for i in (8, 9)]
    client.hset(keys.game_key(game_id), "v", 10)
    client.rpush(keys.log_key(game_id), *records[:8], *other)
    hub = Hub(GameStore(client), presence_ms=30_000)
    f = hub.feeds[game_id] = Feed(game_id, hub.store)
    f._append(records[:10])
    f.heard(10)
    hub._wake(b"%s 10 %d:%s" % (game_id.encode(), len(records[9]), records[9]))
    assert f.rewinds == 0, "a wake-up of the record the feed holds is no rewind"
    hub._wake(b"%s 10 %d:%s" % (game_id.encode(), len(other[1]), other[1]))
    assert until(lambda: f.rewinds == 1), "the rewind was never made"
    assert f.rewound_to == 8
    stored = [entry.record for entry in f.entries]
    replay = Replayer()
    assert stored == [replay.feed(raw).record for raw in [*records[:8], *other]]


class GatedStore(GameStore):
    """A store whose whole-log reads wait for ``gate`` before reading Redis (or, ``late``,
    before returning what they read, ``read`` set): a log so long that its read and replay
    take a while."""

    def __init__(self, client: redis.Redis, late: bool = False) -> None:
        super().__init__(client)
        self.gate, self.read, self.late = threading.Event(), threading.Event(), late

    def log(self, game_id: str, after: int = 0) -> tuple[int, list[bytes]]:
        if not self.late:
            self.gate.wait(3 * WAIT)
        found = super().log(game_id, after)
        self.read.set()
        self.gate.wait(3 * WAIT)
        return found


def test_a_rewind_read_holds_no_other_games_wake_ups(
    records: list[bytes], redis_server: RedisServer
) -> None:
    """A wake-up reveals that game A's log was rewritten; the rewind's read of A's whole log
    is slow. Game B's wake-up, heard meanwhile, must be applied at once, and A rewound once the
    read is done. The rewind was read inside the pub/sub listener, which holds every game's
    wake-ups of its connection until it returns."""
    client = redis.Redis.from_url(redis_server.url)
    gated = GatedStore(client)
    a, b = (f"{name}{random.randrange(10**9)}" for name in ("slow", "other"))
    other = [other_record(records[i], records[:i], 10 * log.TICK_MS) for i in (8, 9)]
    client.hset(keys.game_key(a), "v", 10)
    client.rpush(keys.log_key(a), *records[:8], *other)
    hub = Hub(gated, presence_ms=30_000)
    fa = hub.feeds[a] = Feed(a, gated)
    fa._append(records[:10])
    fa.heard(10)
    fb = hub.feeds[b] = Feed(b, gated)
    fb._append(records[:5])
    fb.heard(5)
    try:

        def listen() -> None:  # what the pub/sub connection's greenlet hears, in order
            hub._wake(b"%s 10 %d:%s" % (a.encode(), len(other[1]), other[1]))
            hub._wake(b"%s 6 %d:%s" % (b.encode(), len(records[5]), records[5]))

        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        listener.join(WAIT)
        assert not listener.is_alive(), "the listener waits for another game's log"
        assert len(fb.entries) == 6, "game B's wake-up waited for A's rewind"
        assert fa.rewinds == 0
    finally:
        gated.gate.set()
    assert until(lambda: fa.rewinds == 1), "A's rewind was never made"
    assert fa.rewound_to == 8
    replay = Replayer()
    assert [e.record for e in fa.entries] == [replay.feed(r).record for r in [*records[:8], *other]]


def test_a_rewind_that_could_not_be_started_is_started_at_the_next_finding(
    records: list[bytes], redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread of a rewind cannot be started (a process at its threads' limit): the feed is
    not left owing a rewind that nobody makes, which would keep it from any later one and from
    every wake-up's records; the next finding rewinds it."""
    client = redis.Redis.from_url(redis_server.url)
    game_id = f"unstarted{random.randrange(10**9)}"
    other = [other_record(records[i], records[:i], 10 * log.TICK_MS) for i in (8, 9)]
    client.hset(keys.game_key(game_id), "v", 10)
    client.rpush(keys.log_key(game_id), *records[:8], *other)
    hub = Hub(GameStore(client), presence_ms=30_000)
    f = hub.feeds[game_id] = Feed(game_id, hub.store)
    f._append(records[:10])
    f.heard(10)
    wake = b"%s 10 %d:%s" % (game_id.encode(), len(other[1]), other[1])
    start = threading.Thread.start

    def refused(self: threading.Thread) -> None:
        if self.name != "rewind":
            start(self)
            return
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refused)
    hub._wake(wake)  # the finding's rewind is not started
    monkeypatch.setattr(threading.Thread, "start", start)
    assert f.rewinds == 0
    hub._wake(wake)
    assert until(lambda: f.rewinds == 1), "the feed owes a rewind nobody makes"
    assert f.rewound_to == 8


class WaitedFeed(Feed):
    """A feed that tells when a reader first waits on it."""

    def __init__(self, game_id: str, store: GameStore) -> None:
        super().__init__(game_id, store)
        self.waited = threading.Event()

    def wait(
        self,
        after: int,
        timeout: float,
        presence_seq: int | None = None,
        rewinds: int | None = None,
    ) -> bool:
        self.waited.set()
        return super().wait(after, timeout, presence_seq, rewinds)


def test_a_stream_woken_while_a_rewind_is_read_is_sent_no_lost_entry(
    records: list[bytes], redis_server: RedisServer
) -> None:
    """The ticker found game's log rewritten (9 and 10 lost, others written at 9 to 11) and the
    rewind's read is slow; meanwhile the wake-up of 11 wakes a stream at 8. It must wait for
    the rewind and go on with the stored 9 to 11: it caught up onto the feed's lost 9 and 10,
    sent them, and ended at the rewind."""
    client = redis.Redis.from_url(redis_server.url)
    gated = GatedStore(client)
    game_id = f"stale{random.randrange(10**9)}"
    other = [other_record(records[i], records[:i], 10 * log.TICK_MS) for i in (8, 9, 10)]
    client.hset(keys.game_key(game_id), "v", 11)
    client.rpush(keys.log_key(game_id), *records[:8], *other)
    hub = Hub(gated, presence_ms=30_000)
    f = hub.feeds[game_id] = WaitedFeed(game_id, gated)
    f._append(records[:8])
    f.heard(8)
    ended, sent = threading.Event(), bytearray()

    def follow() -> None:
        for data in stream(f, 8, Viewer(Role.PUBLIC), Media.SSE, lifetime=3 * WAIT):
            sent.extend(data)
        ended.set()

    threading.Thread(target=follow, daemon=True).start()
    assert f.waited.wait(WAIT), "the stream never waited"
    f._append(records[8:10])  # published, then lost: a waiting stream is not woken for them
    try:
        hub._reread([f])  # the ticker finds the rewind; its read waits for the gate
        assert f.stale and f.rewinds == 0
        hub._wake(b"%s 11 %d:%s" % (game_id.encode(), len(other[2]), other[2]))
        time.sleep(0.5)  # the woken stream's chance to send what the feed holds
    finally:
        gated.gate.set()
    assert until(lambda: f.rewinds == 1), "the rewind was never made"
    assert until(lambda: b"id: 11\n" in sent), bytes(sent)
    lost, stored = Replayer(), Replayer()
    lost_nine = [lost.feed(raw) for raw in records[:9]][-1]
    stored_nine = [stored.feed(raw) for raw in [*records[:8], other[0]]][-1]
    public = Viewer(Role.PUBLIC)
    assert sse_message(lost_nine, public.entry_json(lost_nine)) not in sent, "a lost entry sent"
    assert sse_message(stored_nine, public.entry_json(stored_nine)) in sent
    assert not ended.is_set()


def test_a_rewind_found_during_a_rewinds_read_is_read_again_at_once(
    records: list[bytes], redis_server: RedisServer
) -> None:
    """Redis lost the game's 9 and 10 and took others; while the rewind's read of them runs,
    Redis loses those too and takes a third pair, which the ticker finds. The rewind must read
    the log again as soon as its read is done: the finding was dropped, and the feed held the
    second pair until the ticker's next read found it again (this hub runs no ticker)."""
    client = redis.Redis.from_url(redis_server.url)
    gated = GatedStore(client, late=True)
    game_id = f"twice{random.randrange(10**9)}"
    first, second = (
        [other_record(records[i], records[:i], later * log.TICK_MS) for i in (8, 9)]
        for later in (10, 20)
    )
    client.hset(keys.game_key(game_id), "v", 10)
    client.rpush(keys.log_key(game_id), *records[:8], *first)
    hub = Hub(gated, presence_ms=30_000)
    f = hub.feeds[game_id] = Feed(game_id, gated)
    f._append(records[:10])
    f.heard(10)
    try:
        hub._reread([f])  # the ticker's finding: its rewind reads the first pair, then waits
        assert gated.read.wait(WAIT)
        client.ltrim(keys.log_key(game_id), 0, 7)
        client.rpush(keys.log_key(game_id), *second)
        hub._reread([f])  # the ticker's next finding, during the read
    finally:
        gated.gate.set()
    assert until(lambda: f.rewinds == 2), "the finding during the read was never read"
    replay = Replayer()
    assert [e.record for e in f.entries] == [replay.feed(r).record for r in [*records[:8], *second]]
    assert not f.stale and not f.rewinding


class TurnstileStore(GameStore):
    """A store whose whole-log reads each release ``read`` once they read Redis, then wait for
    one release of ``gate`` before returning: reads held one at a time."""

    def __init__(self, client: redis.Redis) -> None:
        super().__init__(client)
        self.read, self.gate = threading.Semaphore(0), threading.Semaphore(0)

    def log(self, game_id: str, after: int = 0) -> tuple[int, list[bytes]]:
        found = super().log(game_id, after)
        self.read.release()
        self.gate.acquire(timeout=3 * WAIT)
        return found


def test_a_rewind_read_again_is_not_read_a_third_time_for_being_stale(
    records: list[bytes], redis_server: RedisServer
) -> None:
    """A finding during a rewind's read has it read again, the feed stale meanwhile; the
    ticker's read during that second read finds the log as the first read took it. The rewind
    must end with the second read: were a stale feed taken for a finding of its own, every
    read that spans a tick would be read again, and the feed stay stale for ever."""
    client = redis.Redis.from_url(redis_server.url)
    store = TurnstileStore(client)
    game_id = f"thrice{random.randrange(10**9)}"
    other = [other_record(records[i], records[:i], 10 * log.TICK_MS) for i in (8, 9)]
    client.hset(keys.game_key(game_id), "v", 10)
    client.rpush(keys.log_key(game_id), *records[:8], *other)
    hub = Hub(store, presence_ms=30_000)
    f = hub.feeds[game_id] = Feed(game_id, store)
    f._append(records[:10])
    f.heard(10)
    hub._reread([f])  # the finding: the first read
    assert store.read.acquire(timeout=WAIT)
    hub._reread([f])  # the ticker during the first read: the second read
    store.gate.release()
    assert store.read.acquire(timeout=WAIT), "the finding during the read was never read"
    assert f.stale and f.rewinds == 1
    hub._reread([f])  # the ticker during the second read: nothing new
    store.gate.release()
    assert until(lambda: not f.stale), "the feed stays stale"
    assert f.rewinds == 2 and not f.rewinding
    assert not store.read.acquire(timeout=0.5), "a third read"


def test_a_stream_sent_a_lost_entry_ends_though_it_looks_only_after_a_rewind_read_again(
    records: list[bytes], redis_server: RedisServer
) -> None:
    """A stream was sent the feed's 9 and 10, then Redis lost them and took others; the ticker
    finds it during the rewind's read too, so the log is read twice, the feed stale between the
    two. The stream, busy meanwhile (a slow client's socket), looks at the feed only after the
    second read: it must end, its 9 and 10 lost. The second read told only how much it shared
    with the first (all of it), and the stream went on with the lost 9 and 10, waiting past
    them."""
    client = redis.Redis.from_url(redis_server.url)
    store = TurnstileStore(client)
    game_id = f"unseen{random.randrange(10**9)}"
    other = [other_record(records[i], records[:i], 10 * log.TICK_MS) for i in (8, 9)]
    client.hset(keys.game_key(game_id), "v", 10)
    client.rpush(keys.log_key(game_id), *records[:8], *other)
    hub = Hub(store, presence_ms=30_000)
    f = hub.feeds[game_id] = Feed(game_id, store)
    f._append(records[:10])
    f.heard(10)
    frames = stream(f, 8, Viewer(Role.PUBLIC), Media.SSE, lifetime=3 * WAIT)
    next(frames)  # the retry line
    assert b"id: 10\n" in next(frames)  # the stream stops there: its client reads slowly
    hub._reread([f])  # the finding: the first read
    assert store.read.acquire(timeout=WAIT)
    hub._reread([f])  # the ticker during the first read: the second read
    store.gate.release()
    assert store.read.acquire(timeout=WAIT)
    store.gate.release()
    assert until(lambda: f.rewinds == 2 and not f.stale), "the rewind was never made"
    ended = threading.Event()

    def resume() -> None:
        for _ in frames:
            pass
        ended.set()

    threading.Thread(target=resume, daemon=True).start()
    assert until(ended.is_set), "the stream holding the lost 9 and 10 goes on"


class WatchedFeed(Feed):
    """A feed that, at each step of any change of its attributes, records what a reader on
    another thread (the API pool's threads hold no lock to read) would be shown after 8."""

    def __setattr__(self, name: str, value: object) -> None:
        super().__setattr__(name, value)
        looks = self.__dict__.get("looks")
        if looks is not None:
            looks.append([entry.record for entry in self.since(8)])


def test_a_reader_looking_while_a_rewind_is_made_is_shown_no_lost_entry(
    records: list[bytes], redis_server: RedisServer
) -> None:
    """A reader reads a feed without its lock. Between any two steps of the rewind that
    replaces the lost 9 and 10, it must be shown none of them: the feed was no longer stale
    before its entries were replaced, and a reader there was shown the lost 9 and 10 as the
    stored log's."""
    client = redis.Redis.from_url(redis_server.url)
    game_id = f"midway{random.randrange(10**9)}"
    other = [other_record(records[i], records[:i], 10 * log.TICK_MS) for i in (8, 9)]
    client.hset(keys.game_key(game_id), "v", 10)
    client.rpush(keys.log_key(game_id), *records[:8], *other)
    hub = Hub(GameStore(client), presence_ms=30_000)
    f = hub.feeds[game_id] = WatchedFeed(game_id, hub.store)
    f._append(records[:10])
    f.heard(10)
    lost = {entry.record for entry in f.entries[8:]}
    object.__setattr__(f, "looks", [])  # watched from the finding on
    hub._wake(b"%s 10 %d:%s" % (game_id.encode(), len(other[1]), other[1]))
    assert until(lambda: f.rewinds == 1 and not f.stale), "the rewind was never made"
    assert f.looks, "no step watched"
    assert not [shown for shown in f.looks if lost & set(shown)], "a lost entry shown"


def test_a_stream_short_of_a_stale_feeds_last_entry_waits_for_the_rewind(
    records: list[bytes], redis_server: RedisServer
) -> None:
    """The feed holds the whole game, its end included; Redis lost the last two entries and
    took others, and the rewind's read is slow. A stream a few entries short of the end,
    looking meanwhile, must wait for the rewind and send the stored entries: it took the
    feed's lost end for the game's, was past no entry it could send, and ended at once (its
    client reconnecting, to end again, until the rewind)."""
    client = redis.Redis.from_url(redis_server.url)
    gated = GatedStore(client)
    game_id = f"ending{random.randrange(10**9)}"
    n = len(records)
    other = [other_record(records[i], records[:i], 10 * log.TICK_MS) for i in (n - 2, n - 1)]
    client.hset(keys.game_key(game_id), "v", n)
    client.rpush(keys.log_key(game_id), *records[: n - 2], *other)
    hub = Hub(gated, presence_ms=30_000)
    f = hub.feeds[game_id] = Feed(game_id, gated)
    f._append(records)
    f.heard(n)
    assert f.final == n, "the game's records end it"
    ended, sent = threading.Event(), bytearray()
    frames = stream(f, n - 3, Viewer(Role.PUBLIC), Media.SSE, lifetime=3 * WAIT)

    def follow() -> None:
        for data in frames:
            sent.extend(data)
        ended.set()

    try:
        hub._reread([f])  # the ticker finds the rewind; its read waits for the gate
        assert f.stale
        threading.Thread(target=follow, daemon=True).start()
        time.sleep(0.5)  # the stream's chance to look at the stale feed
    finally:
        gated.gate.set()
    assert until(lambda: f.rewinds == 1 and not f.stale), "the rewind was never made"
    assert until(ended.is_set), "the stream never ended"
    assert b"id: %d\n" % (n - 2) in sent, bytes(sent)
    replay = Replayer()
    stored = [replay.feed(raw) for raw in [*records[: n - 2], *other]][-1]
    assert sse_message(stored, Viewer(Role.PUBLIC).entry_json(stored)) in sent
