"""viewer/untrusted.py: the one rule for whole numbers from links, server calls and forms."""

from __future__ import annotations

import ast

import pytest

from conftest import ROOT
from viewer.page_link import MAX_TURN, parse_page_query
from viewer.router import rollout_param
from viewer.untrusted import MOST, number, whole, whole_or


@pytest.mark.parametrize("value, expected", [
    ("3", 3), (3, 3), (3.0, 3), (" 7 ", 7), ("0", 0), (str(MOST), MOST),
    (3.7, None), ("3.7", None), ("1e3", None), ("٣", None), ("", None), ("-", None), (None, None), (True, None),
    ([3], None), ({"a": 1}, None), (float("nan"), None), (float("inf"), None), ("9" * 5000, None),
    (MOST + 1, None), (str(MOST + 1), None), (-1, None), ("-1", None), ("+3", None), ("0x10", None),
])
def test_whole_accepts_whole_numbers_in_range_only(value, expected):
    assert whole(value) == expected


def test_negative_numbers_only_where_the_caller_allows_them():
    assert whole("-5", most=10, least=-10) == -5 and whole(-5.0, most=10, least=-10) == -5
    assert whole("-11", most=10, least=-10) is None
    assert whole_or("x", -1) == -1 and whole_or("4", -1) == 4


def test_the_pages_use_the_one_rule():
    """A link's turn and rollout, and the run page's version, take the same values the parser does."""
    assert parse_page_query({"turn": "3.0"}, public=False).problems  # a link's turn is digits, never a float text
    assert parse_page_query({"turn": str(MAX_TURN)}, public=False).turn == MAX_TURN
    assert parse_page_query({"turn": str(MAX_TURN + 1)}, public=False).problems
    assert rollout_param("2") == 2 and rollout_param(2.5) is None and rollout_param("99999") == 99_999
    assert rollout_param("100000") is None


PARSERS = ("viewer/ui/view_tab.py", "viewer/ui/collection_view.py", "viewer/run_stats.py", "viewer/router.py",
           "viewer/page_link.py", "viewer/ui/capture_tab.py", "viewer/ui/run_view.py",
           "viewer/ui/find_panel.py")


@pytest.mark.parametrize("path", PARSERS)
def test_no_page_parses_numbers_its_own_way(path):
    """No int()/float() of a value and no isdigit() check outside viewer/untrusted.py in the modules that read
    links and server calls (each once had its own rule and limits)."""
    tree = ast.parse((ROOT / path).read_text())
    own = [f"line {n.lineno}" for n in ast.walk(tree) if isinstance(n, ast.Call) and (
        (isinstance(n.func, ast.Name) and n.func.id in ("int", "float") and n.args
         and not isinstance(n.args[0], ast.Constant))
        or (isinstance(n.func, ast.Attribute) and n.func.attr == "isdigit"))]
    assert not own, f"{path} parses numbers itself at {', '.join(own)}: use viewer.untrusted.whole"


def test_number_is_a_finite_float_inside_its_bounds():
    assert number("900", 1e6, -1e6) == 900.0 and number(2.5, 10, -10) == 2.5 and number("1e3", 1e6, 0) == 1e3
    for bad in ("inf", "nan", "1e400", "1_000", float("nan"), True, None, [1], "١", 11):
        assert number(bad, 10, -10) is None, bad


def test_span_is_a_half_open_range_of_whole_numbers():
    from viewer.page_link import parse_page_query
    from viewer.untrusted import span

    assert span("582-590") == (582, 590) and span([3, 4]) == (3, 4) and span((0, 1)) == (0, 1)
    for bad in ("590-582", "5-5", "-1-4", "1-2-3", "a-b", "1e3-2e3", [1], [1.5, 2], "", None, {"a": 1}, "1-" + "9" * 5000):
        assert span(bad) is None, bad
    assert parse_page_query({"found": "582-590"}, public=True).found == (582, 590)
    q = parse_page_query({"found": "9-3", "turn": "1"}, public=True)
    assert q.found is None and q.turn == 1 and "found is not a token range" in q.problems[0]
