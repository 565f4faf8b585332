"""Install a missing tool from Debian's packages (fresh CI machines, a first ``make run``).

Only as root with apt-get. Several processes may ask at once (xdist workers): a file lock lets
one install while the others wait.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence


def can_install() -> bool:
    return os.geteuid() == 0 and shutil.which("apt-get") is not None


def install_tool(find: Callable[[], str | None], name: str, packages: Sequence[str]) -> str | None:
    """The path ``find()`` returns, after installing the first of ``packages`` that provides it;
    None when it is missing and cannot be installed here."""
    found = find()
    if found or not can_install():
        return found
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    wait_for_lock = ["-o", "DPkg::Lock::Timeout=300"]
    lock_path = os.path.join(tempfile.gettempdir(), f"mt-install-{name}.lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if find() is None:
            update = ["apt-get", *wait_for_lock, "update", "-qq"]
            subprocess.run(update, check=True, env=env, capture_output=True)
            install = ["apt-get", *wait_for_lock, "install", "-y", "-qq", "--no-install-recommends"]
            for package in packages:
                done = subprocess.run([*install, package], env=env, capture_output=True)
                if done.returncode == 0 and find():
                    break
    return find()
