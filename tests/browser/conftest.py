"""Browser fixtures: one headless Chromium per test session (per xdist worker), and pages that
fail their test on any console error.

- ``browser``: the session's Chromium (Debian's, installed when missing);
- ``new_page(**context_options)``: a page in a fresh browser context; call it twice for two
  people at one table; ``new_page.log(page)`` is what that page logged;
- ``page`` / ``page_log``: one such page at 1280x800, and its log;
- ``screenshot(page, label, full_page=False)``: writes ``var/screenshots/<test>-<label>.png``;
- ``axe(page, screen)``: axe-core's check of the page as it is; fails on a serious or critical
  violation and returns every finding;
- ``table_server``: the service as ``make run`` serves it, for the web table (``own_table_server``
  for a test that restarts its streams pool).

A failed test leaves a screenshot of each of its pages in the same folder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from devstack.redis_server import RedisServer
from tests.browser.harness import (
    CHROMIUM_ARGS,
    PageLog,
    Pages,
    axe_violations,
    ensure_axe,
    ensure_chromium,
    save_screenshot,
    serious,
)
from tests.browser.stack import TableStack
from tests.e2e.nginx import ensure_nginx


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keep each phase's report on the test item, so fixtures can see whether the test failed."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    return ensure_chromium()


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright, chromium_path: str) -> Iterator[Browser]:
    browser = playwright.chromium.launch(
        executable_path=chromium_path, headless=True, args=list(CHROMIUM_ARGS)
    )
    yield browser
    browser.close()


@pytest.fixture()
def new_page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Pages]:
    """Pages for one test; afterwards the test fails if any of them logged an error."""
    pages = Pages(browser)
    yield pages
    report = getattr(request.node, "report_call", None)
    failed = report is not None and report.failed
    pages.close(screenshot_prefix=f"{request.node.name}-failed" if failed else None)
    errors = pages.unexpected_errors()
    if errors:
        pytest.fail("browser console errors:\n" + "\n".join(errors), pytrace=False)


@pytest.fixture()
def page(new_page: Pages) -> Page:
    return new_page(viewport={"width": 1280, "height": 800})


@pytest.fixture()
def page_log(new_page: Pages, page: Page) -> PageLog:
    return new_page.log(page)


@pytest.fixture()
def screenshot(request: pytest.FixtureRequest) -> Callable[..., Path]:
    def take(page: Page, label: str, *, full_page: bool = False) -> Path:
        return save_screenshot(page, f"{request.node.name}-{label}", full_page=full_page)

    return take


@pytest.fixture(scope="session")
def table_server(
    redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """Base URL of the service as ``make run`` serves it (nginx, API pool, streams pool)."""
    ensure_nginx()
    with TableStack(redis_server.url, tmp_path_factory.mktemp("table")) as stack:
        yield stack.url


@pytest.fixture()
def own_table_server(redis_server: RedisServer, tmp_path: Path) -> Iterator[TableStack]:
    """A stack of this test's own, whose streams pool the test may restart."""
    ensure_nginx()
    with TableStack(redis_server.url, tmp_path) as stack:
        yield stack


@pytest.fixture(scope="session")
def axe_script() -> Path:
    return ensure_axe()


@pytest.fixture()
def axe(axe_script: Path) -> Callable[[Page, str], list[dict[str, Any]]]:
    def check(page: Page, screen: str) -> list[dict[str, Any]]:
        found = axe_violations(page, axe_script)
        assert serious(found) == [], (screen, serious(found))
        return found

    return check
