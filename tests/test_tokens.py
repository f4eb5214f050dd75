"""Token ids to display text with a real byte-level BPE tokenizer (SmolLM2's)."""

from __future__ import annotations

import shutil

import numpy as np

from rollout_trace.analysis.tokens import JOINED, NORMAL, SPECIAL, UNKNOWN, make_visible, resolve_vocab, token_texts
from rollout_trace.artifact import open_artifact

TEXT = "def f(x):\n\treturn x  # é → 😀😀 naïve 中文<|im_end|>"


def test_display_text_joins_split_characters(hf_tokenizer, vocab):
    ids = np.asarray(hf_tokenizer.encode(TEXT, add_special_tokens=False))
    tt = token_texts(vocab, ids)
    assert "".join(tt.text.tolist()) == TEXT
    assert not any("\ufffd" in t for t in tt.text.tolist())
    assert (tt.kind == JOINED).any()  # the emoji and CJK are split across byte tokens here
    for k in np.flatnonzero(tt.kind == JOINED):
        assert tt.text[k] == "" and tt.kind[k - 1] in (NORMAL, JOINED)
    assert tt.kind[-1] == SPECIAL and tt.text[-1] == "<|im_end|>"


def test_broken_bytes_stay_visible_as_replacement(vocab, hf_tokenizer):
    emoji = hf_tokenizer.encode("😀", add_special_tokens=False)
    assert len(emoji) > 1
    tt = token_texts(vocab, np.asarray(emoji[:1] + hf_tokenizer.encode(" ok", add_special_tokens=False)))
    assert "\ufffd" in tt.text[0] and tt.text[1] == " ok"


def test_ids_outside_vocab_and_no_tokenizer(vocab):
    tt = token_texts(vocab, np.asarray([5, vocab.size + 3]))
    assert tt.kind[1] == UNKNOWN and tt.text[1] == f"⟨{vocab.size + 3}⟩"
    tt = token_texts(None, np.asarray([1, 2]))
    assert tt.text.tolist() == ["⟨1⟩", "⟨2⟩"] and (tt.kind == UNKNOWN).all()


def test_whitespace_made_visible():
    assert make_visible(" a\tb\nc") == "·a→b↵c"


def test_tokenizer_resolution_order(tmp_path):
    a = open_artifact("scripted-smollm2")
    v, why = resolve_vocab(a.tokenizer_dir, a.summary.model)
    assert v is not None and v.origin == "the artifact's tokenizer/ files" and why == []
    # no files in the artifact, model not cached (HF cache is empty offline): a user path still works
    v, why = resolve_vocab(None, "nobody/not-cached", str(a.tokenizer_dir))
    assert v is not None and v.origin == str(a.tokenizer_dir)
    assert any("not-cached" in w for w in why)


def test_no_tokenizer_says_why_and_does_not_crash(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{broken")
    v, why = resolve_vocab(tmp_path, None, str(tmp_path / "missing"))
    assert v is None
    assert why[-1] == "showing token ids instead of text" and len(why) == 3


def test_ids_beyond_the_vocabulary_get_a_notice(example_copy):
    """Ids the tokenizer has no entry for were shown as ⟨id⟩ without any notice."""
    from conftest import edit_json
    from viewer.render.outline import outline
    from viewer.rollout import Rollout

    assert Rollout.load(open_artifact(example_copy)).artifact.notices == open_artifact(example_copy).notices
    shutil.rmtree(example_copy / "rescore")  # its scoring model's vocabulary rightly refuses id 60000
    edit_json(example_copy / "turns.json", lambda d: d["turns"][2]["output_ids"].__setitem__(1, 60000))
    a = open_artifact(example_copy)
    r = Rollout.load(a)
    [notice] = [n for n in r.artifact.notices if "beyond the vocabulary" in n]
    assert "turn 2 output_ids: 1 (first 60000 at element 1)" in notice and "ids 0..49151" in notice
    assert notice in outline(r).header.notices
    assert a.notices == open_artifact(example_copy).notices  # the shared artifact is not changed


def test_the_rollouts_of_a_run_share_one_display_table(tmp_path, monkeypatch):
    """A run's rollouts carry one tokenizer: its display table is built once however many of them open (it took
    ~0.5 s a rollout, ~38 s for a group map of 64), and a tokenizer with other contents gets its own."""
    from rollout_trace.analysis import tokens
    from rollout_trace.artifact.run import open_run

    built = []
    real = tokens.vocab_from_tokenizer
    monkeypatch.setattr(tokens, "vocab_from_tokenizer", lambda tok, origin: built.append(origin) or real(tok, origin))
    monkeypatch.setattr(tokens, "_VOCABS", tokens.Bounded(4))
    run = open_run("trl-run")
    paths = [r.path for r in run.rows if r.path is not None][:3]
    vocabs = [resolve_vocab(run.open(p).tokenizer_dir, None)[0] for p in paths]
    assert len(built) == 1 and vocabs[0] is vocabs[1] is vocabs[2]
    other = tmp_path / "tok"
    shutil.copytree(open_artifact("scripted-smollm2").tokenizer_dir, other)
    (other / "tokenizer.json").write_text((other / "tokenizer.json").read_text().replace('"<|im_end|>"', '"<|im_END|>"'))
    v, _ = resolve_vocab(other, None)
    assert len(built) == 2 and v is not vocabs[0]
    # the file's digest is made once while it stays the same file; rewritten, its contents are hashed again
    hashed = []
    real_sha = tokens.hashlib.sha256
    monkeypatch.setattr(tokens.hashlib, "sha256", lambda data=b"": hashed.append(len(data)) or real_sha(data))
    assert resolve_vocab(other, None)[0] is v and resolve_vocab(run.open(paths[0]).tokenizer_dir, None)[0] is vocabs[0]
    assert hashed == []
    (other / "tokenizer.json").write_text((other / "tokenizer.json").read_text().replace('"<|im_END|>"', '"<|IM_end|>"'))
    again, _ = resolve_vocab(other, None)
    assert len(hashed) == 1 and len(built) == 3 and again is not v
