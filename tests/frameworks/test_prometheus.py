"""Dead workers' metric files folded into the archives: the exposition text is the one
prometheus_client's own collector gives for the files as the workers left them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest, multiprocess

from service.frameworks.prometheus import archive_dead, collect

# A worker of its own: counts, times and sets gauges in the folder, prints its pid and exits.
WORKER = """
import os
from prometheus_client import Counter, Gauge, Histogram
c = Counter("things_total", "Things.", ["kind"])
h = Histogram("took_seconds", "Took.", ["kind"], buckets=(0.1, 1.0))
live = Gauge("open_now", "Open.", ["kind"], multiprocess_mode="livesum")
last = Gauge("last_seen", "Last.", ["node"], multiprocess_mode="mostrecent")
for i in range(int(os.environ["N"])):
    kind = ("a", "b")[i % 2]
    c.labels(kind).inc()
    h.labels(kind).observe(i / 4)
live.labels("a").inc()
last.labels("n1").set(7)
print(os.getpid())
"""


def _run_worker(folder: Path, n: int) -> int:
    env = {"PROMETHEUS_MULTIPROC_DIR": str(folder), "N": str(n)}
    done = subprocess.run(
        [sys.executable, "-c", WORKER], env=env, capture_output=True, text=True, check=True
    )
    return int(done.stdout)


def _library_text(folder: Path) -> bytes:
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=str(folder))  # type: ignore[no-untyped-call]
    return bytes(generate_latest(registry))


def _families(text: bytes, *names: str) -> list[str]:
    return sorted(line for line in text.decode().splitlines() if line.startswith(names))


def test_archived_counts_are_the_librarys_sums(tmp_path: Path) -> None:
    pids = [_run_worker(tmp_path, n) for n in (5, 8, 3)]
    for pid in pids[:2]:
        multiprocess.mark_process_dead(pid, str(tmp_path))  # type: ignore[no-untyped-call]
    expected = _library_text(tmp_path)
    for pid in pids[:2]:
        archive_dead(pid, str(tmp_path))
    text = collect(str(tmp_path))
    assert _families(text, "things_total", "took_seconds") == _families(
        expected, "things_total", "took_seconds"
    )
    assert "things_total" in text.decode() and 'took_seconds_bucket{kind="a",le="1.0"}' in (
        text.decode()
    )
    # The live gauge counts the worker still there only; the last value is still reported.
    assert _families(text, "open_now") == ['open_now{kind="a"} 1.0']
    assert _families(text, "last_seen") == ['last_seen{node="n1"} 7.0']
    left = sorted(p.name for p in tmp_path.glob("*.db"))
    assert left == sorted(
        [
            "counter_archive.db",
            "histogram_archive.db",
            f"counter_{pids[2]}.db",
            f"histogram_{pids[2]}.db",
            f"gauge_livesum_{pids[2]}.db",
            f"gauge_mostrecent_{pids[2]}.db",
        ]
    )
