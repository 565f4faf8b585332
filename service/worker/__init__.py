"""The background worker (``python -m service.worker``): bot turns beyond a request's budget and
every overdue clocked turn, off the request path and the streams pool (see :mod:`.loop`)."""
