"""What TRL 1.16 trains on a rollout, computed straight from its trace.json by TRL's and OpenEnv's own
functions, exactly as `openenv_harness._run_session` does in loop-owning mode; and the check that the
viewer's records (rows, per-turn trained tokens, the page's outline and headline) equal it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def reference(entries: list[dict]) -> tuple[list, list, dict]:
    """(TRL's TurnRecords, TRL's TrainingSequences, TRL's tally) for the proxy's trace entries."""
    from openenv.core.harness import TrainingTrace
    from trl.experimental.async_grpo.async_rollout_worker import _chain_to_sequences
    from trl.experimental.async_grpo.openenv_harness import _turns_from_training_trace

    turns = _turns_from_training_trace(TrainingTrace.from_entries(entries))
    rows, tally = _chain_to_sequences(turns, "rollout", 0)
    return turns, rows, tally


def reference_of(folder: Path) -> tuple[list, list, dict]:
    return reference(json.loads((Path(folder) / "trace.json").read_text())["turns"])


def assert_matches_trl(folder: Path, r) -> None:
    """Rows, per-turn trained tokens and the page's records equal TRL's own computation on trace.json."""
    from rollout_trace.analysis.training import TRL
    from viewer.render.outline import outline
    from viewer.render.outline import training as training_record

    turns, rows, tally = reference_of(folder)
    tr = r.training
    assert tr.basis == "trace" and tr.error is None and tr.tally == tally
    assert len(tr.rows) == len(rows)
    for ours, theirs in zip(tr.rows, rows, strict=True):
        assert ours.input_ids.tolist() == list(theirs.input_ids)
        assert ours.completion_mask.tolist() == list(theirs.completion_mask)
        assert np.allclose(ours.old_log_probs, theirs.old_log_probs)
    # each agent turn is the call of TRL's trace that generated its tokens; its mask is TRL's
    by_output = {tuple(t.output_ids): t.output_mask for t in turns}
    o = outline(r)
    for t, page in zip(r.artifact.turns, o.turns, strict=True):
        want = int(sum(by_output[tuple(t.output_ids.tolist())]))
        assert tr.trained_tokens(t.index) == page.trained_tokens == want
        assert page.trained == (want > 0) and page.seed_trained == t.seed_trained
    n = sum(p.trained for p in o.turns)
    assert o.summary.trained == f"{n} of {len(o.turns)} turn{'s' if len(o.turns) != 1 else ''} trained by TRL"
    assert (o.header.counts.trained, o.header.counts.trained_by) == (n, TRL)  # the header names the version
    assert r.report.trained_turns == n
    assert r.report.trained_tokens == sum(sum(t.output_mask) for t in turns)
    assert [row.trained for row in training_record(r).rows] == [int(sum(x.completion_mask)) for x in rows]
