"""Search (viewer/find/): plain text and /regex/, the field, version and status restrictions, token positions that
point at the matched tokens, the regex time budget, and `python -m viewer find` on the bundled run."""

from __future__ import annotations

import io
import json
import time
from argparse import Namespace

import msgspec
import numpy as np
import pytest

from rollout_trace.analysis.texts import Piece, RolloutText, TurnText
from rollout_trace.analysis.tokens import decode
from rollout_trace.artifact.run import open_run
from rollout_trace.artifact.sources import EXAMPLES_DIR
from viewer.cli.find import find, open_index_of
from viewer.find.build import Vocabs, index_collection, item_of
from viewer.find.query import QueryError, parse_query
from viewer.find.text_index import FindIndex, RolloutRow
from viewer.index import open_index


@pytest.fixture(scope="module")
def run_index():
    c = open_index("trl-run")
    index = index_collection(c)
    yield c, index
    index.close()
    c.close()


def _turn(i: int, generated: str, context: str = "", n_prompt: int = 100) -> TurnText:
    return TurnText(index=i, n_prompt=n_prompt, output_ids=np.arange(len(generated), dtype=np.int32),
                    generated=Piece("generated", i, generated, n_prompt, np.arange(len(generated))),
                    context=Piece("tool-output", i, context, 7, np.arange(len(context))))


def _small(*rows: tuple[RolloutRow, str, str]) -> FindIndex:
    index = FindIndex()
    index.add((row, RolloutText(turns=(_turn(0, "opening"), _turn(1, gen, ctx))), []) for row, gen, ctx in rows)
    return index


def test_plain_text_is_a_case_insensitive_substring_with_its_token_position():
    index = _small((RolloutRow("a", 1, status="ok"), "I will Run The Tests now", "tool says: all tests PASS"),
                   (RolloutRow("b", 2, status="failed"), "nothing here", "run the tests"))
    r = index.search(parse_query("run the tests"))
    assert r.rollouts == 2 and r.per_version == {1: 1, 2: 1}
    first = r.hits[0]
    assert (first.path, first.turn, first.field) == ("a", 1, "generated")
    assert first.token == 100 + "I will Run The Tests now".index("Run") and first.token_end == first.token + 13
    a, b = first.mark
    assert first.excerpt[a:b] == "Run The Tests"
    other = r.hits[1]
    assert other.field == "tool-output" and other.token == 7  # the tool output's own first token


def test_restrictions_fields_versions_statuses():
    index = _small((RolloutRow("a", 1, status="ok"), "pytest here", "pytest there"),
                   (RolloutRow("b", 5, status="failed"), "pytest again", ""))
    only_out = index.search(parse_query("pytest", fields=["tool-output"]))
    assert {(h.path, h.field) for h in only_out.hits} == {("a", "tool-output")}
    assert {h.path for h in index.search(parse_query("pytest", versions="2:9")).hits} == {"b"}
    assert {h.path for h in index.search(parse_query("pytest", versions=":1")).hits} == {"a"}
    assert {h.path for h in index.search(parse_query("pytest", statuses=["failed"])).hits} == {"b"}


def test_regex_uses_its_literal_and_finds_every_match():
    index = _small((RolloutRow("a", 1), "exit(0) then exit(1)", ""), (RolloutRow("b", 1), "no exits", ""))
    q = parse_query(r"/exit\(\d\)/")
    assert q.is_regex and q.literal == "exit("
    r = index.search(q)
    assert r.rollouts == 1 and [h.token for h in r.hits] == [100, 100 + 13]
    short = index.search(parse_query(r"/\d\)/"))  # no 3-character literal: every piece read
    assert short.rollouts == 1 and short.notes


