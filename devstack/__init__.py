"""Process launchers: the embedded ``redis-server`` and gunicorn of ``make run``, and the
with-block base the test fixtures' process wrappers share."""
