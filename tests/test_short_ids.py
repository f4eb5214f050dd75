"""A run's rollout named as the pages name it ("v3 g2 r1", "v3 · group 2 · rollout 1", with the segment when two
segments share it) is read back to its path (viewer/short_ids.py), on the bundled run and on a run whose two
segments both hold version 1."""

from __future__ import annotations

import pytest

from rollout_trace.artifact.run_table import run_table
from rollout_trace.artifact.sources import EXAMPLES_DIR
from support.run_tables import bundled_rows, changed, write_run
from viewer import short_ids
from viewer.short_ids import ShortId

BUNDLED_PATH = "groups/20261203T090916Z-f44f09-v000003-g000002/rollout-01"


@pytest.mark.parametrize("text", ["v3 g2 r1", " v3 · group 2 · rollout 1 ", "v3 › group 2 › rollout 1",
                                  "V3 G2 R1", "version 3, group 2, rollout 1"])
def test_the_names_a_page_shows_are_read(text):
    assert short_ids.parse(text) == ShortId(3, 2, 1)


@pytest.mark.parametrize("text", ["", "groups/x/rollout-01", "v3 g2", "v3 g2 r1 r2", "v-1 g2 r1", "v1e9 g2 r1",
                                  "v" + "9" * 16 + " g2 r1", "../../etc v1 g0 r0"])
def test_what_is_not_a_name_is_none(text):
    assert short_ids.parse(text) is None


def test_a_name_is_its_rollouts_path_in_the_bundled_run():
    t = run_table(EXAMPLES_DIR / "trl-run")
    assert short_ids.path_of(t, ShortId(3, 2, 1)) == BUNDLED_PATH
    assert short_ids.path_of(t, ShortId(3, 2, 1, "20261203T090916Z-f44f09")) == BUNDLED_PATH
    with pytest.raises(ValueError, match="no rollout v9 g2 r1 in this run"):
        short_ids.path_of(t, ShortId(9, 2, 1))
    with pytest.raises(ValueError, match="no rollout 20261203T090858Z-506fa9 v3 g2 r1"):
        short_ids.path_of(t, ShortId(3, 2, 1, "20261203T090858Z-506fa9"))


def test_a_name_two_segments_share_asks_for_the_segment(tmp_path):
    """The second segment's versions 3, 4 renumbered 1, 2 (a run resumed from an older checkpoint)."""
    rows = bundled_rows()
    segs = rows["segment"].to_pylist()
    again = changed(rows, policy_version=lambda vs: [v - 2 if s.endswith("f44f09") else v for v, s in zip(vs, segs, strict=True)])
    t = run_table(write_run(tmp_path / "run", again))
    with pytest.raises(ValueError) as e:
        short_ids.path_of(t, ShortId(1, 0, 0))
    said = str(e.value)
    assert "2 rollouts of this run are v1 g0 r0" in said
    assert "20261203T090858Z-506fa9 v1 g0 r0" in said and "20261203T090916Z-f44f09 v1 g0 r0" in said
    first = short_ids.path_of(t, ShortId(1, 0, 0, "20261203T090858Z-506fa9"))
    second = short_ids.path_of(t, ShortId(1, 0, 0, "20261203T090916Z-f44f09"))
    assert first != second and "506fa9-v000001-g000000" in first and "f44f09-v000001-g000000" in second