def test_a_pattern_that_backtracks_elsewhere_runs_in_linear_time_and_a_memory_bomb_is_refused():
    """RE2: `(a|aa)+$` (exponential on a backtracking engine) answers at once; what RE2 cannot run linearly
    (conditionals, recursion, backreferences, lookaround, huge repeats) is refused by name, never a MemoryError."""
    index = _small((RolloutRow("a", 1), "a" * 100_000 + "!", ""))
    r = index.search(parse_query(r"/(a|aa)+$/"))
    assert not r.partial and r.rollouts == 0
    for bomb in ("/(?(DEFINE)(?<a>(?&a)x))(?&a)/", r"/(\w+)\1/", "/(?=x)y/", "/((a{999}){999}){999}/"):
        with pytest.raises(QueryError, match="not a valid regular expression for this search"):
            parse_query(bomb)


def test_the_budget_holds_in_total_waits_included():
    index = _small((RolloutRow("a", 1), "pytest passed " * 50, ""), (RolloutRow("b", 2), "pytest failed", ""))
    q = parse_query("/pytest (passed|failed)/")
    assert not index.search(q).partial
    gone = time.monotonic() - 1  # a deadline already past: the regex scan stops before it reads a piece
    r = index.search(q, gone)
    assert r.partial and r.rollouts == 0 and any("time budget" in n for n in r.notes)
    plain = index.search(parse_query("pytest"), gone)  # SQLite's own query is stopped by its progress handler
    assert plain.partial or plain.rollouts == 2  # (a query SQLite finishes within one check is whole)
    index._lock.acquire()  # another search of this source holds the index past this one's deadline
    try:
        waited = index.search(q, time.monotonic() + 0.01)
    finally:
        index._lock.release()
    assert waited.partial and "other searches of this source" in waited.notes[0]


@pytest.mark.parametrize("bad, said", [("", "empty"), ("/(/", "not a valid regular expression"),
                                       ("x" * 600, "at most")])
def test_bad_patterns_are_named(bad, said):
    with pytest.raises(QueryError, match=said):
        parse_query(bad)
    with pytest.raises(QueryError, match="expected one of"):
        parse_query("x", fields=["prompt"])
    with pytest.raises(QueryError, match="ends"):
        parse_query("x", versions="5:2")


def test_public_mode_has_a_smaller_budget_and_pattern():
    q = parse_query("abc", public=True)
    assert q.budget_s < parse_query("abc").budget_s
    with pytest.raises(QueryError):
        parse_query("x" * 300, public=True)


def test_hits_on_the_bundled_run_point_at_the_matched_tokens(run_index):
    c, index = run_index
    r = index.search(parse_query("solution.py", fields=["generated", "tool-output"], limit=20))
    assert r.rollouts > 0 and set(r.per_version) <= set(c.run.versions())
    vocabs = Vocabs()
    for h in r.hits[:6]:
        a = c.open(h.path)
        t = a.turns[h.turn]
        ids = t.ids[h.token:h.token_end]
        assert "solution.py" in decode(vocabs.of(a), ids), h
        rec = c.record(h.path)
        assert (h.version, h.rollout) == (rec.policy_version, rec.rollout)


def test_counts_per_version_match_a_scan_of_the_text(run_index):
    c, index = run_index
    vocabs = Vocabs()
    expected: dict[int, int] = {}
    for rec in c.records:
        if rec.kind == "artifact":
            _, text, _ = item_of(RolloutRow(rec.path), c.open(rec.path), vocabs)
            if any("wrote file" in p.text.lower() for p in text.pieces()):
                expected[rec.policy_version] = expected.get(rec.policy_version, 0) + 1
    assert index.search(parse_query("Wrote file")).per_version == expected


def test_the_find_command_prints_hits_and_json():
    out, err = io.StringIO(), io.StringIO()
    args = Namespace(source="scripted-smollm2", pattern="/print\\(len/", json=True, fields=["tool-call"], versions=None,
                     status=None, limit=5)
    assert find(args, out, err) == 0
    doc = json.loads(out.getvalue())
    assert doc["rollouts"] == 1 and doc["hits"][0]["field"] == "tool-call" and doc["hits"][0]["turn"] == 0
    out = io.StringIO()
    assert find(Namespace(**{**args.__dict__, "json": False, "pattern": "print(len"}), out, err) == 0
    assert "turn 0 tool-call token" in out.getvalue() and "[print(len]" in out.getvalue()
    assert find(Namespace(**{**args.__dict__, "pattern": "/(/"}), io.StringIO(), err) == 2
    assert find(Namespace(**{**args.__dict__, "source": "/nonexistent/x"}), io.StringIO(), err) == 1


