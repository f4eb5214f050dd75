"""The View tab's routing without Gradio or files (viewer/router.py): every link and typed name, one Route."""

from __future__ import annotations

from viewer.contract import Initial
from viewer.router import Route, route_link, route_source
from viewer.source_kinds import Kind

KINDS: dict[str, Kind] = {"ex": "rollout", "coll": "collection", "grp": "collection", "run": "run", "org/a": "rollout"}


def link(params: dict, default: str = "ex", public: bool = False) -> Route:
    return route_link(params, default_source=default, public=public, examples=("ex", "grp"),
                      kind_of=lambda s: KINDS.get(s, "rollout"), root_group=lambda s: s == "grp")


def test_a_rollout_link_and_the_default_page():
    assert link({}) == Route(kind="default", src="ex")
    r = link({"src": "org/a", "turn": "2", "mode": "loss", "scope": "full"})
    assert (r.kind, r.src, r.initial) == ("rollout", "org/a", Initial(2, "loss", "full"))
    assert link({"turn": "1"}).src == "ex"  # no src: the default source at that turn
    bad = link({"src": "org/a", "turn": "x", "mode": "nope"})
    assert bad.kind == "rollout" and bad.initial == Initial()  # bad values fall back, the source still opens


def test_a_public_link_to_a_server_path_is_refused_with_the_reason():
    r = link({"src": "/etc"}, public=True)
    assert r.kind == "refused" and "neither a bundled example nor a Hub dataset id" in r.problems[0]
    assert link({"src": "x" * 5000}).kind == "refused"


def test_collections_groups_and_runs():
    assert link({"src": "coll", "sort": "-reward"}) == Route(kind="index", src="coll",
                                                             params={"src": "coll", "sort": "-reward"})
    r = link({"src": "coll", "row": "a/b", "turn": "1"})
    assert (r.kind, r.row, r.initial.turn) == ("row", "a/b", 1)
    assert (link({"src": "grp"}).kind, link({"src": "grp"}).row) == ("row", "")  # one group: its map
    assert link({"src": "grp", "rollout": "3"}).rollout == 3
    assert link({"src": "grp", "page": "2"}).kind == "index"  # asking for a page is asking for the index
    assert link({"src": "run"}).kind == "index"
    assert link({}, default="coll").kind == "index"  # an owner's collection as the default source
    assert link({"src": "coll", "rollout": "-1", "row": ""}).rollout is None


def test_the_load_button():
    kinds = {"kind_of": lambda s: KINDS.get(s, "rollout"), "root_group": lambda s: s == "grp"}
    assert route_source("  coll ", **kinds) == Route(kind="index", src="coll")
    assert route_source("grp", **kinds) == Route(kind="row", src="grp", row="")
    assert route_source("ex", **kinds) == Route(kind="rollout", src="ex")
    assert route_source(["not", "text"], **kinds) == Route(kind="rollout", src="")  # the API may send anything
