"""Per-game wake-up subscriptions (SSUBSCRIBE), each on the node that owns the game's slot.

A sharded channel is served by the shard holding its slot only, so a process that follows games
on several masters holds one pub/sub connection per master (one in all on a single Redis). Each
connection is owned by one thread, :class:`NodeListener`: it alone reads and writes it, and
applies the subscribe and unsubscribe requests queued by other threads between two reads (a
connection read by one thread while another writes to it would interleave replies).

Subscriptions follow the cluster: a slot that moves makes its old owner push ``sunsubscribe``
for its channels, and a connection that fails (a master killed) ends its listener. Either way
the games concerned are placed again on the owner named by a fresh slot map, and once a new
subscription is confirmed ``on_subscribed`` tells the caller to read what those games did
meanwhile: a wake-up is only a wake-up, the log is the truth.

redis-py's ``ClusterPubSub`` is not used: it reconciles moved channels on a worker thread that
writes to the per-node connections while the reader polls them, and its
``get_sharded_message(timeout=...)`` waits on each node in turn, so one quiet node would delay
another's wake-up by the whole timeout.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from queue import Empty, SimpleQueue
from typing import Any

import redis
from redis.client import PubSub
from redis.cluster import RedisCluster
from redis.exceptions import RedisError, ResponseError

from service.frameworks.redis_py import RETRY, ShardedPubSub

from . import keys

log = logging.getLogger(__name__)

#: How long a listener's read waits before it applies queued requests: the most a new
#: subscription waits to be sent (a game's wake-ups meanwhile are read by ``on_subscribed``).
POLL_SECONDS = 0.05

#: The node name of a single Redis (no cluster): every game is there.
SINGLE = ""


class Op(Enum):
    SUBSCRIBE = "ssubscribe"
    UNSUBSCRIBE = "sunsubscribe"


@dataclass
class Placement:
    """Where a followed game's subscription stands: sent to ``listener``, confirmed or not."""

    listener: NodeListener
    confirmed: bool = False


class NodeListener:
    """One node's pub/sub connection and the thread that alone uses it."""

    def __init__(self, node: str, pubsub: PubSub, owner: WakeupSubscriber) -> None:
        self.node = node
        self.pubsub = pubsub
        self.owner = owner
        self.requests: SimpleQueue[tuple[Op, str]] = SimpleQueue()
        self.running = True

    def start(self) -> None:
        name = f"wakeups {self.node or 'redis'}"
        threading.Thread(target=self.run, name=name, daemon=True).start()

    def ask(self, op: Op, channel: str) -> None:
        self.requests.put((op, channel))

    def run(self) -> None:
        try:
            while self.running:
                self._apply()
                try:
                    message = self.pubsub.get_message(timeout=POLL_SECONDS)
                except ResponseError as err:  # a subscription refused (MOVED: a stale map)
                    log.warning("wake-ups refused by %s: %s", self.node, err)
                    self.owner.refused(self)
                    continue
                if message is not None:
                    self.owner.heard(self, message)
        except Exception as err:  # the connection is gone (after redis-py's own retries)
            log.warning("wake-ups from %s end: %s: %s", self.node, type(err).__name__, err)
        finally:
            self.running = False
            self.owner.ended(self)
            self.pubsub.close()

    def _apply(self) -> None:
        while True:
            try:
                op, channel = self.requests.get_nowait()
            except Empty:
                return
            if op is Op.SUBSCRIBE:
                self.pubsub.ssubscribe(channel)
            else:
                self.pubsub.sunsubscribe(channel)  # type: ignore[no-untyped-call]

    def forget(self, channel: bytes) -> None:
        """The server dropped ``channel`` (its slot moved): a reconnection must not renew it."""
        self.pubsub.shard_channels.pop(channel, None)


