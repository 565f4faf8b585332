"""The API on a 3-master Redis Cluster (REDIS_CLUSTER=1, REDIS_URL naming one node):

- the API's own tests for tokens, versions/If-Match/idempotency/expiry/positions, the lobby's
  per-filter sets (one slot, every script's keys in it) and the 20-way race through two
  gunicorn instances, and two rated games of one player rated at once, re-run unchanged with
  this folder's cluster fixtures;
- bot games through two gunicorn instances that were each given a different node, checked
  against the same games played in-process (same seed, same moves, same scores).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_cluster import LocalRedisCluster
from service.tournament.runner import game_specs, play_local, run_http
from tests.api.test_access import *  # noqa: F403
from tests.api.test_concurrency import test_twenty_identical_plays  # noqa: F401
from tests.api.test_lobby_index import (  # noqa: F401
    test_a_table_gone_behind_a_hundred_newer_open_ones_leaves_the_lobby,
    test_a_table_is_in_every_set_of_its_kind_while_listed_and_in_none_once_it_left,
    test_tables_listed_without_their_kind_are_sorted_into_its_sets_by_the_next_listing,
)
from tests.api.test_rate_limits import *  # noqa: F403
from tests.api.test_rating_races import (  # noqa: F401
    test_a_game_rated_between_another_games_read_and_write_is_not_lost,
    test_many_rated_games_of_one_player_rated_at_once_all_count,
)
from tests.api.test_versions import *  # noqa: F403

# Rate limiting on (far above what the tests send) so its counters are on the cluster too.
CLUSTER_ENV = {"REDIS_CLUSTER": "1", "RATE_LIMIT_PER_MINUTE": "1000000"}


@pytest.fixture(scope="module")
def two_instances(redis_cluster: LocalRedisCluster) -> Iterator[list[str]]:
    """Two gunicorn instances on the cluster, each bootstrapped from a different node."""
    first, second = redis_cluster.urls[:2]
    with (
        start_gunicorn(first, workers=2, env=CLUSTER_ENV) as a,
        start_gunicorn(second, workers=2, env=CLUSTER_ENV) as b,
    ):
        yield [a, b]


def test_bot_games_on_cluster_match_local_play(
    two_instances: list[str], redis_cluster: LocalRedisCluster
) -> None:
    for base in two_instances:
        assert requests.get(base + "/readyz", timeout=5).status_code == 200
    specs = game_specs(["planner", "greedy", "random"], 12, base_seed=4242, options={"rounds": 1})
    # Half the games on each instance: both read and write every slot of the cluster.
    outcomes = []
    for i, base in enumerate(two_instances):
        outcomes += list(run_http(base, specs[i::2], concurrency=4))
    assert all(not isinstance(o, BaseException) for o in outcomes), outcomes
    got = {o.index: (o.digest, o.totals, o.moves) for o in outcomes}  # type: ignore[union-attr]
    want = {s.index: (r.digest, r.totals, r.moves) for s in specs for r in [play_local(s)]}
    assert got == want
    # Every key the service wrote carries one hash tag: a game's id (its state, log, idempotency
    # records, rate counters, stream and transfer tickets, worker lease, who is at the table:
    # one slot, so each Lua compare-and-set stays on one node), a keyed create's own tag, the
    # worker queue's one tag (its backfill's lease and flag too, once a pass ran), or a slot's
    # due set (its tag hashes to the slot of its games).
    client = redis_cluster.client()
    tagged = re.compile(
        rb"^mt:\{([A-Za-z0-9_-]{8,32}|create:[0-9a-f]+)\}"
        rb"(:(idem|rate|ticket|transfer):[0-9a-f]+|:(log|lease|presence))?$"
        rb"|^mt:\{work\}:(jobs|more|due|sweep|backfill|backfilled)$|^mt:\{due:[@A-O]{4}\}$"
    )
    kinds = set()
    for key in client.scan_iter(match="*"):
        match = tagged.match(key)
        assert match, key
        kinds.add(match.group(3) or match.group(4))
    assert {None, b"idem", b"rate", b"log"} <= kinds, kinds
    # The games spread over every master.
    sizes = [
        redis_cluster.client().get_redis_connection(n).dbsize()
        for n in redis_cluster.client().get_primaries()
    ]
    assert all(size > 0 for size in sizes), sizes