def test_the_find_command_names_a_pattern_that_is_not_text_and_a_run_that_is_broken(tmp_path):
    import shutil

    from rollout_trace.artifact.sources import EXAMPLES_DIR

    args = Namespace(source="trl-run", pattern="x\udcff\udcfe", json=False, fields=None, versions=None, status=None,
                     limit=5)  # what argv holds for the bytes x \xff \xfe
    err = io.StringIO()
    assert find(args, io.StringIO(), err) == 2 and "not UTF-8" in err.getvalue()
    broken = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", broken)
    (broken / "run.json").unlink()
    (broken / "run.json").mkdir()
    err = io.StringIO()
    assert find(Namespace(**{**args.__dict__, "source": str(broken), "pattern": "solution"}), io.StringIO(), err) == 1
    assert "run.json: a recorded run's manifest is not a file" in err.getvalue()


def test_a_single_artifact_is_one_rollout():
    index = open_index_of("smollm2-offline")
    assert len(index) == 1 and [f.rule for f in index.findings_of("")] == ["cut-at-limit"]


def test_ls_json_rows_carry_their_findings():
    from viewer.cli.collection import ls
    from viewer.index.filters import QUERY_KEYS

    out = io.StringIO()
    args = Namespace(source="smollm2-group", json=True, trained=False, **{f"q_{k}": None for k in QUERY_KEYS})
    assert ls(args, out, io.StringIO()) == 0
    rows = {r["path"]: r["findings"] for r in json.loads(out.getvalue())["records"]}
    assert rows[""] is None  # the group row
    assert [f["rule"] for f in rows["rollout-02"]] == ["cut-at-limit"] and rows["rollout-00"] == []
    assert rows["rollout-02"][0]["sentence"].startswith("Turn 0: the answer was cut")


def test_the_cache_reads_a_source_once_and_a_grown_run_only_for_its_new_rollouts():
    from viewer.find.cache import FindCache

    c = open_index("trl-run")
    cache = FindCache()
    try:
        first = len(cache.get("trl-run", c, True))
        assert cache.builds == first and cache.get("trl-run", c, True) is not None and cache.builds == first
        arts = [r for r in c.records if r.kind == "artifact"]
        small = type(c)(  # the run when it held ten rollouts; then grown to all of them
            c.source, c.kind, [r for r in c.records if r.kind != "artifact"] + arts[:10], store=c.store,
                        run=c.run)
        other = FindCache()
        other.get("trl-run", small, True)
        assert other.builds == 10
        other.get("trl-run", c, True)
        assert other.builds == first
        other.close()
    finally:
        cache.close()
        c.close()


def test_a_grown_run_is_searched_in_its_next_snapshot_and_the_last_keeps_its_answer(tmp_path):
    """A run's search reads its text columns (viewer/find/columns.py), once per snapshot: a group the recorder
    appends to the open tail is found by the next snapshot's search, while a page holding the last snapshot keeps
    its answer (a snapshot never changes)."""
    from rollout_trace.artifact.run_format import group_path
    from rollout_trace.artifact.run_table import run_table
    from support.run_tables import append_group, bundled_rows, changed, groups, write_run
    from viewer.find.columns import searched

    rows = bundled_rows()
    run = write_run(tmp_path / "run", rows)
    q = parse_query("Wrote file")
    before = run_table(run)
    first = searched(before).search(q)
    def matching(table) -> int:  # rollouts whose recorded text holds the pattern, read apart from the search
        return sum(any("wrote file" in t.lower() for t in texts) for texts in table["text"].to_pylist())

    assert first.rollouts == matching(rows)
    g = next(x for x in groups(rows) if matching(x))
    segment, version = g["segment"][0].as_py(), g["policy_version"][0].as_py()
    name = group_path(segment, version, 999)
    grown = changed(g, group_id=[999] * g.num_rows, group=[name] * g.num_rows,
                    path=[None if p is None else f"{name}/{p.rsplit('/', 1)[1]}" for p in g["path"].to_pylist()],
                    rollout_id=[f"grown-{i}" for i in range(g.num_rows)])
    append_group(run, grown, tail=True)
    after = run_table(run)
    assert after is not before and len(after) == len(before) + g.num_rows
    again = searched(after).search(q)
    assert again.rollouts == first.rollouts + matching(g)
    assert again.per_version[version] == first.per_version[version] + matching(g)
    assert searched(before).search(q).rollouts == first.rollouts  # the last snapshot keeps its answer


