"""The View tab's routing, without Gradio: a request (a page link's parameters, or a name typed into the
source box) becomes one typed `Route` that says what to show; the tabs only turn a route into components.

    ?src=ARTIFACT&turn=&mode=&scope=&found=A-B   rollout (the token view, at that turn, mode and scope)
    ?src=COLLECTION&<filters>&page=N             index (viewer/index/filters.py's keys)
    ?src=COLLECTION&row=PATH[&rollout=N&turn=..] row (one artifact, or a group's map with rollout N open)
    ?src=GROUP[&rollout=N]                       row "" (a source that is one group opens its map)
    (nothing)                                    default (the page was built with the default source)

What a source is comes from viewer/source_kinds.py through `kind_of`; whether a collection is one
group at its root through `root_group` (both passed in, so this module reads no files and tests need none).
A recorded run opens like a collection: its rows are groups and rollouts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

import msgspec

from .contract import Initial
from .page_link import MAX_SRC_CHARS, PageQuery, parse_page_query
from .run_stats import MAX_SMOOTH, SORT_KEYS, RunLike, resolve_link, segments, sort_key, version_stats
from .source_kinds import Kind
from .untrusted import number, whole

RouteKind = Literal["default", "rollout", "index", "row", "refused"]
LINK_KEYS = ("src", "turn", "mode", "scope", "found")  # a link naming none of these is the default page
MAX_ROLLOUT = 99_999  # a group holds far fewer rollouts
INDEX_KEYS = ("page", "sort")  # a link with these asks for a group's index row, not its map
VIEW_KEYS: tuple[str, ...] = Initial.__struct_fields__  # the token view's place in a link: turn, mode, scope, found


class Route(msgspec.Struct, frozen=True, kw_only=True):
    kind: RouteKind
    src: str = ""
    row: str | None = None  # a collection's row path ("" is the root: a group at the root)
    rollout: int | None = None  # a group map's open rollout
    initial: Initial = Initial()
    params: dict[str, str] = {}  # the link's parameters (the index reads its filters from them)
    problems: list[str] = []  # why a link was refused, or which of its values were replaced; safe to show after escaping


def initial_of(q: PageQuery) -> Initial:
    return Initial(q.turn, q.mode, q.scope, q.found)  # type: ignore[arg-type]  # parse_page_query checked mode and scope


def initial_from_params(params: Mapping[str, object]) -> Initial:
    """Turn, mode, scope and the marked tokens from a URL's parameters (each bad value falls back to its default)."""
    keep = {k: params[k] for k in VIEW_KEYS if k in params}
    return initial_of(parse_page_query(keep, public=False))


def rollout_param(value: object) -> int | None:
    """`rollout=N` from a link or an event: a small non-negative whole number, else None (ignored)."""
    return whole(value, most=MAX_ROLLOUT)


def run_link_problem(run: RunLike, params: Mapping[str, object]) -> str | None:
    """What a run page link (`version=V`, `group=G`, `segment=S`) names that the run does not have, in one line
    for the page, or None. A value that is not a whole number is named as such, never read as "no value"."""
    versions = [s.version for s in version_stats(run)]
    raw = params.get("version")
    if raw not in (None, ""):
        version = whole(raw)
        if version is None:
            return "the link's version is not a policy version (a whole number); showing the whole run"
        if version not in versions:
            have = f"it has versions {versions[0]} to {versions[-1]}" if versions else "it has no version yet"
            return f"this run has no policy version {version} ({have}); showing the whole run"
    segment = params.get("segment")
    if segment not in (None, "") and segment not in segments(run):
        return f"this run has no segment {str(segment)[:80]!r}; showing the whole run"
    if "group" in params:
        path, problem = resolve_link(run, params)
        if path is None:
            return f"{problem}; showing the whole run"
    if sort_key(params.get("vsort")) is None:
        return f"the link's vsort is not a column of the versions table ({', '.join(SORT_KEYS)}, - first to " \
               "reverse); listing versions in run order"
    if params.get("smooth") not in (None, "") and number(params.get("smooth"), MAX_SMOOTH, 0.0) is None:
        return f"the link's smooth is not a smoothing weight (0 to {MAX_SMOOTH}); the curves are drawn unsmoothed"
    return None


def _opens_index(kind: Kind) -> bool:
    return kind in ("collection", "run")


def route_link(params: Mapping[str, str], *, default_source: str, public: bool, examples: tuple[str, ...],
               kind_of: Callable[[str], Kind], root_group: Callable[[str], bool]) -> Route:
    """What a page link shows. `examples`: the bundled names a public link may use besides Hub ids."""
    params = {k: v for k, v in params.items() if isinstance(v, str)}
    src = (params.get("src") or default_source or "").strip()
    if src and len(src) <= MAX_SRC_CHARS and _opens_index(kind_of(src)):
        rollout = rollout_param(params.get("rollout"))
        row = params.get("row")
        if row is None and (rollout is not None or not any(k in params for k in INDEX_KEYS)) and root_group(src):
            row = ""  # the source is one group: its map (or ?rollout=) rather than the index
        if row is not None:
            q = parse_page_query({k: params[k] for k in VIEW_KEYS if k in params}, public=False)
            return Route(kind="row", src=src, row=row[:MAX_SRC_CHARS], rollout=rollout,
                         initial=initial_of(q), params=params, problems=q.problems)
        return Route(kind="index", src=src, params=params)
    if not any(k in params for k in LINK_KEYS):
        return Route(kind="default", src=default_source)
    q = parse_page_query(params, public, examples)
    if "src" in params and q.src is None and q.problems:
        return Route(kind="refused", problems=q.problems)
    return Route(kind="rollout", src=q.src or default_source, initial=initial_of(q), problems=q.problems)


def route_source(source: object, *, kind_of: Callable[[str], Kind], root_group: Callable[[str], bool]) -> Route:
    """What the Load button (or the source picker) shows for a typed name; the API may send anything."""
    text = source.strip() if isinstance(source, str) else ""
    if text and len(text) <= MAX_SRC_CHARS and _opens_index(kind_of(text)):
        return Route(kind="row", src=text, row="") if root_group(text) else Route(kind="index", src=text)
    return Route(kind="rollout", src=text)
