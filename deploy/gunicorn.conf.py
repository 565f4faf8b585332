"""gunicorn settings for the API (``gunicorn -c deploy/gunicorn.conf.py service.api.wsgi:app``).

Environment: PORT (default 8000), BIND (overrides PORT), WEB_CONCURRENCY (workers, default 4),
GUNICORN_THREADS (default 1: sync workers; each request is short and CPU-bound).
"""

import os

bind = os.environ.get("BIND") or f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "4"))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
worker_class = "sync" if threads == 1 else "gthread"
wsgi_app = "service.api.wsgi:app"
# Finish requests in flight on SIGTERM before exiting (rolling deploys, make run's Ctrl-C).
graceful_timeout = int(os.environ.get("GRACEFUL_TIMEOUT", "20"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
keepalive = 5
# Recycle workers now and then so a slow leak cannot grow without bound.
max_requests = 20000
max_requests_jitter = 2000
accesslog = os.environ.get("ACCESS_LOG") or None
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")
