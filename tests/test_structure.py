"""The code's shape, checked from its syntax tree: short functions, and packages that depend
only on what the layering allows (rules <- store <- api; bots on rules alone)."""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVICE = ROOT / "service"
MAX_FUNCTION_LINES = 60


def _modules(package: str) -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted((ROOT / package.replace(".", "/")).rglob("*.py")):
        yield path, ast.parse(path.read_text(), filename=str(path))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Every module ``path`` imports (relative imports resolved), with its line."""
    package = _module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield node.lineno, target


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_no_function_in_service_is_longer_than_60_lines() -> None:
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} "
        f"({node.end_lineno - node.lineno + 1} lines)"
        for path, tree in _modules("service")
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)


@pytest.mark.parametrize(
    ("package", "allowed", "why"),
    [
        ("service.rules", lambda name: not _within(name, "service"), "the engine is pure"),
        (
            "service.bots",
            lambda name: (
                _within(name, "service.rules") or name.partition(".")[0] in sys.stdlib_module_names
            ),
            "strategies see the rules and the standard library only",
        ),
        (
            "service.table",
            lambda name: (
                _within(name, "service.rules")
                or _within(name, "service.bots")
                or name.partition(".")[0] in sys.stdlib_module_names
            ),
            "a table decides over the rules and the bot strategies alone",
        ),
        (
            "service.store",
            lambda name: not _within(name, "service.api"),
            "the store knows nothing of HTTP",
        ),
    ],
)
def test_package_imports_follow_the_layers(
    package: str, allowed: Callable[[str], bool], why: str
) -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path, tree in _modules(package)
        for line, name in _imports(path, tree)
        if not _within(name, package) and not allowed(name)
    ]
    assert not bad, f"{package}: {why}:\n" + "\n".join(bad)


def test_the_import_check_sees_relative_and_absolute_imports() -> None:
    tree = ast.parse("from ..api import app\nimport requests\nfrom . import keys\n")
    fake = ROOT / "service" / "store" / "example.py"
    assert [name for _, name in _imports(fake, tree)] == [
        "service.api",
        "requests",
        "service.store",
    ]
