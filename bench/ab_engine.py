"""A/B of the engine benchmark: this tree against another checkout, in one run.

``python -m bench.ab_engine OLD_TREE`` runs ``bench.bench_engine`` alternately in this tree
and in ``OLD_TREE`` (e.g. ``git worktree add --detach /tmp/ab-old <commit>``), ``--rounds``
times each, and prints every measurement and the median moves/s of each tree with their
ratio. Alternating keeps a machine whose load changes from favouring either side.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_RATE = re.compile(r"^(\S+ \d+p): (\d+) moves/s", re.MULTILINE)


def measure(tree: Path, args: list[str]) -> dict[str, int]:
    """moves/s per case of one ``bench.bench_engine`` run in ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-m", "bench.bench_engine", *args],
        cwd=tree,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return {case: int(rate) for case, rate in _RATE.findall(out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("old", type=Path, help="the other checkout's root")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", default="3")
    parser.add_argument("--players", nargs="*", default=["4"])
    parser.add_argument("--presets", nargs="*", default=["standard"])
    args = parser.parse_args()
    bench_args = ["--seconds", args.seconds, "--players", *args.players]
    bench_args += ["--presets", *args.presets]
    runs: dict[str, dict[str, list[int]]] = {"new": {}, "old": {}}
    for r in range(args.rounds):
        for side, tree in (("old", args.old.resolve()), ("new", ROOT)):
            for case, rate in measure(tree, bench_args).items():
                runs[side].setdefault(case, []).append(rate)
                print(f"round {r + 1} {side} {case}: {rate} moves/s", flush=True)
    for case, new in runs["new"].items():
        old = runs["old"][case]
        ratio = statistics.median(new) / statistics.median(old)
        print(
            f"{case}: old {statistics.median(old):.0f}, new {statistics.median(new):.0f} "
            f"moves/s (medians of {args.rounds}); new/old {ratio:.2f}"
        )


if __name__ == "__main__":
    main()
