"""Each benchmark's docstring (what ``make bench-*`` and ``make soak`` show a reader) names every
environment variable the script reads, and a default it writes beside a name is the script's."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
#: ``os.environ.get("NAME"``, with its default when that is a literal (``, "default"``).
_READ = re.compile(r"""os\.environ\.get\(\s*["']([A-Z][A-Z0-9_]+)["'](?:,\s*["']([^"']*)["'])?""")


def undocumented(source: str) -> list[str]:
    """Each variable ``source`` reads that its docstring leaves out, or gives another default:
    ``NAME (default X`` or ``NAME (X`` must start with the code's default."""
    doc = ast.get_docstring(ast.parse(source)) or ""
    found = []
    for name, default in _READ.findall(source):
        if not re.search(rf"\b{name}\b", doc):
            found.append(f"{name} is not named")
            continue
        told = rf"\b{name}\b\s*\((?:default\s+([^,;:)\s]+)|([^,;:)\s]+)(?=[,;)\s]))"
        for said in ("".join(both) for both in re.findall(told, doc)):
            if default and said != default.split(",")[0]:
                found.append(f"{name}: the docstring says {said}, the code {default}")
    return found


def test_a_missing_or_wrong_default_is_found() -> None:
    source = '"""AA (default 3), BB (5), DD (0: off), EE (default 7: fast)."""\nimport os\n'
    reads = 'os.environ.get("AA", "3"), os.environ.get("BB", "4"), os.environ.get("CC")'
    reads += ', os.environ.get("DD", "1"), os.environ.get("EE", "8")'
    assert undocumented(source + reads) == [
        "BB: the docstring says 5, the code 4",
        "CC is not named",
        "EE: the docstring says 7, the code 8",
    ]


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_bench_docstrings_name_every_variable_with_its_default(path: Path) -> None:
    assert not undocumented(path.read_text())