def test_the_panel_indexes_a_hub_source_only_when_asked():
    """Opening a Hub collection's page costs no download of its rollouts: the panel says how many it would read (a
    run's search reads its columns instead)."""

    from viewer.ui.find_panel import FindPanel
    from viewer.ui.service import Service

    local = open_index("smollm2-group")
    hub = type(local)("org/runs", "hub", local.records, store=local.store)
    opened = []

    class Cache:
        def get(self, src, allow):
            opened.append(src)
            return hub

    service = Service("", public=True)
    service.collections, service.is_collection, service.allow_local = Cache(), lambda s: True, lambda s: False  # type: ignore[method-assign,assignment]
    service.is_run = lambda s: False  # type: ignore[method-assign]  # a collection: a run's search reads its columns
    panel = FindPanel(service)
    try:
        assert panel.summary({"src": "org/runs"}) == {"pending": True, "rollouts": 4}
        assert panel.cache.builds == 0
        built = panel.summary({"src": "org/runs", "build": True})
        assert built["rollouts"] == 4 and panel.cache.builds == 4
        assert "pending" not in panel.summary({"src": "org/runs"})  # built once: no more asking
    finally:
        panel.cache.close()
        local.close()


def test_a_runs_first_hits_come_at_once_and_the_rest_adds_up_to_the_whole_search(tmp_path, monkeypatch):
    """The panel asks a run for its first hits (`first`: the search stops between shards once it has some) and then
    for the rest from where it stopped (`after`); the two answers' counts add up to one whole search's, the hits
    concatenate to its hits, and a collection's index answers whole (no `resume`)."""
    import dataclasses

    from rollout_trace.artifact.run_table import run_table
    from support.run_tables import write_run
    from viewer.find import answers, columns
    from viewer.find.columns import searched

    t = run_table(write_run(tmp_path / "run", seal_rows=8))  # the bundled run in shards of 8 rollouts
    assert len(t.shards) >= 4
    index = searched(t)
    req = {"pattern": "Wrote file", "limit": 5}
    whole = answers.search(index, req, public=False)
    assert whole.resume is None and whole.rollouts > 5
    monkeypatch.setattr(columns, "FIRST_S", 0.0)  # a slow machine: the first answer returns after its first hit
    first = answers.search(index, {**req, "first": True}, public=False)
    assert first.resume is not None and 0 < first.rollouts < whole.rollouts and first.hits
    rest = answers.search(index, {**req, "after": first.resume}, public=False)
    assert rest.resume is None and first.rollouts + rest.rollouts == whole.rollouts
    per = dict(first.per_version)
    for v, n in rest.per_version.items():
        per[v] = per.get(v, 0) + n
    assert per == whole.per_version
    assert (first.hits + rest.hits)[:5] == whole.hits
    assert all(f"-g{h.group:06d}/" in h.path for h in whole.hits if h.group is not None) and whole.hits[0].group is not None
    monkeypatch.setattr(columns, "FIRST_S", 3600.0)  # a fast machine: the first answer waits for `limit` hits
    quick = index.search(dataclasses.replace(parse_query("Wrote file", limit=5), first=True))
    assert len(quick.hits) == 5 and quick.resume is not None


def test_a_collections_search_answers_whole_when_asked_for_its_first_hits(run_index):
    from viewer.find import answers

    _, index = run_index
    first = answers.search(index, {"pattern": "Wrote file", "first": True}, public=False)
    assert first.resume is None and first.rollouts == answers.search(index, {"pattern": "Wrote file"}, public=False).rollouts


