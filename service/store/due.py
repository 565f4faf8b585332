"""Games the server owes a change, by when: what the worker's sweep looks for.

A stored change hands its game to the worker after the compare-and-set (the queue's keys carry
the tag ``{work}``, the game's its own, so no script writes both). That hand-over can be lost
while the change is kept: an AOF whose tail lost the queue's write, a failover of the queue's
master, a process that died while it owed the write. The game then waits for a person's action,
and a table of bots alone waits for ever.

So the compare-and-set (and the creation) also writes, in the game's own slot, when the server
owes the game its next change by itself: now (a bot's move, a deal, a seek table's fill) or a
turn clock's deadline; a game owed nothing leaves the set. On one Redis that is one sorted set,
``mt:{due}``; on a cluster there is one per hash slot (:func:`.keys.due_slot_key`), named to
hash to the slot of the games it holds, so one script writes it with the change (and the
sweep reads a master's sets in one script, :data:`_READ_SLOTS`). What the set
says is then exactly what the stored games say, whatever write after the change was lost.

The worker's sweep (service/worker/sweep.py) reads the games owed a change for a while and
queues those the queue does not hold. Games stored before the due sets were written have no
entry until their next change; :meth:`DueSets.unlisted` finds them for the worker's backfill
(service/worker/backfill.py).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Any

import redis
from redis.cluster import RedisCluster

from . import keys

log = logging.getLogger(__name__)


#: Keys a ``SCAN`` call looks at (its ``COUNT``): a few milliseconds of its node at most.
SCAN_BATCH = 200


class DueSets:
    def __init__(self, client: redis.Redis | RedisCluster) -> None:
        self.client = client

    def overdue(self, since_ms: int, limit: int) -> list[tuple[str, int]]:
        """Games owed a change since ``since_ms`` or before (up to ``limit`` a set, the
        longest owed first), each with that time: one round trip per node."""
        if not isinstance(self.client, RedisCluster):
            found: Any = self.client.zrangebyscore(
                keys.DUE, "-inf", since_ms, start=0, num=limit, withscores=True
            )
            return [(game.decode(), int(score)) for game, score in found]
        owed: list[tuple[str, int]] = []
        for client, node, names in _masters(self.client):
            try:
                for start in range(0, len(names), SLOTS_PER_CALL):
                    chunk = names[start : start + SLOTS_PER_CALL]
                    owed += _read(client, node, chunk, since_ms, limit)
            except redis.RedisError as err:
                # A master down (the cluster serves on without it: full coverage is not
                # required) must not stop the sweep of the others' games; its own are read
                # once it, or the replica that takes over, answers.
                log.warning("due sets of %s not read: %s: %s", node, type(err).__name__, err)
        return owed

    def unlisted(self, batch: int = SCAN_BATCH) -> Iterator[list[str]]:
        """Live games that have no entry in their due set, a ``SCAN`` batch of at most about
        ``batch`` keys at a time on each master (never ``KEYS``: a batch holds its node no
        longer than a command), one list per batch (empty when it found none: its reader may
        look at its lease between any two). Some may be owed nothing: whether they are owed a
        change is for the stored record to say. Raises on a master that does not answer (a node's
        keys are then not all seen), and on one that restarted during its scan (the client
        reconnects by itself, but a cursor of the process before skips keys of the new one)."""
        for client, node in self._nodes():
            started = _run_id(client, node)
            cursor = 0
            while True:
                cursor, names = _scan(client, node, cursor, batch)
                found = [m[1] for name in names if (m := _GAME_KEY.fullmatch(name.decode()))]
                yield self._without_entry(found) if found else []
                if cursor == 0:
                    break
            if _run_id(client, node) != started:
                raise Restarted(f"{node or 'Redis'} restarted during its scan")

    def _nodes(self) -> list[tuple[redis.Redis | RedisCluster, Any]]:
        if not isinstance(self.client, RedisCluster):
            return [(self.client, None)]
        # A master holding several ranges of slots is named once per range: scanned once.
        by_name = {node.name: (client, node) for client, node, _ in _masters(self.client)}
        return list(by_name.values())

    def _without_entry(self, games: list[str]) -> list[str]:
        sharded = isinstance(self.client, RedisCluster)
        pipe = self.client.pipeline(transaction=False)
        for game in games:
            pipe.zscore(keys.due_key(game, sharded), game)
        scores = pipe.execute()
        return [game for game, score in zip(games, scores, strict=True) if score is None]


#: A game's hash (:func:`.keys.game_key`); its other keys, and every other ``mt:{...}`` key
#: (a player's, a due set, the queue's), do not match.
_GAME_KEY = re.compile(re.escape(keys.PREFIX) + r"\{(" + keys.GAME_ID_RE.pattern + r")\}")


class Restarted(redis.RedisError):
    """A node restarted while its keys were scanned: some of them were not seen."""


def _run_id(client: redis.Redis | RedisCluster, node: Any) -> str:
    """The node's process (``INFO server``'s ``run_id``: a new one at each start)."""
    if node is None:
        info: Any = client.info("server")
    else:
        info = client.info("server", target_nodes=node)
    return str(info["run_id"])


def _scan(
    client: redis.Redis | RedisCluster, node: Any, cursor: int, batch: int
) -> tuple[int, list[bytes]]:
    pattern = keys.PREFIX + "{*}"
    if node is None:
        reply: Any = client.scan(cursor, match=pattern, count=batch, _type="hash")
        return int(reply[0]), list(reply[1])
    # The cluster client answers each node's cursor by its name, and their keys together.
    cursors, names = client.execute_command(  # type: ignore[no-untyped-call]
        "SCAN", cursor, "MATCH", pattern, "COUNT", batch, "TYPE", "hash", target_nodes=node
    )
    return int(next(iter(cursors.values()))), list(names)


#: Slots read per script on a cluster: a call holds its master for a few milliseconds at most.
SLOTS_PER_CALL = 1024

#: Reads many slots' due sets in one call on the master that holds them all (the flag lets a
#: script touch keys of several slots of its own node; names come in ARGV, for no key routes
#: it), since a pipeline of 16,384 reads costs the sweeper far more CPU than a few calls.
#: A set Redis will not read here (its slot migrating, or no longer this node's: a reshard or a
#: failover since the slot map was read) is skipped, not an error: one such slot would fail the
#: whole call, and the sweep with it, for as long as a reshard runs. A later sweep reads it.
#: Returns how many sets were skipped, then each owed game and its time.
_READ_SLOTS = """#!lua flags=allow-cross-slot-keys,no-writes
local out = {0}
for i = 3, #ARGV do
  local owed = redis.pcall('ZRANGEBYSCORE', ARGV[i], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0,
    ARGV[2])
  if owed.err then
    out[1] = out[1] + 1
  else
    for j = 1, #owed do table.insert(out, owed[j]) end
  end
end
return out
"""


def _masters(client: RedisCluster) -> list[tuple[RedisCluster, Any, list[str]]]:
    """Each master the cluster's slot map names, with its slots' due sets (a master this
    client does not know yet is read at a later sweep, once the client has found it)."""
    out = []
    ranges: Any = client.cluster_slots()
    for (first, last), where in ranges.items():
        host, port = where["primary"][:2]
        node = client.get_node(host=host, port=port)  # type: ignore[no-untyped-call]
        if node is not None:
            out.append((client, node, [keys.due_slot_key(s) for s in range(first, last + 1)]))
    return out


def _read(
    client: RedisCluster, node: Any, names: list[str], since_ms: int, limit: int
) -> list[tuple[str, int]]:
    flat: Any = client.execute_command(  # type: ignore[no-untyped-call]
        "EVAL", _READ_SLOTS, 0, since_ms, limit, *names, target_nodes=node
    )
    if skipped := int(flat[0]):
        log.info(
            "%d due sets on %s out of reach (a reshard, a failover): left to a later sweep",
            skipped,
            node,
        )
    return [(flat[i].decode(), int(flat[i + 1])) for i in range(1, len(flat), 2)]
