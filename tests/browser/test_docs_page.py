"""``/docs`` in a real browser: Swagger UI renders the service's OpenAPI 3.1 document offline."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import requests
from playwright.sync_api import Page, expect

from tests.browser.harness import PageLog

METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def documented_operations(base_url: str) -> set[str]:
    """Every operation of the document: its paths', and the webhook deliveries it sends, which
    Swagger UI lists by their names."""
    spec = requests.get(base_url + "/api/v1/openapi.json", timeout=10).json()
    return {
        f"{method.upper()} {path}"
        for section in ("paths", "webhooks")
        for path, item in spec.get(section, {}).items()
        for method in item
        if method in METHODS
    }


def listed_operations(page: Page) -> set[str]:
    blocks = page.locator(".opblock .opblock-summary")
    methods = blocks.locator(".opblock-summary-method").all_inner_texts()
    paths = blocks.locator(".opblock-summary-path").all_inner_texts()
    return {f"{m.strip()} {p.strip()}" for m, p in zip(methods, paths, strict=True)}


def test_docs_lists_every_operation_from_this_service_alone(
    live_server: str,
    page: Page,
    page_log: PageLog,
    screenshot: Callable[..., Path],
) -> None:
    page.goto(live_server + "/docs")
    expect(page.locator(".opblock").first).to_be_visible()
    expected = documented_operations(live_server)
    assert {"POST /api/v1/games", "GET /api/v1/games/{game_id}/legal-moves"} <= expected
    assert listed_operations(page) == expected
    expect(page.locator("body")).not_to_contain_text("Unable to render")
    expect(page.locator(".info .title")).to_contain_text("Mexican Train")

    # An operation opens on its parameters and its documented responses, problems included.
    create = page.locator(".opblock-post", has_text="/api/v1/games").first
    create.locator(".opblock-summary").click()
    expect(create.locator(".responses-table .response[data-code='201']")).to_be_visible()
    expect(create.locator(".responses-table .response[data-code='422']")).to_be_visible()
    expect(create.get_by_role("button", name="Try it out")).to_be_visible()

    screenshot(page, "docs")
    assert page_log.requests, "the page made no requests at all"
    assert page_log.foreign_requests(live_server) == []
