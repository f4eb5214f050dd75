"""Re-score a rollout with a training model: what TRL's trainer makes of every token the engine sampled.

    artifact -> rescore.plan (TRL's training rows) -> rescore.forward (the TRL-patched model)
             -> rollout_trace.artifact.write_rescore (`rescore/<name>/`) -> rollout_trace.analysis.trainer_view (ratios, loss, stats)

`python -m viewer rescore` and `python -m capture --rescore` call `rescore()`. This package is the only
one that imports torch for the viewer; the analysis of a stored part needs only numpy.
"""

from __future__ import annotations

from .model import RescoreError
from .run import DEFAULT_TOP_K, RescoreConfig, part_name, recorded_temperature, rescore


def local_model(progress=print) -> tuple[str, str]:
    """(folder, label) of the offline SmolLM2, converted first when missing (main venv only, about a minute)."""
    import local_model as lm

    if not lm.is_converted():
        progress(f"converting the offline model into {lm.model_dir()} (once, about a minute)")
        try:
            lm.convert(progress)
        except RuntimeError as e:
            raise RescoreError(str(e)) from None
    return str(lm.model_dir()), lm.converted_from()


__all__ = ["DEFAULT_TOP_K", "RescoreConfig", "RescoreError", "local_model", "part_name", "recorded_temperature",
           "rescore"]
