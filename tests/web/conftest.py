"""Fixtures of the browser tests: the real server (uvicorn on a real socket) on the
scripted ``studio`` team, and Debian's chromium driven by Playwright.

Skipped, saying why, where no browser can be had: ``.ci/run`` installs Debian's
``chromium``; ``AKGENTIC_CHROMIUM`` names another executable. Every test waits on DOM
conditions (Playwright's ``expect``), never on time. Screenshots go to
``AKGENTIC_SCREENSHOTS`` when it is set (``docs/web`` holds the committed ones), else to
a temporary folder.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from akgentic.server import ServerSettings
from tests.server import gate_tool
from tests.server.conftest import Served, serve_cards

DATA = Path(__file__).resolve().parent / "data"
STUDIO = DATA / "studio.yaml"
CHROMIUM = os.environ.get("AKGENTIC_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOKEN = "a-token-for-the-browser-tests"

try:
    from playwright.sync_api import Browser, Page, Playwright, sync_playwright
except ImportError:  # pragma: no cover - the dev extra brings it
    sync_playwright = None  # type: ignore[assignment]

if sync_playwright is None:
    pytest.skip("playwright is not installed (pip install -e '.[dev]')", allow_module_level=True)
if shutil.which(CHROMIUM) is None:
    pytest.skip(
        f"no browser: {CHROMIUM} not found (apt-get install chromium, as .ci/run does; "
        f"or set AKGENTIC_CHROMIUM)",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    """Playwright's sync driver, for one test module only: while it lives, its event loop
    counts as running on the main thread (a greenlet runs it), so ``asyncio.run`` and
    pydantic-ai's ``run_sync`` fail in any test the same process runs meanwhile — as a
    test process of ``pytest -n`` runs the next module's tests after this one's."""
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """One chromium per test module; Playwright gives it a fresh, empty user-data dir."""
    launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
    yield launched
    launched.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The server with the studio card, shared by a module's tests (each has its own team)."""
    yield from serve_cards(tmp_path_factory.mktemp("web"), ServerSettings(port=0), cards=(STUDIO,))


@pytest.fixture(scope="module")
def guarded_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The same, behind a token."""
    yield from serve_cards(
        tmp_path_factory.mktemp("web-token"), ServerSettings(port=0, token=TOKEN), cards=(STUDIO,)
    )


@pytest.fixture(autouse=True)
def _gate() -> Iterator[None]:
    gate_tool.ENTERED.clear()
    gate_tool.OPEN.clear()
    yield
    gate_tool.OPEN.set()  # never leave a turn waiting


@dataclass
class Tab:
    """A page with everything it asked the network for, and the errors it raised."""

    page: Page
    requests: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def foreign(self, origin: str) -> list[str]:
        """URLs the page requested anywhere but ``origin`` (data: URLs are no request)."""
        return [
            r.url
            for r in self.requests
            if not r.url.startswith("data:") and _origin(r.url) != _origin(origin)
        ]

    def asked(self, path_part: str) -> list[Any]:
        return [r for r in self.requests if path_part in r.url]


def _origin(url: str) -> str:
    parts = urlparse(url)
    return f"{parts.scheme}://{parts.netloc}"


@pytest.fixture
def open_tab(browser: Browser) -> Iterator[Any]:
    """``open_tab(width=1280, height=860)``: a page in a fresh context, recorded."""
    contexts = []

    def open_(width: int = 1280, height: int = 860) -> Tab:
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        tab = Tab(context.new_page())
        context.on("request", lambda request: tab.requests.append(request))
        tab.page.on("pageerror", lambda error: tab.errors.append(str(error)))
        tab.page.set_default_timeout(30_000)
        return tab

    yield open_
    for context in contexts:
        context.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wanted = os.environ.get("AKGENTIC_SCREENSHOTS")
    folder = Path(wanted) if wanted else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