@pytest.mark.parametrize("column", ["text_field", "text_offsets"])
def test_a_rollout_whose_text_lists_differ_in_length_is_not_searched_and_is_named(tmp_path, column):
    """A rollout's text pieces are parallel lists (`text`, `text_field`, `text_turn`, `text_start`,
    `text_offsets`); a hostile shard's of different lengths raised in the search (ArrowInvalid) or located a hit
    in another piece's turn. Such a rollout is left out of the search, and the answer names its file and row:
    whether the list is one every shard's search reads (`text_field`) or one read only in a shard where a piece
    matched (`text_offsets`, where a hit is placed among its tokens)."""
    import pyarrow as pa

    from rollout_trace.artifact.run_table import run_table
    from support.run_tables import bundled_rows, write_run
    from viewer.find.columns import searched

    rows = bundled_rows()
    q = parse_query("Wrote file")
    whole = searched(run_table(write_run(tmp_path / "run", rows))).search(q)
    texts = rows["text"].to_pylist()
    hit = next(i for i, t in enumerate(texts) if any("wrote file" in x.lower() for x in t or ()))
    values = rows[column].to_pylist()
    values[hit] = values[hit][:-1]
    hostile = rows.set_column(rows.schema.get_field_index(column), column,
                              pa.array(values, rows.schema.field(column).type))
    got = searched(run_table(write_run(tmp_path / "hostile", hostile))).search(q)
    assert got.rollouts == whole.rollouts - 1 and len(got.hits) == len(whole.hits) - sum(
        h.path == rows["path"][hit].as_py() for h in whole.hits)
    said = [n for n in got.notes if "not searched" in n]
    assert len(said) == 1 and said[0].startswith("1 rollout(s) not searched")
    assert "rollouts/" in said[0] and f"{column} has {len(values[hit])} values, text {len(texts[hit])}" in said[0]


def test_a_piece_whose_token_offsets_cannot_be_read_is_named_and_its_hit_kept(tmp_path):
    """A piece's token offsets are 32-bit numbers; a hostile shard's of 3 bytes raised in the search (ValueError).
    Its hits are kept, placed at the piece's first token, and the answer says so."""
    import pyarrow as pa

    from rollout_trace.artifact.run_table import run_table
    from support.run_tables import bundled_rows, write_run
    from viewer.find.columns import searched

    rows = bundled_rows()
    q = parse_query("Wrote file")
    whole = searched(run_table(write_run(tmp_path / "run", rows))).search(q)
    offsets = [[b"\x01\x02\x03" if x else x for x in o] if o else o for o in rows["text_offsets"].to_pylist()]
    hostile = rows.set_column(rows.schema.get_field_index("text_offsets"), "text_offsets",
                              pa.array(offsets, rows.schema.field("text_offsets").type))
    got = searched(run_table(write_run(tmp_path / "hostile", hostile))).search(q)
    assert got.rollouts == whole.rollouts and len(got.hits) == len(whole.hits)
    said = [n for n in got.notes if "cannot be read" in n]
    assert len(said) == 1 and "first token" in said[0] and "turn" in said[0]