class WakeupSubscriber:
    """The followed games' wake-up subscriptions of one process. Thread-safe; no call but
    :meth:`repair` waits on the network."""

    def __init__(
        self,
        client: redis.Redis | RedisCluster,
        on_wakeup: Callable[[bytes], None],
        on_subscribed: Callable[[list[str]], None],
    ) -> None:
        self.client = client
        self.on_wakeup = on_wakeup
        self.on_subscribed = on_subscribed
        self.placed: dict[str, Placement | None] = {}  # followed games; None: not placed
        self.listeners: dict[str, NodeListener] = {}
        self._lock = threading.Lock()

    def follow(self, game_id: str) -> None:
        with self._lock:
            if game_id not in self.placed:
                self.placed[game_id] = None
                self._place(game_id)

    def unfollow(self, game_id: str) -> None:
        with self._lock:
            placement = self.placed.pop(game_id, None)
            if placement is not None:
                placement.listener.ask(Op.UNSUBSCRIBE, keys.wakeup_channel(game_id))

    def nodes(self) -> dict[str, list[str]]:
        """The confirmed subscriptions by node (tests, metrics)."""
        with self._lock:
            found: dict[str, list[str]] = {}
            for game_id, placement in self.placed.items():
                if placement is not None and placement.confirmed:
                    found.setdefault(placement.listener.node, []).append(game_id)
            return found

    def repair(self) -> None:
        """Place every followed game that has no subscription (its node failed, its slot moved,
        or it was refused), after reading the slot map again; stop idle listeners."""
        with self._lock:
            homeless = [g for g, p in self.placed.items() if p is None]
        if homeless:
            self._read_slot_map()
        with self._lock:
            for game_id in homeless:
                if game_id in self.placed and self.placed[game_id] is None:
                    self._place(game_id)
            busy = {id(p.listener) for p in self.placed.values() if p is not None}
            for node, listener in list(self.listeners.items()):
                if id(listener) not in busy:
                    listener.running = False
                    del self.listeners[node]

    def _place(self, game_id: str) -> None:
        """Ask the owner of the game's slot to subscribe (the lock held)."""
        channel = keys.wakeup_channel(game_id)
        try:
            node = self._owner(channel)
        except RedisError as err:  # the slot has no known owner now: repair() tries again
            log.warning("wake-ups of %s not placed: %s", game_id, err)
            return
        listener = self.listeners.get(node)
        if listener is None or not listener.running:
            listener = self.listeners[node] = NodeListener(node, self._pubsub(node), self)
            listener.start()
        listener.ask(Op.SUBSCRIBE, channel)
        self.placed[game_id] = Placement(listener)

    def _owner(self, channel: str) -> str:
        if not isinstance(self.client, RedisCluster):
            return SINGLE
        return str(self.client.get_node_from_key(channel).name)  # type: ignore[no-untyped-call]

    def _read_slot_map(self) -> None:
        if isinstance(self.client, RedisCluster):
            try:
                self.client.nodes_manager.initialize()
            except RedisError as err:
                log.warning("slot map not read: %s: %s", type(err).__name__, err)

    def _pubsub(self, node: str) -> PubSub:
        """A pub/sub connection of its own to ``node``, apart from the pooled connections."""
        if not isinstance(self.client, RedisCluster):
            return ShardedPubSub(self.client.connection_pool)
        host, _, port = node.rpartition(":")
        default = self.client.get_default_node()  # type: ignore[no-untyped-call]
        options = default.redis_connection.connection_pool.connection_kwargs
        plain = redis.Redis(
            host=host,
            port=int(port),
            username=options.get("username"),
            password=options.get("password"),
            socket_connect_timeout=options.get("socket_connect_timeout"),
            retry=RETRY,  # one reconnection at once, then repair() reads the slot map again
        )
        return ShardedPubSub(plain.connection_pool)

    def heard(self, listener: NodeListener, message: dict[str, Any]) -> None:
        """A message on ``listener``'s connection (its thread)."""
        kind, channel = message["type"], message["channel"]
        if kind == "smessage":
            self.on_wakeup(message["data"])
            return
        game_id = keys.wakeup_channel_game(channel)
        if game_id is None:
            return
        if kind == Op.SUBSCRIBE.value:
            if self._confirm(game_id, listener):
                self.on_subscribed([game_id])
        elif kind == Op.UNSUBSCRIBE.value and self._lost(game_id, listener):
            self.repair()  # on the owner a fresh slot map names

    def _confirm(self, game_id: str, listener: NodeListener) -> bool:
        with self._lock:
            placement = self.placed.get(game_id)
            if placement is None or placement.listener is not listener:
                return False
            placement.confirmed = True
            return True

    def _lost(self, game_id: str, listener: NodeListener) -> bool:
        """A ``sunsubscribe`` for a game still followed there: the server dropped it."""
        with self._lock:
            placement = self.placed.get(game_id)
            if placement is None or placement.listener is not listener:
                return False  # asked for by unfollow (or already placed elsewhere)
            listener.forget(keys.wakeup_channel(game_id).encode())
            self.placed[game_id] = None
            return True

    def refused(self, listener: NodeListener) -> None:
        """A subscription sent to ``listener`` was refused: its games not yet confirmed there
        are placed again by :meth:`repair`, after a fresh slot map."""
        with self._lock:
            for game_id, placement in self.placed.items():
                if placement and placement.listener is listener and not placement.confirmed:
                    listener.forget(keys.wakeup_channel(game_id).encode())
                    self.placed[game_id] = None

    def ended(self, listener: NodeListener) -> None:
        """``listener``'s connection failed (or it was stopped, holding no game): its games are
        placed again by :meth:`repair`."""
        with self._lock:
            if self.listeners.get(listener.node) is listener:
                del self.listeners[listener.node]
            for game_id, placement in self.placed.items():
                if placement is not None and placement.listener is listener:
                    self.placed[game_id] = None
