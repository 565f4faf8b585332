"""The production topology on loopback (``devstack.stack``), once per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devstack.stack import Stack, build_stack
from tests.e2e.nginx import ensure_nginx


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    ensure_nginx()
    with build_stack(tmp_path_factory.mktemp("e2e")) as built:
        yield built