@pytest.mark.parametrize("versions, pattern", [("", ""), ("2:3", ""), ("3", ""), ("", "solution.py")])
def test_the_rollouts_with_a_finding_are_the_same_from_a_runs_columns_and_a_text_index(run_index, versions, pattern,
                                                                                        monkeypatch):
    """A findings query (answers.search with a rule) counts and lists the same rollouts and findings from the run's
    columns (RunFind) as from the text index of the same rollouts, as a plain reading of every rollout's findings
    says; it lists at most MAX_FINDING_ROWS findings, of the first rollouts by version, and names only those: no
    name is made for every rollout of the run, whose findings it filters once (not once per rollout)."""
    from viewer.find import answers
    from viewer.find.columns import RunFind
    from viewer.find.query import parse_versions

    c, index = run_index
    t = open_run(str(EXAMPLES_DIR / "trl-run")).table
    find = RunFind(t)
    every = index.all_findings()
    lo, hi = parse_versions(versions or None)
    with_pattern = {h.path for h in index.search(parse_query(pattern, limit=200)).hits} if pattern else None
    for rule in find.present():
        expected = {rec.path: rec.policy_version for rec in c.records
                    if any(f.rule == rule for f in every.get(rec.path, []))
                    and (lo is None or rec.policy_version >= lo) and (hi is None or rec.policy_version <= hi)
                    and (with_pattern is None or rec.path in with_pattern)}
        ask = {"rule": rule, "versions": versions, "pattern": pattern}
        run, text = answers.search(find, ask, public=False), answers.search(index, ask, public=False)
        assert run.error is None and text.error is None
        assert run.rollouts == text.rollouts == len(expected)
        per = {}
        for v in sorted(expected.values()):
            per[str(v)] = per.get(str(v), 0) + 1
        assert run.per_version == text.per_version == per
        listed = {(h.path, h.turn, h.token, h.token_end, h.excerpt) for h in run.hits}
        assert listed == {(h.path, h.turn, h.token, h.token_end, h.excerpt) for h in text.hits}
        assert listed == {(p, f.turn, f.start, f.end, f.sentence) for p in expected for f in every[p] if f.rule == rule}
        assert all(h.group is not None and h.field == f"finding: {rule}" for h in run.hits)
        monkeypatch.setattr(answers, "MAX_FINDING_ROWS", 2)
        cut = answers.search(find, ask, public=False)
        monkeypatch.undo()
        assert cut.rollouts == len(expected) and len(cut.hits) == min(2, len(run.hits))
        assert [h.path for h in cut.hits] == [h.path for h in run.hits][:len(cut.hits)]
        assert [h.version for h in run.hits] == sorted(h.version for h in run.hits)
    assert "__names" not in t._memo
    assert find.present() and all(find.findings_of(p) == every.get(p, []) for p in expected)
    assert find.findings_of("groups/nothing") == [] and "groups/nothing" not in find and next(iter(every)) in find


def test_the_findings_chart_counts_are_the_same_from_a_runs_rule_bits_and_a_text_index(run_index):
    """The search panel's chart (answers.summary: rollouts with each rule's finding, per version), asked on every
    page load, counts from the run's rule bits the same rollouts as the text index of the same rollouts and a plain
    reading of every rollout's findings, without holding the run's findings with their sentences."""
    from viewer.find import answers
    from viewer.find.columns import RunFind

    c, index = run_index
    t = open_run(str(EXAMPLES_DIR / "trl-run")).table
    find = RunFind(t)
    every = index.all_findings()
    plain: dict = {}
    for rec in c.records:
        for rule in {f.rule for f in every.get(rec.path, [])}:
            plain.setdefault(rec.policy_version, {}).setdefault(rule, 0)
            plain[rec.policy_version][rule] += 1
    assert find.finding_counts() == index.finding_counts() == plain and len(plain) >= 2
    # the same counts (the text index holds only the rollouts with text: it knows of no other)
    assert msgspec.structs.replace(answers.summary(find), unsearchable=0) == answers.summary(index)
    # the run's failed rollouts have no text: the panel says how many of the head's rollouts it cannot search
    failed = sum(r.path is None for r in open_run(str(EXAMPLES_DIR / "trl-run")).rows)
    assert answers.summary(find).unsearchable == failed > 0 and answers.summary(find).rollouts == len(t) - failed
    assert "find:findings" not in t._memo and find.finding_counts() is find.finding_counts()  # once per snapshot


def test_the_panel_leaves_every_output_as_it_is_for_an_event_not_its_own():
    """An event of the panel's component that is not a hit's "open" (or has no data): gr.skip(), every output as it
    is; an empty dict is a value to Gradio, refused for the several outputs of the token view."""
    from types import SimpleNamespace

    import gradio as gr

    from viewer.ui.find_panel import FindPanel
    from viewer.ui.service import Service

    panel = FindPanel(Service("", public=False))
    try:
        for data in ({"action": "open"}, {"action": "task"}, None, "open-hit"):
            assert panel.on_open(SimpleNamespace(_data=data)) == gr.skip()
    finally:
        panel.cache.close()
