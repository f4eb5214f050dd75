"""JavaScript and CSS of the token view, shared by the app and exported HTML files."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def read(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")
