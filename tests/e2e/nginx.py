"""A real nginx started from ``deploy/nginx.conf`` (installed from Debian if missing).

The loopback copy is generated from the production file by replacing only the upstream addresses,
the listen port and the temp folders, so the tests exercise the configuration that ships.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Self

import requests

from service.launch.managed import Managed
from tests.debian import ensure_tool

ROOT = Path(__file__).resolve().parents[2]
NGINX_CONF = ROOT / "deploy" / "nginx.conf"
# The production upstreams (docker-compose service names) and listen line, in deploy/nginx.conf.
UPSTREAM_HOSTS = ("app1:8000", "app2:8000")
LISTEN_LINE = "listen 80;"


def find_nginx() -> str | None:
    found = shutil.which("nginx")
    if found:
        return found
    for candidate in ("/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def ensure_nginx() -> str:
    """The nginx binary; on a fresh CI machine (root, Debian) install ``nginx-light`` first."""
    return ensure_tool("nginx", find_nginx, ("nginx-light", "nginx"))


def render_config(
    upstream_ports: list[int], listen_port: int, workdir: Path, temp: Path | None = None
) -> Path:
    """Write the loopback copy of deploy/nginx.conf into ``workdir`` and return its path.

    ``temp`` holds nginx's buffer files; when the master runs as root its workers run as
    ``nobody`` and must be able to reach it (pytest's own tmp folders are private to root).
    """
    text = NGINX_CONF.read_text()
    assert len(upstream_ports) == len(UPSTREAM_HOSTS), "deploy/nginx.conf lists two instances"
    for host, port in zip(UPSTREAM_HOSTS, upstream_ports, strict=True):
        assert text.count(f"server {host} ") == 1, f"{host} not found once in {NGINX_CONF}"
        text = text.replace(f"server {host} ", f"server 127.0.0.1:{port} ")
    assert text.count(LISTEN_LINE) == 1
    text = text.replace(LISTEN_LINE, f"listen 127.0.0.1:{listen_port};")
    temp = temp or workdir / "temp"
    lines = []
    for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        folder = temp / name
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o777)  # workers run as an unprivileged user when the master is root
        lines.append(f"    {name}_temp_path {folder};")
    assert text.count("\nhttp {\n") == 1
    text = text.replace("\nhttp {\n", "\nhttp {\n" + "\n".join(lines) + "\n", 1)
    path = workdir / "nginx.conf"
    path.write_text(text)
    return path


def _globals(workdir: Path) -> str:
    return f"pid {workdir / 'nginx.pid'}; daemon off;"


def check_config(binary: str, conf: Path, workdir: Path) -> subprocess.CompletedProcess[str]:
    """``nginx -t`` on a rendered config."""
    return subprocess.run(
        [binary, "-t", "-p", str(workdir), "-c", str(conf), "-g", _globals(workdir)],
        capture_output=True,
        text=True,
    )


class Nginx(Managed):
    """nginx in the foreground on 127.0.0.1:``port``; its JSON access log goes to ``access_log``."""

    def __init__(self, upstream_ports: list[int], port: int, workdir: Path) -> None:
        self.binary = ensure_nginx()
        self.port = port
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.temp = Path(tempfile.mkdtemp(prefix="mt-nginx-"))
        self.temp.chmod(0o755)
        self.conf = render_config(upstream_ports, port, workdir, self.temp)
        self.access_log = workdir / "access.log"
        self.error_log = workdir / "error.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> Self:
        checked = check_config(self.binary, self.conf, self.workdir)
        assert checked.returncode == 0, checked.stderr
        with self.access_log.open("ab") as out, self.error_log.open("ab") as err:
            self.proc = subprocess.Popen(
                [
                    self.binary,
                    "-p",
                    str(self.workdir),
                    "-c",
                    str(self.conf),
                    "-g",
                    _globals(self.workdir),
                ],
                stdout=out,
                stderr=err,
            )
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited: {self.error_log.read_text()}")
            try:
                requests.get(self.url + "/healthz", timeout=1)
                return self
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("nginx did not answer in time")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: fast shutdown
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        shutil.rmtree(self.temp, ignore_errors=True)
