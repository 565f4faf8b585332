"""A real nginx from ``deploy/nginx.conf``, for ``make run`` and the end-to-end tests.

The loopback copy is generated from the production file by replacing only the upstream addresses
(the API instances and the streams instances), the listen address and the temp folders, so
what runs locally is the configuration that ships.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Self

from devstack.debian import install_tool
from devstack.managed import Managed, answers, wait_until

ROOT = Path(__file__).resolve().parents[1]
NGINX_CONF = ROOT / "deploy" / "nginx.conf"
# The production upstreams (docker-compose service names) and listen line, in deploy/nginx.conf.
UPSTREAM_HOSTS = ("app1:8000", "app2:8000")
STREAMS_HOSTS = ("streams1:8001", "streams2:8001")
LISTEN_LINE = "listen 80;"


def find_nginx() -> str | None:
    found = shutil.which("nginx")
    if found:
        return found
    for candidate in ("/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def install_nginx() -> str | None:
    """The nginx binary, installed from Debian (``nginx-light``) when missing and possible."""
    return install_tool(find_nginx, "nginx", ("nginx-light", "nginx"))


def _servers(text: str, hosts: Sequence[str], ports: Sequence[int]) -> str:
    """Point the upstream's two servers at ``ports`` (one port serves both lines)."""
    ports = list(ports) * (2 if len(ports) == 1 else 1)
    assert len(ports) == len(hosts), "deploy/nginx.conf lists two instances per upstream"
    for host, port in zip(hosts, ports, strict=True):
        assert text.count(f"server {host} ") == 1, f"{host} not found once in {NGINX_CONF}"
        text = text.replace(f"server {host} ", f"server 127.0.0.1:{port} ")
    return text


def render_config(
    upstream_ports: Sequence[int],
    listen_port: int,
    workdir: Path,
    temp: Path | None = None,
    *,
    streams_ports: Sequence[int] | None = None,
    host: str = "127.0.0.1",
) -> Path:
    """Write the loopback copy of deploy/nginx.conf into ``workdir`` and return its path.

    ``streams_ports`` default to the API's (one pool serving both). ``temp`` holds nginx's
    buffer files; when the master runs as root its workers run as ``nobody`` and must be able
    to reach it (pytest's own tmp folders are private to root).
    """
    text = _servers(NGINX_CONF.read_text(), UPSTREAM_HOSTS, upstream_ports)
    text = _servers(text, STREAMS_HOSTS, streams_ports or upstream_ports)
    assert text.count(LISTEN_LINE) == 1
    text = text.replace(LISTEN_LINE, f"listen {host}:{listen_port};")
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
    """nginx in the foreground on ``host:port``; its JSON access log goes to ``access_log``."""

    def __init__(
        self,
        binary: str,
        upstream_ports: Sequence[int],
        port: int,
        workdir: Path,
        *,
        streams_ports: Sequence[int] | None = None,
        host: str = "127.0.0.1",
        logs_to_files: bool = True,
        graceful: bool = False,
    ) -> None:
        self.binary = binary
        self.graceful = graceful
        self.host = host
        self.port = port
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.temp = Path(tempfile.mkdtemp(prefix="mt-nginx-"))
        self.temp.chmod(0o755)
        self.conf = render_config(
            upstream_ports, port, workdir, self.temp, streams_ports=streams_ports, host=host
        )
        self.access_log = workdir / "access.log"
        self.error_log = workdir / "error.log"
        self.logs_to_files = logs_to_files
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.port}"

    def _spawn(self) -> subprocess.Popen[bytes]:
        command = [self.binary, "-p", str(self.workdir), "-c", str(self.conf)]
        command += ["-g", _globals(self.workdir)]
        # Its own process group, so a terminal's Ctrl-C reaches only the launcher, which stops
        # nginx after the pools it proxies, and Redis last.
        if not self.logs_to_files:
            return subprocess.Popen(command, process_group=0)
        with self.access_log.open("ab") as out, self.error_log.open("ab") as err:
            return subprocess.Popen(command, stdout=out, stderr=err, process_group=0)

    def start(self, timeout: float = 10.0) -> Self:
        checked = check_config(self.binary, self.conf, self.workdir)
        if checked.returncode != 0:
            raise RuntimeError(f"nginx -t: {checked.stderr}")
        proc = self.proc = self._spawn()
        try:
            wait_until(  # any answer, an error page too: /healthz is gunicorn's, maybe not up yet
                lambda: answers(self.url + "/healthz"),
                alive=lambda: proc.poll() is None,
                timeout=timeout,
                interval=0.05,
                what="nginx",
                exited=lambda: f"code {proc.returncode} (see its error log)",
            )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """SIGQUIT when ``graceful`` (nginx finishes the answers it is passing on, for a caller
        that stopped their upstreams first), else SIGTERM (fast: open connections are cut,
        for tests that leave streams open)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT if self.graceful else signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        shutil.rmtree(self.temp, ignore_errors=True)
