"""The display vocabulary is sized by the tokens a tokenizer has, bounded, and counted.

An 8 KB tokenizer.json holding one id of 30,000,000 once built a 30M-entry display table (+515 MB kept,
4 s), counted by the rollout store as ~4 MB, and an id of 2**31-1 would have asked for ~34 GB. Now a
table past `MAX_VOCAB_IDS` ids, or mostly empty, is refused with a message (ids are shown as ids), and a
table that is built is counted in the store's byte budget. Memory is measured as peak RSS of a fresh
process against a bound."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import EXAMPLE, ROOT, zip_folder
from rollout_trace.analysis.tokens import MAX_VOCAB_IDS, vocab_from_tokenizer


def word_level(vocab: dict[str, int]) -> dict:
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "vocab": vocab, "unk_token": next(iter(vocab))}}


def tokenizer(vocab: dict[str, int]):
    from tokenizers import Tokenizer

    return Tokenizer.from_str(json.dumps(word_level(vocab)))


@pytest.mark.parametrize("high", [30_000_000, 2**31 - 1, MAX_VOCAB_IDS])
def test_a_vocabulary_past_the_bound_is_refused_with_the_numbers(high):
    with pytest.raises(ValueError) as e:
        vocab_from_tokenizer(tokenizer({"a": 0, "b": high}), "test")
    assert str(e.value) == (f"the vocabulary is too large or too sparse to show as text: its highest id is {high:,} "
                            f"for 2 tokens (expected ids below {MAX_VOCAB_IDS:,}, at least 50% of them used)")


def test_a_sparse_vocabulary_is_refused_a_dense_one_is_built():
    with pytest.raises(ValueError, match="too sparse"):
        vocab_from_tokenizer(tokenizer({f"t{i}": 100 * i for i in range(1000)}), "test")
    v = vocab_from_tokenizer(tokenizer({f"t{i}": i for i in range(1000)} | {"<extra>": 1500}), "test")
    assert v.size == 1501 and v.text[999] == "t999" and v.text[1500] == "<extra>"


def test_the_store_counts_the_vocabulary():
    from rollout_trace.artifact import open_artifact
    from viewer.rollout import Rollout
    from viewer.ui.store import rollout_bytes

    r = Rollout.load(open_artifact(EXAMPLE))
    assert r.vocab is not None and r.vocab.size == 49152
    assert 2 * 1024**2 < r.vocab.nbytes < 20 * 1024**2  # SmolLM2's 49,152 tokens: about 5 MB
    bare = Rollout(r.artifact, None)
    assert rollout_bytes(r) == rollout_bytes(bare) + r.vocab.nbytes
    # the estimate is the memory really held: build a 200k-token table and measure it, in a fresh process (in
    # this one, other tests' servers and threads move the resident size as much as the table does)
    r = subprocess.run([sys.executable, "-c", VOCAB_CHILD], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    nbytes, grown = json.loads(r.stdout.strip().splitlines()[-1])
    assert 0.5 * grown < nbytes < 2 * grown + 4 * 1024**2, (nbytes, grown)


VOCAB_CHILD = textwrap.dedent("""
    import gc, json
    import psutil
    from tokenizers import Tokenizer
    from rollout_trace.analysis.tokens import vocab_from_tokenizer

    vocab = {f"token-{i:07d}": i for i in range(200_000)}
    spec = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "token-0000000"}}
    tok = Tokenizer.from_str(json.dumps(spec))  # the tokenizer is held before and after: not the table's
    del vocab, spec
    gc.collect()
    before = psutil.Process().memory_info().rss
    big = vocab_from_tokenizer(tok, "test")
    gc.collect()
    print(json.dumps([big.nbytes, psutil.Process().memory_info().rss - before]))
""")


UPLOAD_CHILD = textwrap.dedent("""
    import json, resource, sys
    from viewer.ui.service import Service
    from viewer.ui.view_tab import ViewTab

    tab = ViewTab(Service("scripted-smollm2", public=True))
    tab.service.values.open_upload([sys.argv[1]])  # a first upload: what every later one is measured against
    peak0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    value, _, _ = tab.service.values.open_upload([sys.argv[2]])
    peak1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"grew_kb": peak1 - peak0, "value": value, "counted": tab.service.store.loaded_bytes()}))
""")


def upload_with_id(tmp_path: Path, high: int, name: str) -> Path:
    d = tmp_path / name
    shutil.copytree(EXAMPLE, d, ignore=shutil.ignore_patterns("rescore"))
    (d / "tokenizer" / "tokenizer.json").write_text(json.dumps(word_level({"a": 0, "b": high})))
    return zip_folder(d, tmp_path / f"{name}.zip")


@pytest.mark.parametrize("high", [30_000_000, 2**31 - 1])
def test_an_upload_with_a_huge_id_costs_no_memory(tmp_path, high):
    small = upload_with_id(tmp_path, 1, "small")
    huge = upload_with_id(tmp_path, high, "huge")
    assert huge.stat().st_size < 600_000
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    r = subprocess.run([sys.executable, "-c", UPLOAD_CHILD, str(small), str(huge)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["grew_kb"] < 64 * 1024, got["grew_kb"]  # peak RSS: under 64 MB more than the small upload
    header = json.loads(got["value"])["outline"]["header"]
    assert any(f"its highest id is {high:,} for 2 tokens" in n for n in header["no_tokenizer"] + header["notices"])  # the visitor is told why ids show as ids
