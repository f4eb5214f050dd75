"""The browser tests' Chromium: one profile kept on disk per test worker, its pages handed out as if each test had
a context of its own.

A page load of the app in a fresh browser context compiles all of Gradio's scripts again: about 4 CPU-seconds on
this project's two-core test machine, the largest single cost of the browser tests. In a profile whose disk cache
holds those scripts, Chromium reuses V8's compiled code from the cache, and a load costs about half that. Every
test file still launches its own Chromium (tests/conftest.py says why), on the worker's one profile folder.

A test asks `browser.new_context(viewport=..., color_scheme=...)` and `browser.new_page(...)` as of a Playwright
`Browser`; here the "context" is the pages it made, each given that viewport and colour scheme before it loads
anything, and closed with it. The app keeps nothing in a browser between pages (no cookies, no storage): each page
load is its own Gradio session, so two pages are two visitors as two contexts were. But a profile's pages share
its connections, six to a server: each open page of the app holds one for its event stream, so a test that keeps
more than five pages open at once asks `browser.isolated_context(...)` for the others.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .page_watch import watch

DEFAULT_VIEWPORT = {"width": 1400, "height": 1000}


class Pages:
    """Pages of the shared profile with one viewport and colour scheme: what a test calls its context."""

    def __init__(self, shared: Any, viewport: dict | None, color_scheme: str | None) -> None:
        self._shared = shared
        self._viewport = viewport or DEFAULT_VIEWPORT
        self._scheme = color_scheme or "light"
        self.pages: list[Any] = []

    def new_page(self) -> Any:
        page = watch(self._shared.new_page())  # what it hears, told if its test fails (page_watch.py)
        page.set_viewport_size(self._viewport)
        page.emulate_media(color_scheme=self._scheme)  # before the load: Gradio picks its theme as it starts
        self.pages.append(page)
        return page

    def close(self) -> None:
        for page in self.pages:
            if not page.is_closed():
                page.close()  # its record kept for a failure's report (page_watch.py)
        self.pages.clear()


class SharedProfile:
    """One Chromium on a profile folder the worker keeps; see the module's docstring."""

    def __init__(self, playwright: Any, profile: Path, executable: str, args: list[str]) -> None:
        self._playwright, self._executable, self._args = playwright, executable, args
        self._shared = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=executable, args=args, viewport=DEFAULT_VIEWPORT, accept_downloads=True)
        self._isolated: Any = None

    def new_context(self, viewport: dict | None = None, color_scheme: str | None = None,
                    accept_downloads: bool = True) -> Pages:
        assert accept_downloads, "every page of the shared profile accepts downloads"
        return Pages(self._shared, viewport, color_scheme)

    def new_page(self, viewport: dict | None = None, color_scheme: str | None = None) -> Any:
        return Pages(self._shared, viewport, color_scheme).new_page()

    def isolated_context(self, **options: Any) -> Any:
        """A real browser context of its own (its own connections, nothing cached), from a second Chromium made
        on first use."""
        if self._isolated is None:
            self._isolated = self._playwright.chromium.launch(executable_path=self._executable, args=self._args)
        return self._isolated.new_context(**options)

    def close(self) -> None:
        if self._isolated is not None:
            self._isolated.close()
        self._shared.close()
