"""Headless Chromium for browser tests: Debian's binary driven by Playwright.

Playwright drives the system browser (``/usr/bin/chromium``, package ``chromium``, installed when
missing): it never downloads a browser of its own. Each page records its console errors,
uncaught exceptions and every URL it requested, so a test can require a clean console and
nothing fetched from another host.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Browser, ConsoleMessage, Page, Request

from tests.debian import ensure_tool

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "var" / "screenshots"
CHROMIUM_PACKAGES = ("chromium",)
# Playwright passes --headless and a fresh temporary --user-data-dir itself. The rest keep the
# browser quiet and self-contained: no sandbox (root in CI), no GPU, no calls home.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def find_chromium() -> str | None:
    for candidate in ("/usr/bin/chromium", shutil.which("chromium")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def ensure_chromium() -> str:
    return ensure_tool("chromium", find_chromium, CHROMIUM_PACKAGES)


@dataclass
class PageLog:
    """What one page did: console errors and uncaught exceptions, and each URL it requested."""

    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    allowed: list[re.Pattern[str]] = field(default_factory=list)

    def allow(self, pattern: str) -> None:
        """Expect console errors matching ``pattern`` (e.g. the browser's note on a 409 that
        the page shows to the user) instead of failing the test on them."""
        self.allowed.append(re.compile(pattern))

    def unexpected_errors(self) -> list[str]:
        return [e for e in self.errors if not any(p.search(e) for p in self.allowed)]

    def foreign_requests(self, base_url: str) -> list[str]:
        """Requests to any origin other than ``base_url``'s (data: and blob: URLs are local)."""
        origin = urlsplit(base_url)[:2]
        return [
            url
            for url in self.requests
            if urlsplit(url).scheme not in {"data", "blob"} and urlsplit(url)[:2] != origin
        ]


def watch(page: Page) -> PageLog:
    log = PageLog()

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            log.errors.append(f"console: {message.text} ({message.location.get('url', '')})")

    def on_request(request: Request) -> None:
        log.requests.append(request.url)

    page.on("console", on_console)
    page.on("pageerror", lambda error: log.errors.append(f"uncaught: {error}"))
    page.on("request", on_request)
    return log


def save_screenshot(page: Page, name: str, *, full_page: bool = False) -> Path:
    """Write ``var/screenshots/<name>.png`` (a test artefact, not tracked) and return its path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


class Pages:
    """Opens pages, each in a fresh browser context (own cookies and storage, like a separate
    person), and keeps what each one logged."""

    def __init__(self, browser: Browser, timeout_ms: float = 30_000) -> None:
        self.browser = browser
        self.timeout_ms = timeout_ms
        self.opened: list[tuple[Page, PageLog]] = []

    def __call__(self, **context_options: Any) -> Page:
        context = self.browser.new_context(**context_options)
        context.set_default_timeout(self.timeout_ms)
        page = context.new_page()
        self.opened.append((page, watch(page)))
        return page

    def log(self, page: Page) -> PageLog:
        return next(log for opened, log in self.opened if opened is page)

    def unexpected_errors(self) -> list[str]:
        return [error for _, log in self.opened for error in log.unexpected_errors()]

    def close(self, screenshot_prefix: str | None = None) -> None:
        """Close every context; with a prefix, first save a screenshot of each open page."""
        for index, (page, _) in enumerate(self.opened):
            if screenshot_prefix is not None and not page.is_closed():
                save_screenshot(page, f"{screenshot_prefix}-{index}")
            page.context.close()


# axe-core, the accessibility checker, from the npm registry (npm from Debian when missing),
# installed once into var/npm at test set-up; the browser tests run it on every screen.
AXE_VERSION = "4.10.3"
AXE_DIR = ROOT / "var" / "npm"
AXE_SCRIPT = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
# Impacts that fail a test; "minor" and "moderate" findings are reported, not fatal.
AXE_FAILING = ("serious", "critical")


def ensure_axe() -> Path:
    if (
        AXE_SCRIPT.is_file()
        and f'"version": "{AXE_VERSION}"' in (AXE_SCRIPT.parent / "package.json").read_text()
    ):
        return AXE_SCRIPT
    npm = ensure_tool("npm", lambda: shutil.which("npm"), ("npm",))
    AXE_DIR.mkdir(parents=True, exist_ok=True)
    command = [npm, "install", "--prefix", str(AXE_DIR), "--no-save", "--no-package-lock"]
    subprocess.run(
        [*command, "--no-audit", "--no-fund", f"axe-core@{AXE_VERSION}"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return AXE_SCRIPT


def axe_violations(page: Page, script: Path) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is now (evaluated through the debugging
    protocol, which the page's Content-Security-Policy does not govern)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(script.read_text() + "\n;0")
    result = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"
    )
    return list(result)


def serious(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [v for v in violations if v["impact"] in AXE_FAILING]
