"""What TRL trains on this rollout: which calls are its turns, which tokens get a loss, the rows.

Computed by TRL's and OpenEnv's own functions, in the order TRL 1.16's async GRPO calls them in
loop-owning mode (`harness_adapter=None`, the opencode example; `openenv_harness._run_session`):
OpenEnv's validated training trace over the capture proxy's trace entries (`TrainingTrace.from_entries`;
trace.json holds exactly those entries), one `TurnRecord` per call whose completion mask is OpenEnv's
`loss_mask` over the sampled tokens (`_turns_from_training_trace`), then the rows
(`_chain_to_sequences(turns, rollout_id, 0)`). We call the three and describe what they return; no
rule of TRL's is restated here.

Measured on examples/scripted-smollm2 (TRL 1.16.0, openenv 0.10.0): four calls, opencode's title
call with an all-zero mask, then two rows training 70 and 68 tokens: turn 0's 70, and turn 1's 51 with
turn 2's 17. Turn 2 made no tool call and is trained all the same. The original capture script (and
turns.json's `trained`, `Turn.seed_trained`) marks a turn trained only when it made a tool call, an
older rule of the training example; that flag is kept as written and `disagreements` says where TRL
trains otherwise.

Which data the three functions get (`Basis`):
- "trace": trace.json, when every call has the engine's prompt ids and OpenEnv's loss_mask (openenv's
  capture proxy). What TRL 1.16 would train.
- "turns": no trace.json, but every turn has the engine's prompt ids, its mask being the proxy's
  loss_mask (our capture writes it so): the same three calls over turns.json's turns.
- "seed": the older in-sandbox proxy recorded neither, so TRL 1.16's loop-owning trainer cannot build
  a training trace from the capture at all. Shown instead: TRL's row packing of the rule the capture
  script applied, a turn's generated tokens trained when it made a tool call.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np

from rollout_trace.artifact import Artifact, TraceCall, Turn
from rollout_trace.artifact.schema import TrlTraining

Basis = Literal["trace", "turns", "seed"]
LOOP_OWNING_FORK_THRESHOLD = 0  # TRL's loop-owning harness worker passes fork_threshold_tokens=0
ROLLOUT_ID = "rollout"  # TRL's rows carry the rollout id; ours is only a label
MAX_ERROR = 400  # characters of a refusal message shown (pydantic lists every field)


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


TRL_VERSION = _version("trl")
OPENENV_VERSION = _version("openenv")
TRL = f"TRL {TRL_VERSION}"  # how the page names the behaviour it shows


def own_torch_cache() -> None:
    """Point torch's compile cache into a temporary folder of ours before torch is imported, unless the user
    named one (TORCHINDUCTOR_CACHE_DIR, as scripts/local_model.sh does). Importing TRL imports torch._dynamo,
    whose import makes `torchinductor_<user>` in the temp folder and leaves it there for good; nothing here
    compiles, and our folder goes at exit (or at the app's next start, rollout_trace/artifact/unpack.py)."""
    if "TORCHINDUCTOR_CACHE_DIR" not in os.environ and "torch._dynamo" not in sys.modules:
        from rollout_trace.artifact.unpack import temporary_folder

        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(temporary_folder("rollout-torch-"))


def import_trl() -> tuple[Any, Any, Any, Any]:
    """TRL's and OpenEnv's functions this module calls. The import takes seconds and is not safe to run
    first in several threads at once (transformers' lazy modules): the app calls this at start-up."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    own_torch_cache()
    from openenv.core.harness import TrainingTrace
    from trl.experimental.async_grpo.async_rollout_worker import TurnRecord, _chain_to_sequences
    from trl.experimental.async_grpo.openenv_harness import _turns_from_training_trace

    return TrainingTrace, _turns_from_training_trace, TurnRecord, _chain_to_sequences


@dataclass(frozen=True)
class Row:
    """One training row as TRL builds it: a forward pass; only completion-mask tokens get a loss."""

    input_ids: np.ndarray
    completion_mask: np.ndarray
    old_log_probs: np.ndarray
    turns: tuple[int, ...]  # agent turns whose prompt + output this row contains
    trains: tuple[int, ...] = ()  # of them, the turns whose generated tokens it trains (`row_trains`)

    @property
    def n_trained(self) -> int:
        return int(self.completion_mask.sum())


@dataclass(frozen=True)
class OtherCall:
    """A call of TRL's training trace that is not an agent turn by the recipe (e.g. opencode's title call)."""

    call: int  # its index in trace.json
    output_tokens: int
    trained_tokens: int


@dataclass(eq=False)
class Training:
    basis: Basis
    # Per agent turn, TRL's completion mask over its generated tokens (int8; all zero when TRL trains none).
    masks: tuple[np.ndarray, ...]
    seed_flags: tuple[bool, ...]  # turns.json's `trained`: the original capture script's rule
    # TRL's rows, its tally and its refusal message; a function, so a rollout that only needs the masks
    # (the outline of a 100 MB seed artifact) never pays for the packing
    packing: Callable[[], tuple[list[Row], dict[str, float], str | None]] = lambda: ([], {}, None)
    other_calls: tuple[OtherCall, ...] = ()
    missing: tuple[int, ...] = ()  # agent turns TRL's training trace does not hold
    error: str | None = None  # TRL or OpenEnv refused the rollout (their message): nothing is trained

    @cached_property
    def _packed(self) -> tuple[list[Row], dict[str, float], str | None]:
        return self.packing()

    @property
    def rows(self) -> list[Row]:
        return self._packed[0]

    @property
    def tally(self) -> dict[str, float]:
        """TRL's: clean, realign, fork, transitions, drift_tokens, drift_max."""
        return self._packed[1]

    @property
    def rows_error(self) -> str | None:
        """TRL's _chain_to_sequences refused the turns (the seed rule's rows only; else see `error`)."""
        return self._packed[2]

    def trained_tokens(self, turn: int) -> int:
        return int(self.masks[turn].sum())

    def trained(self, turn: int) -> bool:
        return self.trained_tokens(turn) > 0

    @property
    def trained_turns(self) -> int:
        return sum(self.trained(i) for i in range(len(self.masks)))

    @property
    def total_trained_tokens(self) -> int:
        return sum(int(m.sum()) for m in self.masks) + sum(c.trained_tokens for c in self.other_calls)

    @property
    def disagreements(self) -> tuple[int, ...]:
        """Agent turns where the capture script's flag and what TRL trains part ways."""
        if self.basis == "seed" or self.error:
            return ()
        return tuple(i for i, flag in enumerate(self.seed_flags) if flag != self.trained(i))

    @property
    def by(self) -> str:
        """Who decides, in the words a headline uses ("3 of 3 agent turns trained by ...")."""
        return "the capture script's rule" if self.basis == "seed" and not self.error else TRL

    @property
    def rule(self) -> str:
        """One plain sentence: which rule decides what is trained here, and why."""
        if self.error:
            return f"{TRL} cannot train this rollout: {self.error}."
        if self.basis == "trace":
            return (f"Trained tokens are what {TRL} trains: OpenEnv's loss mask over every call of the "
                    "training trace (trace.json), packed into rows by TRL's _chain_to_sequences.")
        if self.basis == "turns":
            return (f"Trained tokens are what {TRL} trains: OpenEnv's loss mask as turns.json records it "
                    "(trace.json is not in this artifact), packed into rows by TRL's _chain_to_sequences.")
        return (f"This capture has no engine prompt ids or loss mask (the older in-sandbox proxy), so {TRL}'s "
                "loop-owning trainer cannot build a training trace from it. Shown instead: the rule of the script "
                "that captured it (a turn is trained when it made a tool call), packed into rows by TRL's "
                "_chain_to_sequences.")


