"""prometheus_client's multiprocess folder kept to a bounded size (its mmap file format).

In multiprocess mode every worker writes ``counter_<pid>.db`` and ``histogram_<pid>.db`` (64 KiB
each at least), and ``/metrics`` sums every file of the folder. A worker that exits leaves its
files behind, so that its counts are not lost; gunicorn recycles an API worker every ~20,000
requests (``max_requests``), so the folder grows by ~128 KiB per recycle, without end, and every
scrape reads all of it. The folder is a 64 MiB memory-backed volume in ``deploy/k8s``: full, the
pod is evicted. Here a dead worker's counters and histograms are added into one
``<type>_archive.db`` per type and its files are removed, so the folder holds the live workers'
files and two archives, and the sums a scrape reports stay the same.

A scrape reads the files one by one after listing them: one removed between the two would fail
the scrape, and one read both before and after its merge would be counted twice. A lock file in
the folder keeps the two apart (:func:`collect` shared, :func:`archive_dead` exclusive).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest, multiprocess
from prometheus_client.mmap_dict import MmapedDict, mmap_key

#: The file types whose values are kept after their worker: sums over time, not live values.
ARCHIVED_TYPES = ("counter", "histogram")
ARCHIVE_PID = "archive"
LOCK_NAME = ".lock"  # not *.db: the collector reads only those


@contextmanager
def _locked(directory: str, mode: int) -> Iterator[None]:
    with open(os.path.join(directory, LOCK_NAME), "a") as lock:
        fcntl.flock(lock, mode)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def collect(directory: str) -> bytes:
    """The exposition text of every worker's files in ``directory``, summed."""
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
    with _locked(directory, fcntl.LOCK_SH):
        return bytes(generate_latest(registry))


def archive_dead(pid: int, directory: str) -> None:
    """Fold the files of worker ``pid`` (exited) into the archives, and remove the rest of its
    files: its live gauges (as prometheus_client's ``mark_process_dead``) and its last-value
    gauges, which the worker answering the next scrape sets again."""
    with _locked(directory, fcntl.LOCK_EX):
        for kind in ARCHIVED_TYPES:
            dead = Path(directory, f"{kind}_{pid}.db")
            if dead.exists():
                _fold(dead, Path(directory, f"{kind}_{ARCHIVE_PID}.db"))
        for gauge in Path(directory).glob(f"gauge_*_{pid}.db"):
            gauge.unlink()


def _fold(dead: Path, archive: Path) -> None:
    """Write ``archive`` + ``dead`` as the new archive (under another name, then renamed, so
    the archive is never half written), then remove ``dead``."""
    sources = [str(dead)] + ([str(archive)] if archive.exists() else [])
    merged = multiprocess.MultiProcessCollector.merge(sources, accumulate=False)  # type: ignore[no-untyped-call]
    partial = archive.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    out = MmapedDict(str(partial))  # type: ignore[no-untyped-call]
    try:
        for metric in merged:
            for sample in metric.samples:
                labels = sample.labels
                key = mmap_key(
                    metric.name,
                    sample.name,
                    list(labels),
                    list(labels.values()),
                    metric.documentation,
                )
                out.write_value(key, sample.value, 0.0)  # type: ignore[no-untyped-call]
    finally:
        out.close()  # type: ignore[no-untyped-call]
    os.replace(partial, archive)
    dead.unlink()
