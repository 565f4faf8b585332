"""``/healthz``: the process answers. ``/readyz``: Redis answers too (load balancers use it)."""

from __future__ import annotations

import logging

import redis
from flask import Response
from flask.views import MethodView

from ..codes import Problem
from ..docs import problems, responds
from ..log_throttle import throttled
from ..parsing import Blueprint
from ..problems import ApiError
from ..store_access import store
from ..web import json_response
from .schemas import HealthSchema

log = logging.getLogger(__name__)

blp = Blueprint("health", __name__, description="Liveness and readiness probes")


@blp.route("/healthz")
class Healthz(MethodView):
    @responds(200, HealthSchema, example={"status": "ok"})
    def get(self) -> Response:
        """The process is alive (never touches Redis)."""
        return json_response({"status": "ok"})


@blp.route("/readyz")
class Readyz(MethodView):
    @responds(200, HealthSchema, example={"status": "ready"})
    @problems(503)
    def get(self) -> Response:
        """Ready to serve: Redis answers PING (on a cluster, every master)."""
        try:
            store().ping()
        except (redis.RedisError, OSError) as exc:
            # The detail names Redis's address: for the operator's log, not for any caller.
            throttled(log, logging.WARNING, "not ready: redis does not answer: %s", exc)
            raise ApiError(Problem.REDIS_UNAVAILABLE, "Storage is unavailable.") from exc
        return json_response({"status": "ready"})