def record(t: Training) -> TrlTraining:
    """What a capture writes into summary.json (`trl_training`), versioned."""
    return TrlTraining(trl=TRL_VERSION, openenv=OPENENV_VERSION, basis=t.basis, trained_turns=t.trained_turns,
                       trained_tokens=t.total_trained_tokens, rows=len(t.rows), error=t.error)


def basis_of(a: Artifact) -> Basis:
    if a.trace is not None and all(c.dialect == "openenv" for c in a.trace):
        return "trace"
    if a.trace is None and a.turns and all(t.prompt_source == "engine" for t in a.turns):
        return "turns"
    return "seed"


def _listed(x: np.ndarray | None) -> list | None:
    return None if x is None else x.tolist()


def _entry(c: TraceCall) -> dict[str, Any]:
    """The fields of a trace.json entry that OpenEnv's TrainingTrace reads, as the proxy wrote them."""
    return {"prompt_token_ids": _listed(c.engine_prompt_ids), "completion_token_ids": _listed(c.completion_ids),
            "per_token_logps": _listed(c.logprobs), "loss_mask": _listed(c.loss_mask), "metadata": c.metadata}


def _turn_entry(t: Turn) -> dict[str, Any]:
    return {"prompt_token_ids": t.prompt_ids.tolist(), "completion_token_ids": t.output_ids.tolist(),
            "per_token_logps": t.logprobs.tolist(), "loss_mask": t.mask.tolist(),
            "metadata": {"node_id": f"turn-{t.index}"}}


def _refusal(e: Exception) -> str:
    msg = " ".join(str(e).split()) or type(e).__name__
    return msg if len(msg) <= MAX_ERROR else msg[: MAX_ERROR - 1] + "…"


def _contains(row_ids: np.ndarray, t: Turn) -> bool:
    n = t.n_prompt + t.n_output
    return (row_ids.size >= n and np.array_equal(row_ids[: t.n_prompt], t.prompt_ids)
            and np.array_equal(row_ids[t.n_prompt:n], t.output_ids))


def row_trains(input_ids: np.ndarray, completion_mask: np.ndarray, turns: Sequence[Turn]) -> tuple[int, ...]:
    """The agent turns whose generated tokens one training row trains: the row begins with the turn's prompt and
    output (a row grows by appending turns, so each turn it holds is a prefix of it) and its completion mask is 1
    on one of the output's tokens. A turn that is only context of the row (an earlier turn carried into a forked
    row's prompt) or that no mask trains belongs to no row; the fate of a row is the fate of the turns it trains."""
    return tuple(t.index for t in turns if _contains(input_ids, t)
                 and bool(np.any(completion_mask[t.n_prompt:t.n_prompt + t.n_output])))


