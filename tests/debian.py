"""Install a missing tool from Debian's packages for the tests that need it (CI machines are fresh).

Only as root with apt-get; elsewhere the caller's test is skipped with the reason. xdist workers
may arrive together: a file lock lets one install while the others wait.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence

import pytest


def ensure_tool(name: str, find: Callable[[], str | None], packages: Sequence[str]) -> str:
    """The path ``find()`` returns, after installing the first of ``packages`` that provides it."""
    found = find()
    if found:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip(f"{name} is not installed and cannot be installed here (needs root, apt-get)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    wait_for_lock = ["-o", "DPkg::Lock::Timeout=300"]
    lock_path = os.path.join(tempfile.gettempdir(), f"mt-install-{name}.lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if find() is None:
            subprocess.run(
                ["apt-get", *wait_for_lock, "update", "-qq"],
                check=True,
                env=env,
                capture_output=True,
            )
            install = ["apt-get", *wait_for_lock, "install", "-y", "-qq", "--no-install-recommends"]
            for package in packages:
                done = subprocess.run([*install, package], env=env, capture_output=True)
                if done.returncode == 0 and find():
                    break
    found = find()
    if found is None:
        pytest.fail(f"apt-get could not install {name} (tried {', '.join(packages)})")
    return found
