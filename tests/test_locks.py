"""The lock files agree with pyproject.toml: every direct dependency is pinned inside its range,
every pin carries hashes, and the runtime pins are the same in both files.

A dependency added to pyproject.toml without ``make lock`` fails here, not on a fresh machine.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
RUNTIME = [Requirement(r) for r in PROJECT["dependencies"]]
DEV = [Requirement(r) for r in PROJECT["optional-dependencies"]["dev"]]
PIN = re.compile(r"^([A-Za-z0-9._-]+)==(\S+)((?:\s*\\\s*--hash=sha256:[0-9a-f]{64})+)", re.M)


def pins(name: str) -> dict[str, tuple[str, int]]:
    """``{package: (version, number of hashes)}`` of one lock file."""
    text = (ROOT / name).read_text()
    found = {canonicalize_name(m[1]): (m[2], m[3].count("--hash=")) for m in PIN.finditer(text)}
    requirement_lines = [
        line for line in text.splitlines() if line and not line[0].isspace() and line[0] != "#"
    ]
    assert len(requirement_lines) == len(found), "a line of the lock is not a hashed pin"
    return found


@pytest.mark.parametrize(
    ("lock", "direct"),
    [("requirements.lock", RUNTIME), ("requirements-dev.lock", RUNTIME + DEV)],
)
def test_every_direct_dependency_is_pinned_inside_its_range(
    lock: str, direct: list[Requirement]
) -> None:
    pinned = pins(lock)
    for requirement in direct:
        version, hashes = pinned[canonicalize_name(requirement.name)]
        assert requirement.specifier.contains(version, prereleases=True), (requirement, version)
        assert hashes >= 1


def test_direct_dependencies_stop_below_the_next_major_version() -> None:
    for requirement in RUNTIME + DEV:
        assert any(spec.operator == "<" for spec in requirement.specifier), requirement


def test_runtime_pins_are_the_same_in_both_locks() -> None:
    runtime, dev = pins("requirements.lock"), pins("requirements-dev.lock")
    assert {name: dev.get(name) for name in runtime} == runtime


def test_locks_name_no_index_or_local_file() -> None:
    for lock in ("requirements.lock", "requirements-dev.lock"):
        text = (ROOT / lock).read_text()
        assert not re.search(r"^\s*--(index-url|extra-index-url|find-links)", text, re.M)
        assert "file://" not in text and "/opt/" not in text


def _imported_top_modules() -> set[str]:
    """The top-level modules ``service/`` imports, the standard library's and its own left out."""
    found = set()
    for path in (ROOT / "service").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.partition(".")[0])
    return found - set(sys.stdlib_module_names) - {"service", "_typeshed"} - set(IN_REPOSITORY)


#: Distributions of this repository the service imports (installed from their folder by
#: ``make install`` and the Dockerfile, not from a registry, so not in the lock).
IN_REPOSITORY = {"mexican_train_client": ROOT / "clients" / "python"}
CLIENT = tomllib.loads((IN_REPOSITORY["mexican_train_client"] / "pyproject.toml").read_text())


def test_the_python_client_depends_on_requests_alone_within_the_service_range() -> None:
    """A bot author installs the client, not the service: requests is all it brings (urllib3,
    which its stream reader names, comes with requests), in ranges the service's lock
    satisfies."""
    wanted = {
        canonicalize_name(r.name): r for r in map(Requirement, CLIENT["project"]["dependencies"])
    }
    assert sorted(wanted) == ["requests", "urllib3"]
    for name, requirement in wanted.items():
        assert requirement.specifier.contains(pins("requirements.lock")[name][0]), name
    assert CLIENT["project"]["name"] == "mexican-train-client"


def test_every_distribution_the_service_imports_is_declared() -> None:
    """An import that works only because another package pulls its distribution in (werkzeug
    through Flask, webargs through flask-smorest) breaks when that package stops doing so."""
    declared = {canonicalize_name(r.name) for r in RUNTIME}
    providers = packages_distributions()
    missing = {
        module: providers.get(module)
        for module in _imported_top_modules()
        if not {canonicalize_name(d) for d in providers.get(module, [])} & declared
    }
    assert not missing, f"imported by service/ but not in pyproject's dependencies: {missing}"