def queued_rows_train(a: Artifact) -> list[tuple[int, ...]] | None:
    """The agent turns each row TRL queued for a recorded run's rollout trains (its trl/ part, in queue order,
    `row_trains`); None when the artifact has no trl part."""
    if a.trl is None:
        return None
    return [row_trains(ids, mask, a.turns) for ids, mask, _ in (a.trl.row(i) for i in range(a.trl.n_rows))]


def _rows(seqs: list, turns: list[Turn]) -> list[Row]:
    rows = []
    for s in seqs:
        ids = np.asarray(s.input_ids, dtype=np.int32)
        mask = np.asarray(s.completion_mask, dtype=np.int8)
        rows.append(Row(ids, mask, np.asarray(s.old_log_probs, dtype=np.float64),
                        tuple(t.index for t in turns if _contains(ids, t)), row_trains(ids, mask, turns)))
    return rows


def _empty(turns: list[Turn]) -> tuple[np.ndarray, ...]:
    return tuple(np.zeros(t.n_output, np.int8) for t in turns)


def _generated(output: np.ndarray | None, t: Turn) -> bool:
    return output is not None and np.array_equal(output, t.output_ids)


def _pair(turns: list[Turn], outputs: list[np.ndarray | None]) -> dict[int, int]:
    """Each agent turn's call of the trace: the next one that generated exactly its tokens. The masks are
    over generated tokens; a seed-style turns.json may hold a re-rendered prompt beside engine ids."""
    of_turn: dict[int, int] = {}
    after = 0
    for t in turns:
        k = next((k for k in range(after, len(outputs)) if _generated(outputs[k], t)), None)
        if k is not None:
            of_turn[t.index], after = k, k + 1
    return of_turn


def _seed_rule(turns: list[Turn], flags: tuple[bool, ...]) -> Training:
    masks = tuple((t.mask[t.n_prompt:] * int(t.seed_trained)).astype(np.int8) for t in turns)

    def packing() -> tuple[list[Row], dict[str, float], str | None]:
        _, _, TurnRecord, chain = import_trl()
        records = [TurnRecord(t.prompt_ids.tolist(), t.output_ids.tolist(), t.logprobs.tolist(), m.tolist())
                   for t, m in zip(turns, masks, strict=True)]
        try:
            seqs, tally = chain(records, ROLLOUT_ID, LOOP_OWNING_FORK_THRESHOLD)
        except (ValueError, TypeError, KeyError, AssertionError) as e:
            return [], {}, f"TRL's _chain_to_sequences refuses its turns ({_refusal(e)})"
        return _rows(seqs, turns), dict(tally), None

    return Training("seed", masks, flags, packing)


def training(a: Artifact, validated: Any = None) -> Training:
    """What TRL trains on the artifact (the module docstring says which data TRL is given).

    `validated`: OpenEnv's TrainingTrace already built from exactly the entries trace.json holds (the recorder
    has the one TRL trained on), so it is not validated a second time."""
    turns, basis = a.turns, basis_of(a)
    flags = tuple(t.seed_trained for t in turns)
    if basis == "seed":
        return _seed_rule(turns, flags)
    TrainingTrace, turns_from_trace, _, chain = import_trl()
    outputs: list[np.ndarray | None]
    entries: list[dict[str, Any]] = []
    if basis == "trace":
        assert a.trace is not None
        entries = [_entry(c) for c in a.trace] if validated is None else []
        outputs = [c.completion_ids for c in a.trace]
    else:
        entries = [_turn_entry(t) for t in turns]
        outputs = [t.output_ids for t in turns]
        validated = None
    try:
        records = turns_from_trace(validated if validated is not None else TrainingTrace.from_entries(entries))
        seqs, tally = chain(records, ROLLOUT_ID, LOOP_OWNING_FORK_THRESHOLD)
    except (ValueError, TypeError, KeyError, AssertionError) as e:  # pydantic's ValidationError is a ValueError
        why = (f"OpenEnv's training trace or TRL's _chain_to_sequences refuses it ({_refusal(e)}); in a training "
               "run this stops the rollout worker (CaptureContractError)")
        return Training(basis, _empty(turns), flags, error=why)
    del entries
    of_turn = _pair(turns, outputs)
    masks = tuple(np.asarray(records[of_turn[t.index]].output_mask, dtype=np.int8) if t.index in of_turn
                  else np.zeros(t.n_output, np.int8) for t in turns)
    used = set(of_turn.values())
    others = tuple(OtherCall(k, len(r.output_ids), int(sum(r.output_mask))) for k, r in enumerate(records) if k not in used)
    missing = tuple(t.index for t in turns if t.index not in of_turn)
    packed = (_rows(seqs, turns), dict(tally), None)
    return Training(basis, masks, flags, lambda: packed, others, missing)
