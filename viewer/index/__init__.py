"""The collection index: its page records, filters, rendering, cache and the facts it counts itself (`ls` is viewer/cli/collection.py).

Every index opens through `open_index`: the artifact layer's `open_collection` with the recipe's titles
(a task's title skips the directions every task shares, rollout_trace/recipe/tasks.py).
"""

from __future__ import annotations

from rollout_trace.artifact.collection import Collection, open_collection
from rollout_trace.recipe.tasks import title_of


def open_index(source: str, token: str | None = None, allow_local: bool = True) -> Collection:
    return open_collection(source, token=token, allow_local=allow_local, title_of=title_of)
