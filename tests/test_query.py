"""The page-load query validator: every bad value becomes a default and a message."""

from __future__ import annotations

import pytest

from viewer.page_link import MAX_SRC_CHARS, parse_page_query

EXAMPLES = ["scripted-smollm2", "smollm2-offline"]


def test_good_query_passes_through():
    q = parse_page_query({"src": "org/name@v2:runs/7", "turn": "3", "mode": "logprob", "scope": "full"},
                         public=True, examples=EXAMPLES)
    assert (q.src, q.turn, q.mode, q.scope, q.problems) == ("org/name@v2:runs/7", 3, "logprob", "full", [])
    assert q.initial == {"turn": 3, "mode": "logprob", "scope": "full", "found": None}


def test_empty_query_uses_defaults():
    q = parse_page_query({}, public=True, examples=EXAMPLES)
    assert (q.src, q.turn, q.mode, q.scope, q.problems) == (None, 0, "mask", "new", [])
    assert parse_page_query(None, public=False).src is None


def test_100kb_src_is_refused_with_a_message():
    q = parse_page_query({"src": "a" * 100_000}, public=False)
    assert q.src is None and len(q.problems) == 1 and "100,000 characters" in q.problems[0]
    assert parse_page_query({"src": "a" * MAX_SRC_CHARS}, public=False).src == "a" * MAX_SRC_CHARS


@pytest.mark.parametrize("src", ["a\nb", "x\x00y", "line\u2028sep", "\x1b[31m"])
def test_control_characters_refused(src):
    q = parse_page_query({"src": src}, public=False)
    assert q.src is None and "control characters" in q.problems[0]


@pytest.mark.parametrize("src", ["/etc/passwd", "../x", "./examples/scripted-smollm2", "C:\\x"])
def test_public_refuses_paths(src):
    q = parse_page_query({"src": src}, public=True, examples=EXAMPLES)
    assert q.src is None and "neither a bundled example nor a Hub dataset id" in q.problems[0]


def test_private_allows_paths_and_public_allows_examples():
    assert parse_page_query({"src": "/data/run 1.zip"}, public=False).src == "/data/run 1.zip"
    assert parse_page_query({"src": "scripted-smollm2"}, public=True, examples=EXAMPLES).src == "scripted-smollm2"


@pytest.mark.parametrize("turn", ["-1", "1e3", "abc", "99999999999", "٣", "1.5", ["1", "2"]])
def test_bad_turn(turn):
    q = parse_page_query({"turn": turn}, public=True)
    assert q.turn == 0 and "turn" in q.problems[0]


@pytest.mark.parametrize("name,value", [("mode", "evil"), ("scope", "<script>"), ("mode", 7), ("scope", None)])
def test_bad_mode_scope(name, value):
    q = parse_page_query({name: value}, public=True)
    assert (q.mode, q.scope) == ("mask", "new")
    assert (value is None) == (q.problems == [])
