"""Install a missing tool from Debian's packages for the tests that need it (CI machines are fresh).

Only as root with apt-get; elsewhere the caller's test is skipped with the reason. xdist workers
may arrive together: a file lock lets one install while the others wait.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from devstack.debian import can_install, install_tool


def ensure_tool(name: str, find: Callable[[], str | None], packages: Sequence[str]) -> str:
    """The path ``find()`` returns, after installing the first of ``packages`` that provides it;
    the test is skipped where it cannot be installed (needs root and apt-get)."""
    if find() is None and not can_install():
        pytest.skip(f"{name} is not installed and cannot be installed here (needs root, apt-get)")
    found = install_tool(find, name, packages)
    if found is None:
        pytest.fail(f"apt-get could not install {name} (tried {', '.join(packages)})")
    return found
