"""Reading Prometheus text in the tests."""

from __future__ import annotations


def metric_total(text: str, name: str, **labels: str) -> float:
    """Sum of a Prometheus sample family over the series matching ``labels``."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        series, value = line.rsplit(" ", 1)
        if all(f'{k}="{v}"' in series for k, v in labels.items()):
            total += float(value)
    return total
