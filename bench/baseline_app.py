"""The benchmark's yardstick: a trivial Flask endpoint doing one Redis GET and one SET.

``POST /bench/<key>`` reads a document, writes one of the same size back and returns it: the
least a stateful JSON service on Flask + Redis can do per request. ``DOC_BYTES`` sets the size
(the bench passes the size of a real stored game state), ``REDIS_URL`` the Redis (the bench
passes its private one).
"""

from __future__ import annotations

import os

import redis
from flask import Flask, Response

DOC_BYTES = int(os.environ.get("DOC_BYTES", "600"))
client = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
app = Flask(__name__)


@app.get("/healthz")
def healthz() -> Response:
    return Response(b'{"status":"ok"}', mimetype="application/json")


@app.post("/bench/<key>")
def bench(key: str) -> Response:
    doc = client.get(f"bench:{{{key}}}") or b"x" * DOC_BYTES
    client.set(f"bench:{{{key}}}", doc[::-1])
    return Response(b'{"doc":"' + doc + b'"}', mimetype="application/json")
