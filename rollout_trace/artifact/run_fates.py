"""What became of each TRL row of a run and of each rollout, from the consumption table: pure numpy over fate
codes, one byte per rollout (a million rollouts' rows are millions). rollout_trace/artifact/run_table.py makes
one `FateLookup` per snapshot and the rollouts' fates shard by shard from it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, get_args

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .run_columns import codes_in, filled
from .run_files import RunFiles

# What became of a row, as the reader reports it: the trainer's Fate, or "in-queue" (recorded, not taken
# when training stopped, or not yet while it runs), or "unknown" (no consumption log for its segment).
RowFate = Literal["trained", "stale", "oversize", "resume-skip", "read-ahead", "in-batcher", "in-queue", "unknown"]

FATES: tuple[str, ...] = get_args(RowFate)


class FateLookup:
    """The consumption table as one lookup per segment of the run (`names`): what became of any TRL row, found by
    its segment and ordinal without a join (a segment's rows are numbered 0, 1, 2... in its queue, so its
    consumption rows are an array indexed by ordinal; the later row of an ordinal wins). Made once per snapshot
    and small (a byte and a step per ordinal): a page that shows a few rollouts' rows asks for those alone.
    Numbers as narrow as they fit (a row's ordinal and step in 32 bits, `_int32`)."""

    def __init__(self, consumed: pa.Table, names: list[str]):
        self.names = names
        c = consumed
        c_seg = codes_in(c["segment"], names)
        c_ord = _int32(c["ordinal"])
        c_fate = codes_in(c["fate"], list(FATES)).astype(np.int8)
        c_step = _int32(c["step"])
        self._finds = []
        for k in range(len(names)):
            mine = (c_seg == k) & (c_ord >= 0) & (c_fate >= 0)
            if mine.all():  # the usual case: every consumption row one of this segment's, with an ordinal and fate
                self._finds.append(_latest(c_ord, c_fate, c_step))
            else:
                self._finds.append(_latest(c_ord[mine], c_fate[mine], c_step[mine]))

    def rows(self, o: pa.Table, logged: set[str], files: RunFiles) -> pa.Table:
        """Each TRL row of `o` (its `segment`: a number in `names`; its `ordinal`): its fate (the consumption
        table's row; else "in-queue" past what the trainer took or while its log is open, else "unknown") and the
        step it was trained at."""
        if not o.num_rows:
            return pa.table({"fate": pa.array([], pa.string()), "step": pa.array([], pa.int32())})
        seg = o["segment"].to_numpy()
        ordinal = _int32(o["ordinal"])
        code = np.full(len(ordinal), -1, np.int8)
        step = np.full(len(ordinal), -1, np.int32)
        one = len(self.names) == 1  # the usual case: every row of one segment, no index arrays needed
        for k, name in enumerate(self.names):
            here = slice(None) if one else np.flatnonzero(seg == k)
            mine_ord = ordinal[here]
            part, step[here] = self._finds[k](mine_ord)
            unfated = part < 0
            if name in files.ends:  # past what the trainer took: in the queue; before it and without a fate: unknown
                part[unfated & (mine_ord >= files.ends[name])] = FATES.index("in-queue")
                part[unfated & (mine_ord < files.ends[name])] = FATES.index("unknown")
            else:
                part[unfated] = FATES.index("in-queue" if name in logged else "unknown")
            code[here] = part
        code[code < 0] = FATES.index("unknown")
        fate = pa.DictionaryArray.from_arrays(pa.array(code, pa.int8()), pa.array(FATES))
        trained = code == 0
        return pa.table({"fate": fate, "step": pa.array(step, mask=~trained | (step < 0))})


def _latest(at: np.ndarray, codes: np.ndarray, steps: np.ndarray) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """A lookup of the fate code and step of the last row of each ordinal (`at`, in table order) for any ordinals
    asked (-1 and -1 where none; -1 asks for none). By array index when the ordinals are about as many as the rows
    (a recorder numbers them 0, 1, 2...); else by a sorted search: one row of ordinal 2**31 in a hostile table must
    not make an array of 2**31."""
    top = int(at.max(initial=-1)) + 1
    if top <= 4 * len(at) + 2**16:
        by_code = np.full(top + 1, -1, np.int8)  # the last slot answers an ordinal it does not hold
        by_step = np.full(top + 1, -1, np.int32)
        by_code[at] = codes  # in table order: a later row of the same ordinal wins
        by_step[at] = steps

        def by_index(asked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            i = np.where((asked >= 0) & (asked < top), asked, top)
            return by_code[i], by_step[i]
        return by_index
    order = np.argsort(at, kind="stable")  # rows of one ordinal in table order: the last of each run wins
    ordered = at[order]
    last = order[np.r_[ordered[1:] != ordered[:-1], True]]
    keys, key_codes, key_steps = at[last], codes[last], steps[last]

    def by_search(asked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pos = np.minimum(np.searchsorted(keys, asked), len(keys) - 1)
        hit = (keys[pos] == asked) & (asked >= 0)
        return np.where(hit, key_codes[pos], -1).astype(np.int8), np.where(hit, key_steps[pos], -1).astype(np.int32)
    return by_search


def unrecorded(held_seg: np.ndarray, held: np.ndarray, asked_seg: np.ndarray, asked: np.ndarray) -> np.ndarray:
    """Which of the rows asked for (a segment's number and an ordinal each; -1: none) no row held has: a row of a
    segment the held rows do not name, or without an ordinal, is held by none. By array index per segment when
    the ordinals are about as many as the rows (as `_latest`), else by a sorted search."""
    out = np.ones(len(asked), dtype=bool)
    one = len(asked_seg) and bool(np.all(asked_seg == asked_seg[0])) and bool(np.all(held_seg == asked_seg[0]))
    # the segments asked for: a run's few, numbered from 0
    segments = ([int(asked_seg[0])] if asked_seg[0] >= 0 else []) if one else \
        np.flatnonzero(np.bincount(asked_seg[asked_seg >= 0].astype(np.int64))).tolist()
    for k in segments:
        here = slice(None) if one else asked_seg == k
        mine = held if one else held[held_seg == k]
        mine = mine[mine >= 0]
        want = asked[here]
        top = int(max(mine.max(initial=-1), want.max(initial=-1))) + 1
        if top <= 4 * (len(mine) + len(want)) + 2**16:
            has = np.zeros(top + 1, dtype=bool)  # the last slot answers a missing ordinal (-1): held by none
            has[mine] = True
            out[here] = ~has[want]
        else:
            out[here] = ~(np.isin(want, mine) & (want >= 0))
    return out


def ordinals_of(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A column of ordinals as 64-bit numbers, a null and anything below -1 as -1."""
    x = filled(col, -1).astype(np.int64, copy=False)
    return np.maximum(x, -1) if len(x) and x.min() < -1 else x


def _int32(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A column of ordinals or steps as 32-bit numbers, a null and anything below -1 as -1 and anything past 32 bits
    as the largest (no such row exists in a run that fits one machine)."""
    x = ordinals_of(col)
    return (np.minimum(x, 2**31 - 1) if len(x) and x.max() > 2**31 - 1 else x).astype(np.int32)


DROPPED = (*FATES, "failed", "no rows")  # why a rollout's rows were never trained (FATES, or it has none)


def rollout_fates(n: int, o: pa.Table, rf: pa.Table, status: pa.ChunkedArray) -> pa.Table:
    """Per rollout, from its rows' fates: its first trained step, its trained rows' tokens, and why none of them
    was trained (its first row's fate; "failed" or "no rows" when it has none), in numpy over fate codes. A
    rollout's rows lie side by side in `o` (`entry`: the rollout's number among the `n`, as a shard lists its rollouts'
    rows, rollout by rollout, in queue order), so each is added up over its own run of rows (`reduceat`), without a
    scatter over a million rollouts."""
    entry = o["entry"].to_numpy() if o.num_rows else np.zeros(0, np.int32)
    codes = rf["fate"].combine_chunks().indices.to_numpy(zero_copy_only=False) if o.num_rows else np.zeros(0, np.int8)
    tokens = filled(o["trained_tokens"], 0) if o.num_rows else np.zeros(0, np.int64)
    steps = pc.fill_null(rf["step"], -1).to_numpy().astype(np.int64) if o.num_rows else np.zeros(0, np.int64)
    took = codes == 0
    firsts = np.flatnonzero(np.r_[True, entry[1:] != entry[:-1]]) if len(entry) else np.zeros(0, np.int64)
    rollouts = entry[firsts]  # each rollout with rows, once
    trained = np.zeros(n, dtype=bool)
    trainer_tokens = np.zeros(n, dtype=np.int64)
    never = np.iinfo(np.int64).max
    first_step = np.full(n, never, dtype=np.int64)
    if len(entry):
        trained[rollouts] = np.logical_or.reduceat(took, firsts)
        trainer_tokens[rollouts] = np.add.reduceat(np.where(took, tokens, 0), firsts)
        first_step[rollouts] = np.minimum.reduceat(np.where(took & (steps >= 0), steps, never), firsts)
    trained_step = pa.array(first_step, mask=first_step == never)
    failed = codes_in(status, ["failed"]) == 0  # through the status dictionary: no million strings made
    # one byte per rollout throughout: these are a million rollouts' worth each
    why = np.where(failed, np.int8(DROPPED.index("failed")), np.int8(DROPPED.index("no rows")))
    why[rollouts] = codes[firsts]  # each rollout's first row: its fate stands for all when none was trained
    dropped = pa.DictionaryArray.from_arrays(pa.array(why, pa.int8(), mask=trained), pa.array(DROPPED))
    return pa.table({"trained_step": trained_step, "trainer_tokens": pa.array(trainer_tokens), "dropped": dropped})
