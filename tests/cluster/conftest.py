"""Cluster fixtures: the shared fixture names, served by a local 3-master Redis Cluster.

Tests in this folder that reuse other folders' test functions get these instead of the single
redis-server ones (pytest picks the closest conftest), so the same assertions run on a cluster.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient
from redis.cluster import RedisCluster

from devstack.redis_cluster import LocalRedisCluster
from devstack.redis_server import RedisServer
from service.api.app import create_app


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[LocalRedisCluster]:
    with LocalRedisCluster(masters=3) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def redis_server(redis_cluster: LocalRedisCluster) -> RedisServer:
    """Tests that take the server's URL get one cluster node (REDIS_CLUSTER=1 does the rest)."""
    return redis_cluster.nodes[0]


@pytest.fixture(autouse=True)
def cluster_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every app and gunicorn built in this folder uses the cluster client."""
    monkeypatch.setenv("REDIS_CLUSTER", "1")


@pytest.fixture()
def redis_client(redis_cluster: LocalRedisCluster) -> Iterator[RedisCluster]:
    """A cluster client on flushed primaries: each test starts from an empty cluster."""
    client = redis_cluster.client()
    client.flushall()
    yield client
    client.close()


@pytest.fixture(scope="module")
def own_cluster() -> Iterator[LocalRedisCluster]:
    """A cluster of the module's own, for tests whose keys the session cluster's background
    worker would take by the real time (due jobs, seeks, deliveries)."""
    with LocalRedisCluster(masters=3) as cluster:
        yield cluster


@pytest.fixture()
def own_cluster_client(own_cluster: LocalRedisCluster) -> Iterator[RedisCluster]:
    """A client of the module's own cluster, its primaries flushed."""
    client = own_cluster.client()
    client.flushall()
    yield client
    client.close()


@pytest.fixture(scope="session")
def live_server(redis_cluster: LocalRedisCluster) -> Iterator[str]:
    """gunicorn (2 workers) with REDIS_CLUSTER=1 and REDIS_URL naming one node only."""
    from devstack.gunicorn import start_gunicorn

    with start_gunicorn(redis_cluster.url, workers=2, env={"REDIS_CLUSTER": "1"}) as base_url:
        yield base_url


@pytest.fixture()
def app(redis_cluster: LocalRedisCluster, redis_client: RedisCluster) -> Iterator[Flask]:
    """The API app on the cluster (REDIS_CLUSTER=1), for the API tests re-run here."""
    yield create_app(
        {"REDIS_URL": redis_cluster.url, "REDIS_CLUSTER": True, "GAME_TTL_SECONDS": 3600}
    )


@pytest.fixture()
def client(app: Flask) -> FlaskClient:
    return app.test_client()
