"""nginx for the tests: the launcher of ``devstack.nginx``, installed from Debian if missing
(the test is skipped where that cannot be done)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from devstack import nginx as launch
from devstack.nginx import NGINX_CONF, check_config, find_nginx, render_config
from tests.debian import ensure_tool

__all__ = ["NGINX_CONF", "Nginx", "check_config", "ensure_nginx", "render_config"]


def ensure_nginx() -> str:
    """The nginx binary; on a fresh CI machine (root, Debian) install ``nginx-light`` first."""
    return ensure_tool("nginx", find_nginx, ("nginx-light", "nginx"))


class Nginx(launch.Nginx):
    def __init__(
        self,
        upstream_ports: Sequence[int],
        port: int,
        workdir: Path,
        streams_ports: Sequence[int] | None = None,
    ) -> None:
        super().__init__(ensure_nginx(), upstream_ports, port, workdir, streams_ports=streams_ports)
