"""What ships is limited and quiet about secrets: rate limits on in compose and k8s, nginx's
limit_req first, and no log line format that could carry a query string (?access_token=)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
LIMITS = (
    "RATE_LIMIT_PER_MINUTE",
    "RATE_LIMIT_CREATE_PER_MINUTE",
    "RATE_LIMIT_SAMPLES_PER_MINUTE",
)


def test_rate_limits_are_on_in_compose_and_k8s() -> None:
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    apps = [s for name, s in compose["services"].items() if name.startswith("app")]
    configmap = yaml.safe_load((DEPLOY / "k8s" / "configmap.yaml").read_text())
    for env in [*(a["environment"] for a in apps), configmap["data"]]:
        assert all(int(env[name]) > 0 for name in LIMITS), env
    ingress = yaml.safe_load((DEPLOY / "k8s" / "ingress.yaml").read_text())
    assert int(ingress["metadata"]["annotations"]["nginx.ingress.kubernetes.io/limit-rps"]) > 0
    paths = {p["path"] for r in ingress["spec"]["rules"] for p in r["http"]["paths"]}
    assert paths == {"/api", "/docs", "/", "/table"}, "metrics and probes stay inside the cluster"


def test_nginx_limits_first_and_logs_no_query_string() -> None:
    text = (DEPLOY / "nginx.conf").read_text()
    proxied = text[text.index("location / {") :]
    proxied = proxied[: proxied.index("}")]
    first = [line.strip() for line in proxied.splitlines()[1:] if line.strip()][:2]
    assert all(line.startswith("limit_req zone=") for line in first), first
    log_format = text[text.index("log_format") : text.index("access_log")]
    for variable in ("$request_uri", "$args", "$query_string", "$request ", "$arg_"):
        assert variable not in log_format, variable
    assert '"uri":"$uri"' in log_format
    # gunicorn's access log (when on) logs the path without the query too.
    gunicorn = (DEPLOY / "gunicorn.conf.py").read_text()
    fmt = re.search(r"access_log_format = \((.*?)\n\)", gunicorn, re.S)
    assert fmt and "%(U)s" in fmt.group(1)
    assert not re.search(r"%\((r|q)\)s", fmt.group(1))  # request line, query string
