"""The one base of every error this project raises on purpose: `except RolloutTraceError` catches each of
them (a bad artifact, a refused capture, a failed re-scoring, a bad request to a page) and nothing else.

Each error keeps its standard base too (ValueError, RuntimeError, FileExistsError, ...), so code that catches
the standard type goes on catching it. Here, in the lowest layer, because every layer raises one."""

from __future__ import annotations


class RolloutTraceError(Exception):
    """An error this project raised on purpose, with a message meant for the person reading it."""
