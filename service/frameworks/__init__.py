"""Every place the service depends on a framework's internals, and nothing else.

Where a framework offers no public hook, or its public path costs too much on the hot path,
the service reaches past it here and only here, one module per framework family (so that the
store can use the Redis paths without importing the web frameworks):

- :mod:`.redis_py`: the lean connection pool and the direct command path (redis-py).
- :mod:`.flask_app`: Flask's and werkzeug's per-request work (sessions, the coroutine check,
  the JSON media type rule, response headers).
- :mod:`.smorest`: flask-smorest's and webargs' private names (problem bodies, the orjson body
  parser, documentation without wrapped views, the sorted spec).
- :mod:`.gunicorn_body`: a stream's body written to gunicorn's socket from outside the body's
  iteration (a game's feed sends each new entry to its parked readers in one pass).
- :mod:`.prometheus`: prometheus_client's multiprocess files, a dead worker's folded into an
  archive so the folder stays bounded.

Each bypass has a test in ``tests/frameworks/`` that compares it with the framework's own
answer, so an upgrade that changes a framework's behaviour fails a test rather than a user.
"""
