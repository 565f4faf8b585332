"""Build the real Dockerfile and run its CMD here, without a Docker daemon or a registry.

- The base, ``python:3.11-slim``, is made from Debian bookworm's packages with ``debootstrap``
  (bookworm ships Python 3.11): ``python`` and ``pip`` names added, the EXTERNALLY-MANAGED marker
  removed, the machine's CA bundle copied in so pip reaches the package index. Its tarball is
  cached under ``var/image-cache/`` (``IMAGE_CACHE``) and imported with ``podman import``; an
  image of that name already in the local store (a real one, or one imported before) is used as
  it is.
- ``buildah bud --isolation chroot --layers`` builds the Dockerfile unchanged.
- ``buildah run --isolation chroot --network host`` runs the image's CMD (``podman run`` cannot
  set rlimits here), as the image's user.

Missing tools come from Debian (tests/debian.py). One build at a time on a machine (file lock).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from devstack.managed import answers, wait_until
from tests.debian import ensure_tool

ROOT = Path(__file__).resolve().parents[2]
BASE = "docker.io/library/python:3.11-slim"
TAG = "localhost/mexican-train:test"
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
# Bump when the recipe below changes, so a cached tarball of the old recipe is not reused.
RECIPE = "1"
LOCK = Path(tempfile.gettempdir()) / "mt-image.lock"


def cache_dir() -> Path:
    return Path(os.environ.get("IMAGE_CACHE") or ROOT / "var" / "image-cache")


def ensure_tools() -> None:
    for tool, package in (("buildah", "buildah"), ("podman", "podman")):
        ensure_tool(tool, lambda t=tool: shutil.which(t), (package,))
    ensure_tool(
        "debootstrap",
        lambda: shutil.which("debootstrap") or _exists("/usr/sbin/debootstrap"),
        ("debootstrap",),
    )


def _exists(path: str) -> str | None:
    return path if os.path.exists(path) else None


def run(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(args), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:3])} failed: {done.stderr[-3000:]}")
    return done


@contextlib.contextmanager
def machine_lock() -> Iterator[None]:
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def base_image() -> str:
    """Make ``python:3.11-slim`` available; returns how: present, imported or bootstrapped."""
    if subprocess.run(["podman", "image", "exists", BASE]).returncode == 0:
        return "present"
    tarball = cache_dir() / f"python-3.11-slim-{SUITE}-{RECIPE}.tar"
    how = "imported"
    if not tarball.exists():
        bootstrap(tarball)
        how = "bootstrapped"
    run(["podman", "import", "--change", 'CMD ["python3"]', str(tarball), BASE])
    return how


def bootstrap(tarball: Path) -> None:
    """A python:3.11-slim stand-in from Debian packages, as a root file system tarball."""
    tarball.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tarball.parent) as work:
        root = Path(work) / "rootfs"
        packages = "python3,python3-pip,ca-certificates"
        run(["debootstrap", "--variant=minbase", f"--include={packages}", SUITE, str(root), MIRROR])
        (root / "usr/bin/python").symlink_to("python3")
        if not (root / "usr/bin/pip").exists():
            (root / "usr/bin/pip").symlink_to("pip3")
        for marker in (root / "usr/lib").glob("python3*/EXTERNALLY-MANAGED"):
            marker.unlink()
        bundle = "etc/ssl/certs/ca-certificates.crt"
        shutil.copyfile("/" + bundle, root / bundle)
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            shutil.rmtree(root / cache, ignore_errors=True)
        partial = tarball.with_suffix(".partial")
        run(["tar", "-C", str(root), "-cf", str(partial), "."])
        partial.replace(tarball)


def build() -> None:
    """``buildah bud`` the repository's Dockerfile, unchanged (layers cached between builds)."""
    run(
        [
            "buildah", "bud", "--isolation", "chroot", "--pull=never", "--layers",
            "--format", "docker", "-t", TAG, "-f", str(ROOT / "Dockerfile"), str(ROOT),
        ]
    )  # fmt: skip


def image_config() -> dict[str, object]:
    out = run(["buildah", "inspect", "--type", "image", TAG]).stdout
    config: dict[str, object] = json.loads(out)["OCIv1"]["config"]
    return config


@contextlib.contextmanager
def running(env: Mapping[str, str], port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The image's CMD in a working container on the host network; stopped with SIGTERM."""
    name = f"mt-image-test-{uuid.uuid4().hex[:8]}"
    run(["buildah", "from", "--pull=never", "--name", name, TAG])
    cmd = [str(part) for part in image_config()["Cmd"]]  # type: ignore[attr-defined]
    flags = [arg for key, value in env.items() for arg in ("--env", f"{key}={value}")]
    try:
        with log.open("ab") as out:
            proc = subprocess.Popen(
                ["buildah", "run", "--isolation", "chroot", "--network", "host", *flags, name,
                 "--", *cmd],
                stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        try:
            wait_ready(f"http://127.0.0.1:{port}", proc, log)
            yield proc
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    finally:
        subprocess.run(["buildah", "rm", name], capture_output=True)


def wait_ready(base: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 60) -> None:
    wait_until(
        lambda: answers(base + "/readyz", status=200),
        alive=lambda: proc.poll() is None,
        timeout=timeout,
        interval=0.2,
        what="the image's CMD",
        exited=lambda: log.read_text()[-3000:],
    )


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def uid_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise ValueError(pid)


def cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
