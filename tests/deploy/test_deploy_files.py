"""The deployment files are valid: compose config, Kubernetes manifests, nginx -t, Dockerfile shape.

Docker cannot run here, so the compose file is checked by ``docker compose config`` (or the
standalone ``docker-compose``, installed from Debian when neither is there), and structurally
with PyYAML.
"""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml

from tests.debian import ensure_tool
from tests.e2e.nginx import check_config, ensure_nginx, render_config

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "docker-compose.yml"
K8S = DEPLOY / "k8s"


def _compose_command() -> list[str] | None:
    docker = shutil.which("docker")
    if docker:
        probe = subprocess.run([docker, "compose", "version"], capture_output=True, timeout=30)
        if probe.returncode == 0:
            return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def test_compose_config_is_accepted_by_docker_compose() -> None:
    command = _compose_command()
    if command is None:
        # A fresh machine has the docker client without its compose plugin: Debian's
        # standalone docker-compose reads the same file format.
        ensure_tool("docker-compose", lambda: shutil.which("docker-compose"), ("docker-compose",))
        command = _compose_command()
    assert command is not None
    done = subprocess.run(
        [*command, "-f", str(COMPOSE), "config", "--quiet"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_compose_structure() -> None:
    doc = yaml.safe_load(COMPOSE.read_text())
    services: dict[str, Any] = doc["services"]
    apps = {name: s for name, s in services.items() if name.startswith("app")}
    assert len(apps) >= 2, "at least two app replicas"
    for name, app in apps.items():
        assert app["build"]["dockerfile"] == "Dockerfile", name
        assert app["environment"]["REDIS_URL"].startswith("redis://redis:"), name
        assert app["environment"]["TRUSTED_PROXIES"] == "1", name
        assert "healthcheck" in app, name
        assert app["depends_on"]["redis"]["condition"] == "service_healthy", name
    redis = services["redis"]
    command = " ".join(redis["command"])
    assert "--appendonly yes" in command
    assert any(v.endswith(":/data") for v in redis["volumes"])
    assert "healthcheck" in redis
    nginx = services["nginx"]
    assert "./nginx.conf:/etc/nginx/nginx.conf:ro" in nginx["volumes"]
    assert "healthcheck" in nginx
    streams = {name: s for name, s in services.items() if name.startswith("streams")}
    assert len(streams) >= 2, "at least two streams replicas"
    for name, pool in streams.items():
        assert pool["environment"]["GUNICORN_POOL"] == "streams", name
        assert pool["environment"]["REDIS_URL"].startswith("redis://redis:"), name
        assert "8001" in pool["healthcheck"]["test"][-1], name
    assert set(nginx["depends_on"]) == set(apps) | set(streams)
    # Every app service is an upstream of nginx, and nothing else is; likewise the streams.
    conf = (DEPLOY / "nginx.conf").read_text()
    assert sorted(re.findall(r"^\s*server (\S+):8000 ", conf, re.M)) == sorted(apps)
    assert sorted(re.findall(r"^\s*server (\S+):8001 ", conf, re.M)) == sorted(streams)


def _manifests() -> dict[str, dict[str, Any]]:
    docs: dict[str, dict[str, Any]] = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            assert doc["apiVersion"], path
            docs.setdefault(doc["kind"], doc)  # the app's own come first (file order)
    return docs


def test_k8s_manifests_parse_with_expected_kinds() -> None:
    docs = _manifests()
    assert {
        "ConfigMap",
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "Kustomization",
    } <= set(docs)
    listed = set(docs["Kustomization"]["resources"])
    assert listed == {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}


def test_k8s_streams_pool_is_wired_to_the_events_route() -> None:
    docs = list(yaml.safe_load_all((K8S / "streams.yaml").read_text()))
    kinds = {doc["kind"]: doc for doc in docs}
    (container,) = kinds["Deployment"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["GUNICORN_POOL"] == "streams"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    labels = kinds["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert kinds["Service"]["spec"]["selector"].items() <= labels.items()
    ingress = kinds["Ingress"]
    notes = ingress["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"
    (rule,) = ingress["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    assert re.fullmatch(path["path"], "/api/v1/games/abc123/events")
    assert path["backend"]["service"]["name"] == kinds["Service"]["metadata"]["name"]


def test_every_k8s_pod_serving_http_is_scraped_on_its_own_port() -> None:
    """Each pool counts its own requests and streams: a pod left unscraped loses them."""
    deployments = [
        doc
        for path in sorted(K8S.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc and doc.get("kind") == "Deployment"
    ]
    assert len(deployments) >= 2
    for deployment in deployments:
        pod = deployment["spec"]["template"]
        (container,) = pod["spec"]["containers"]
        ports = {str(p["containerPort"]) for p in container.get("ports", [])}
        if not ports:
            continue  # no HTTP server in it
        notes = pod["metadata"].get("annotations", {})
        name = deployment["metadata"]["name"]
        assert notes.get("prometheus.io/scrape") == "true", name
        assert notes.get("prometheus.io/port") in ports, name
        assert notes.get("prometheus.io/path") == "/metrics", name


def test_k8s_deployment_probes_resources_and_wiring() -> None:
    docs = _manifests()
    deployment = docs["Deployment"]
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["spec"]["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert {"cpu", "memory"} <= set(container["resources"]["requests"])
    assert {"cpu", "memory"} <= set(container["resources"]["limits"])
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    config_name = docs["ConfigMap"]["metadata"]["name"]
    assert {"configMapRef": {"name": config_name}} in container["envFrom"]
    assert {"REDIS_URL", "REDIS_CLUSTER", "TRUSTED_PROXIES"} <= set(docs["ConfigMap"]["data"])
    service = docs["Service"]
    assert service["spec"]["selector"].items() <= labels.items()
    port_names = {p["name"] for p in container["ports"]}
    assert all(p["targetPort"] in port_names for p in service["spec"]["ports"])
    target = docs["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert docs["HorizontalPodAutoscaler"]["spec"]["minReplicas"] >= 2


def test_nginx_accepts_the_generated_config(tmp_path: Path) -> None:
    binary = ensure_nginx()
    conf = render_config([18001, 18002], 18000, tmp_path)
    done = check_config(binary, conf, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "test is successful" in done.stderr


def test_dockerfile_shape() -> None:
    lines = [
        line.strip()
        for line in (ROOT / "Dockerfile").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    text = "\n".join(lines)
    assert re.search(r"^FROM python:3\.11-slim", text, re.M)
    # Dependencies come from the runtime lock with hashes, before the code (cached layer).
    lock = text.index("COPY requirements.lock")
    deps = text.index("pip install --require-hashes -r requirements.lock")
    code = text.index("COPY service")
    assert lock < deps < code
    assert re.search(r"^RUN pip install --no-deps \.", text, re.M)
    user = re.findall(r"^USER (\S+)", text, re.M)
    assert user and user[-1].split(":")[0] not in ("root", "0")
    assert re.search(r"^HEALTHCHECK .*", text, re.M) and "/healthz" in text
    assert re.search(r'^CMD \[.*"--config", "deploy/gunicorn\.conf\.py"', text, re.M)
    ignored = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert ".venv" in ignored and ".git" in ignored
    # Everything the image copies exists and is not excluded from the build context.
    for source in re.findall(r"^COPY (\S+) ", text, re.M):
        assert (ROOT / source).exists(), source
        assert not any(fnmatch.fnmatch(source, pattern) for pattern in ignored), source


def test_compose_redis_command_runs_with_aof_and_a_memory_ceiling(tmp_path: Path) -> None:
    """The Redis flags in docker-compose.yml, run by a real redis-server: AOF is really on, and
    memory is capped without eviction."""
    import redis

    from devstack.redis_server import find_redis_server, free_port

    command = yaml.safe_load(COMPOSE.read_text())["services"]["redis"]["command"]
    assert command[0] == "redis-server"
    port = free_port()
    proc = subprocess.Popen(
        [find_redis_server(), *command[1:], "--port", str(port), "--bind", "127.0.0.1"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    try:
        for _ in range(200):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.02)
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        assert client.config_get("appendfsync") == {"appendfsync": "everysec"}
        # A ceiling that never evicts a live game: full means refusing writes.
        assert int(client.config_get("maxmemory")["maxmemory"]) > 0
        assert client.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
        client.set("k", "v")
        assert any(tmp_path.rglob("*.aof*")) or (tmp_path / "appendonly.aof").exists()
    finally:
        client.close()
        proc.terminate()
        proc.wait(10)


def test_every_deploy_setting_is_read_by_the_service() -> None:
    """No typo'd or dead variable in the ConfigMap or the compose file: each is read somewhere."""
    sources = "\n".join(
        p.read_text() for p in [*(ROOT / "service").rglob("*.py"), DEPLOY / "gunicorn.conf.py"]
    )
    settings = set(_manifests()["ConfigMap"]["data"])
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    for name, service in services.items():
        if name.startswith("app"):
            settings |= set(service["environment"])
    for setting in sorted(settings):
        # prometheus_client reads PROMETHEUS_MULTIPROC_DIR itself; the config sets it too.
        read = re.search(rf"""["']{setting}["']""", sources)
        assert read is not None, f"{setting} is set but never read"


def test_nginx_and_app_accept_the_same_request_ids() -> None:
    from service.api.observability import _REQUEST_ID_RE

    (pattern,) = re.findall(
        r'"~\^(.+)\$"\s+\$http_x_request_id;', (DEPLOY / "nginx.conf").read_text()
    )
    assert pattern == _REQUEST_ID_RE.pattern


def _all_manifests() -> list[dict[str, Any]]:
    return [
        doc for path in sorted(K8S.glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text())
    ]


def _pre_stop_seconds(container: dict[str, Any]) -> float:
    """The sleep of a ``python -c "import time; time.sleep(N)"`` preStop hook, else 0."""
    hook = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
    found = re.search(r"time\.sleep\((\d+(?:\.\d+)?)\)", " ".join(hook))
    return float(found.group(1)) if found else 0.0


def test_k8s_pods_behind_a_service_leave_it_before_they_stop_and_keep_one_serving() -> None:
    """A pod told to stop is removed from its Service's endpoints while it gets SIGTERM: the
    preStop pause lets the ingress stop sending it requests (and a streams pool's readers,
    ended at SIGTERM, reconnect elsewhere) before it stops accepting; the grace period covers
    the pause and gunicorn's graceful timeout. A PodDisruptionBudget keeps one pod of each pool
    through node drains: with every streams pod gone, nginx answers a stream 503, and a
    browser's EventSource given an error answer never tries again."""
    docs = _all_manifests()
    services = [d for d in docs if d["kind"] == "Service"]
    budgets = [d for d in docs if d["kind"] == "PodDisruptionBudget"]
    served = [
        d
        for d in docs
        if d["kind"] == "Deployment"
        and any(
            s["spec"]["selector"].items() <= d["spec"]["template"]["metadata"]["labels"].items()
            for s in services
        )
    ]
    assert {d["metadata"]["name"] for d in served} == {"mexican-train", "mexican-train-streams"}
    for deployment in served:
        name = deployment["metadata"]["name"]
        pod = deployment["spec"]["template"]
        (container,) = pod["spec"]["containers"]
        pause = _pre_stop_seconds(container)
        assert pause >= 3, f"{name}: no preStop pause before SIGTERM"
        env = {e["name"]: e["value"] for e in container.get("env", [])}
        graceful = 0 if env.get("GUNICORN_POOL") == "streams" else 20  # gunicorn.conf.py
        assert pod["spec"]["terminationGracePeriodSeconds"] > pause + graceful, name
        labels = pod["metadata"]["labels"]
        assert any(
            b["spec"]["selector"]["matchLabels"].items() <= labels.items()
            and b["spec"].get("minAvailable", 0) >= 1
            for b in budgets
        ), f"{name}: no PodDisruptionBudget keeps one pod"
