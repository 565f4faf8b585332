"""The soak's pass criteria (bench/soak.py) judge per-minute figures as documented: growth after
warm-up under 5% for RSS, fds, Redis memory and clients; every p99 within 1.5x of minute 1's;
no error. The soak itself runs with ``make soak``."""

from __future__ import annotations

from typing import Any

from bench import soak


def minutes(n: int, **changes: Any) -> list[dict[str, Any]]:
    """``n`` flat minutes; ``changes`` maps a figure to a function of the minute number."""
    rows = []
    for m in range(1, n + 1):
        row = {"minute": m, "rss_mib": 300.0, "fds": 150, "redis_mib": 3.0}
        row.update(redis_clients=20, p99_ms=40.0, errors=0)
        row.update({key: f(m) for key, f in changes.items()})
        rows.append(row)
    return rows


def failed(rows: list[dict[str, Any]]) -> set[str]:
    return {label for label, ok, _ in soak.verdict(rows) if not ok}


def test_flat_minutes_pass_even_with_warm_up_growth() -> None:
    assert failed(minutes(20)) == set()
    warm = minutes(20, rss_mib=lambda m: 100.0 * min(m, soak.WARMUP) + 100)
    assert failed(warm) == set()


def test_steady_growth_after_warm_up_fails() -> None:
    leak = minutes(20, rss_mib=lambda m: 300.0 + 2 * m)  # ~10% over the run
    assert failed(leak) == {"worker RSS"}
    fd_leak = minutes(20, fds=lambda m: 150 + m)
    assert failed(fd_leak) == {"open file descriptors"}
    assert failed(minutes(20, redis_mib=lambda m: 3.0 + 0.05 * m)) == {"Redis used_memory"}


def test_p99_beyond_one_and_a_half_times_minute_one_fails() -> None:
    assert failed(minutes(20, p99_ms=lambda m: 40.0 * (1.4 if m == 12 else 1))) == set()
    assert failed(minutes(20, p99_ms=lambda m: 40.0 * (1.6 if m == 12 else 1))) == {"p99"}


def test_any_error_fails() -> None:
    assert failed(minutes(20, errors=lambda m: int(m == 7))) == {"errors"}
