"""Write a synthetic recorded run of any size through the recorder's own writer, from the bundled run's rollouts.

    .venv/bin/python bench/make_run.py OUT --versions 2000 --groups 8 --k 64    # 1,024,000 rollouts

Every rollout is a real one: a row of examples/trl-run (its files, token ids, logprobs, masks, text pieces,
findings and rewards as recorded), placed at its synthetic version, group and index (its names and TRL's row
ordinals renumbered, its advantage TRL's z-score within its synthetic group; its files still name the bundled
rollout's place, so `viewer check` of a synthetic run names each rollout's files as another's). Which bundled
rollouts a version's groups hold is drawn around a reward that rises and falls over the versions, so curves have
a shape while a rollout's reward in the run's table stays the one its own summary and held-out tests give (the
group map and the token view agree). The rows are written a group at a time by rollout_trace/artifact/run_shards.py's RolloutWriter
into the segment's tail and sealed into Parquet shards, as the recorder writes. The consumption table gives each
row a fate: trained at a step for most versions, the newest versions' rows read ahead or still in the queue. The
bundled rollouts whose text holds a word no other bundled rollout's text holds (`rare_word`: "expected", in the
answers that finish the task) are drawn about once per `--rare-every` rollouts (0: never), so that word is rare in
the run (what a search benchmark looks for); every other rollout is one of the rest.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SEGMENT = "20270101T000000Z-bench0"


def templates() -> pa.Table:
    """Every rollout of the bundled run with an artifact, every column."""
    from rollout_trace.artifact.run import open_run
    from rollout_trace.artifact.run_schema import ROLLOUTS

    run = open_run("trl-run")
    t = run.table
    rows = np.flatnonzero(pc.is_valid(t.column("path")).to_numpy(zero_copy_only=False))
    return t.rows_of(rows, ROLLOUTS.names)


def rare_word(base: pa.Table) -> tuple[str, np.ndarray]:
    """A word (4+ letters) the text of some bundled rollouts holds and no other's holds, even inside a longer word
    (a search matches a substring, in any case), and which rollouts hold it: the fewest that have such a word.
    Many bundled rollouts share one text (a replay), so the rare part of the run is a text, never a single row."""
    texts = ["\n".join(x or ()).lower() for x in base["text"].to_pylist()]
    best: tuple[str, np.ndarray] | None = None
    for text in sorted(set(texts)):
        others = [o for o in set(texts) if o != text]
        words = sorted(w for w in set(re.findall(r"[a-z]{4,}", text)) if not any(w in o for o in others))
        rows = np.array([i for i, x in enumerate(texts) if x == text])
        if words and (best is None or len(rows) < len(best[1])):
            best = (max(words, key=len), rows)
    if best is None:
        raise SystemExit("no bundled rollout's text holds a word the others do not: nothing to make rare")
    return best


def reward_weights(rewards: np.ndarray, means: np.ndarray, spread: float = 0.4) -> np.ndarray:
    """How likely each bundled rollout (`rewards`, NaN: unscorable) is drawn for each version (`means`, the reward
    its rollouts are drawn around): a normal kernel of its reward's distance to the version's; an unscorable one as
    likely as a rollout `spread` away (a failed session happens at every version). Rows: versions; unnormalised."""
    far = np.where(np.isnan(rewards), spread, rewards[None, :] - means[:, None])
    return np.exp(-0.5 * (far / spread) ** 2)


def make(out: Path, versions: int, groups: int, k: int, rare_every: int, seed: int = 0, seal_rows: int | None = None) -> dict:
    from rollout_trace.artifact.group import grpo_advantages
    from rollout_trace.artifact.run_format import (
        CONSUMED_DIR,
        MANIFEST,
        ROLLOUTS_DIR,
        SEGMENTS_DIR,
        ConsumptionEnd,
        SegmentEnd,
        SegmentStart,
        encode_file,
    )
    from rollout_trace.artifact.run_schema import CONSUMED, ROLLOUTS
    from rollout_trace.artifact.run_shards import SEAL_ROWS, RolloutWriter, ShardWriter

    rng = np.random.default_rng(seed)
    base = templates()
    n_t = base.num_rows
    word, rare = rare_word(base)
    means = 0.3 + 0.3 * np.sin(np.linspace(0, 6, versions))  # the reward a version's rollouts are drawn around
    weights = reward_weights(np.array([np.nan if r is None else r for r in base["reward"].to_pylist()], float), means)
    weights[:, rare] = 0.0
    weights /= weights.sum(axis=1, keepdims=True)
    if out.exists():
        shutil.rmtree(out)
    for d in (SEGMENTS_DIR, ROLLOUTS_DIR, CONSUMED_DIR):
        (out / d).mkdir(parents=True)
    shutil.copytree(ROOT / "examples" / "trl-run" / "tokenizer", out / "tokenizer")
    manifest = json.loads((ROOT / "examples" / "trl-run" / MANIFEST).read_text())
    manifest["produced_by"] = (f"bench/make_run.py: {versions} versions x {groups} groups x {k} rollouts drawn from "
                               "examples/trl-run's rollouts")
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2))
    (out / SEGMENTS_DIR / f"{SEGMENT}.json").write_bytes(encode_file(SegmentStart(
        segment=SEGMENT, started_at="2027-01-01T00:00:00.000Z", dataset_start_index=0, model_version=1,
        num_generations=k)))
    rollouts = RolloutWriter(out, SEGMENT, **({"seal_rows": seal_rows} if seal_rows else {}))
    consumed = ShardWriter(out / CONSUMED_DIR, SEGMENT, CONSUMED, seal_rows=SEAL_ROWS)
    trained_until = int(versions * 0.9)  # the newest versions' rows: read ahead, or never taken
    ordinal, step, taken, t0 = 0, 0, 0, time.perf_counter()
    fate_rows: list[dict] = []
    gid = 0
    for v in range(1, versions + 1):
        for _ in range(groups):
            pick = rng.choice(n_t, size=k, p=weights[v - 1])
            if rare_every and rng.random() < k / rare_every:
                pick[0] = rare[0]
            g = base.take(pa.array(pick))
            adv = grpo_advantages(g["reward"].to_pylist())  # within its synthetic group; a null reward gets 0
            n_rows = [len(x) for x in g["row_ordinal"].to_pylist()]
            ordinals = np.split(np.arange(ordinal, ordinal + sum(n_rows)), np.cumsum(n_rows)[:-1])
            ordinal += sum(n_rows)
            name = f"groups/{SEGMENT}-v{v:06d}-g{gid:06d}"
            cols = {c: g[c] for c in ROLLOUTS.names}
            cols.update({
                "segment": pa.array([SEGMENT] * k), "policy_version": pa.array([v] * k, pa.int64()),
                "group_id": pa.array([gid] * k, pa.int64()), "rollout": pa.array(np.arange(k), pa.int64()),
                "rollout_id": pa.array([f"{gid:012x}{i:04x}{v:016x}" for i in range(k)]),
                "group": pa.array([name] * k), "path": pa.array([f"{name}/rollout-{i:02d}" for i in range(k)]),
                "advantage": pa.array(adv, pa.float64()),
                "row_ordinal": pa.array([o.tolist() for o in ordinals], pa.list_(pa.int64())),
            })
            rollouts.append(pa.table(cols, schema=ROLLOUTS))
            if v <= trained_until:
                step += 1
                fate, at = "trained", step
            else:
                fate, at = ("read-ahead" if v == trained_until + 1 else None), None
            prints = pc.list_flatten(g["row_fingerprint"]).to_pylist()
            for o, fp in zip(np.concatenate(ordinals).tolist(), prints, strict=True):
                if fate is not None:
                    fate_rows.append({"segment": SEGMENT, "ordinal": o, "fingerprint": fp, "fate": fate, "step": at,
                                      "group_id": gid, "model_version": v, "trainer_version": v,
                                      "taken_at": "2027-01-01T00:00:00.000Z"})
                    taken += 1
            if len(fate_rows) >= 65_536:
                consumed.append(pa.Table.from_pylist(fate_rows, schema=CONSUMED))
                fate_rows = []
            gid += 1
    if fate_rows:
        consumed.append(pa.Table.from_pylist(fate_rows, schema=CONSUMED))
    rollouts.close()
    consumed.close()
    (out / CONSUMED_DIR / f"{SEGMENT}.end.json").write_bytes(encode_file(ConsumptionEnd(
        segment=SEGMENT, taken=taken, global_step=step, ended_at="2027-01-02T00:00:00.000Z")))
    (out / SEGMENTS_DIR / f"{SEGMENT}.end.json").write_bytes(encode_file(SegmentEnd(
        segment=SEGMENT, ended_at="2027-01-02T00:00:00.000Z", groups_written=gid, groups_lost=0, write_errors=0,
        rollouts_never_scored=0, writer_busy_s=0.0, handoff_s=0.0, max_queued_samples=0)))
    return {"rollouts": versions * groups * k, "groups": gid, "shards": len(rollouts.sealed), "rare_word": word,
            "seconds": round(time.perf_counter() - t0, 1),
            "mb": round(sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 2**20, 1)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--versions", type=int, default=2000)
    ap.add_argument("--groups", type=int, default=8)
    ap.add_argument("--k", type=int, default=64)
    ap.add_argument("--rare-every", type=int, default=100_000, help="the rare text about once per this many rollouts")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(json.dumps(make(a.out, a.versions, a.groups, a.k, a.rare_every, a.seed)))
