"""Small helpers the browser tests share: a page link, the page's query, screenshots in both schemes."""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlsplit

from conftest import SHOTS


def url_of(app_url: str, src: str, **params) -> str:
    return f"{app_url}/?src={quote(src)}" + "".join(f"&{k}={quote(str(v))}" for k, v in params.items())


def query(page, blanks: bool = False) -> dict[str, str]:
    """The page URL's parameters (last value of each); `blanks` keeps the empty ones (`row=`)."""
    return {k: v[-1] for k, v in parse_qs(urlsplit(page.url).query, keep_blank_values=blanks).items()}


def shots(page, name: str, settle_ms: int = 150) -> None:
    """`name` at 1440x900 and 1024x768, light and dark (tests/screenshots/NAME-WxH-SCHEME.png), then back."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for w, h in ((1440, 900), (1024, 768)):
        page.set_viewport_size({"width": w, "height": h})
        for dark in (False, True):
            page.evaluate("d => document.body.classList.toggle('dark', d)", dark)
            page.wait_for_timeout(settle_ms)
            page.screenshot(path=str(SHOTS / f"{name}-{w}x{h}-{'dark' if dark else 'light'}.png"))
    page.evaluate("document.body.classList.remove('dark')")
    page.set_viewport_size({"width": 1400, "height": 1000})


def error_toasts(page) -> list[str]:
    """The texts of Gradio's error toasts on the page: a handler that raised, or answered its event in a shape
    Gradio refuses (a page's own errors are `page.errors`)."""
    return page.locator("[data-testid=toast-body].error").all_inner_texts()
