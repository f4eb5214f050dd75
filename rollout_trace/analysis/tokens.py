"""From token ids to the text a person reads, one token at a time.

A display table is built once per vocabulary (each id's raw bytes, whether those bytes are valid
UTF-8 alone, whether the id is special), then indexed with numpy: 1M ids in a few hundredths of a
second, where per-token `batch_decode` takes seconds. A character split across tokens (an emoji in
byte-level BPE) decodes to U+FFFD token by token, so such runs are merged through their bytes and
shown on their first token. Whitespace is made visible by `make_visible`, so a newline or a leading
space is a mark a reader can see, and special tokens are flagged so the UI can set them apart.

The tokenizer is found offline first: files inside the artifact, then the model's files in the
local Hugging Face cache, then a path the user gives. Without one, ids are shown as ids, with why.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from rollout_trace.artifact.bounded import Bounded

# Token kinds, as stored per token.
NORMAL, SPECIAL, JOINED, UNKNOWN = 0, 1, 2, 3
# The display table has one entry per id up to the highest, so its size is bounded twice: ids below
# MAX_VOCAB_IDS (4x the largest vocabularies in use, Gemma 3's 262,144), and at least MIN_FILL of them
# holding a token. A tokenizer beyond either is refused with a message and ids are shown as ids: one id
# of 30,000,000 in an 8 KB tokenizer.json once built a 30M-entry table (+515 MB kept).
MAX_VOCAB_IDS = 1 << 20
MIN_FILL = 0.5


@dataclass(frozen=True)
class Vocab:
    origin: str  # where the tokenizer came from, shown to the user
    text: np.ndarray  # object array: display text per id
    raw: list[bytes]  # raw bytes per id
    whole: np.ndarray  # bool: this id's bytes are valid UTF-8 on their own
    special: np.ndarray  # bool
    nbytes: int = 0  # what the table costs in memory (the rollout store counts it)

    @property
    def size(self) -> int:
        return len(self.raw)

    def decode(self, ids) -> str:
        """Plain text of a run of ids (ids outside the vocabulary shown as <id N>)."""
        return b"".join(self.raw[i] if 0 <= i < self.size else f"<id {i}>".encode() for i in np.asarray(ids).tolist()
                        ).decode("utf-8", "replace")


@dataclass(frozen=True)
class TokenTexts:
    text: np.ndarray  # object array, one display string per token ("" for JOINED continuations)
    kind: np.ndarray  # int8: NORMAL, SPECIAL, JOINED, UNKNOWN


@lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """GPT-2's printable-character alphabet for bytes, inverted (byte-level BPE pieces -> bytes)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs, strict=False)}


def _decoder_kinds(spec: dict | None) -> set[str]:
    if not spec:
        return set()
    kinds = {spec.get("type", "")}
    for sub in spec.get("decoders") or []:
        kinds |= _decoder_kinds(sub)
    return kinds


def _piece_bytes(piece: str, kinds: set[str]) -> bytes:
    if "ByteLevel" in kinds:
        table = _byte_decoder()
        if all(ch in table for ch in piece):
            return bytes(table[ch] for ch in piece)
        return piece.encode()
    if "ByteFallback" in kinds and len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
        return bytes([int(piece[3:5], 16)])
    if kinds & {"Metaspace", "Replace"}:
        return piece.replace("▁", " ").encode()
    if "WordPiece" in kinds:
        return piece[2:].encode() if piece.startswith("##") else (" " + piece).encode()
    return piece.encode()


def vocab_from_tokenizer(tok, origin: str) -> Vocab:
    """Build the display table from a `tokenizers.Tokenizer` (or a transformers fast tokenizer)."""
    tok = getattr(tok, "backend_tokenizer", tok)
    pieces = tok.get_vocab(with_added_tokens=True)
    added = tok.get_added_tokens_decoder()
    size = max(pieces.values(), default=-1) + 1
    check_vocab_size(size, len(pieces))  # first: even `to_str` allocates per id up to the highest
    kinds = _decoder_kinds(json.loads(tok.to_str()).get("decoder"))
    raw = [b""] * size
    special = np.zeros(size, dtype=bool)
    for piece, i in pieces.items():
        if i in added:
            raw[i] = added[i].content.encode()
            special[i] = bool(added[i].special)
        else:
            raw[i] = _piece_bytes(piece, kinds)
    text = np.empty(size, dtype=object)
    whole = np.zeros(size, dtype=bool)
    for i, b in enumerate(raw):
        try:
            text[i] = b.decode("utf-8")
            whole[i] = True
        except UnicodeDecodeError:
            text[i] = b.decode("utf-8", "replace")
    return Vocab(origin, text, raw, whole, special, _table_bytes(raw, text) + whole.nbytes + special.nbytes)


def check_vocab_size(size: int, entries: int) -> None:
    """Refuse a display table that would be larger than the tokenizer: ValueError naming the numbers."""
    if size > MAX_VOCAB_IDS or size > max(entries, 1) / MIN_FILL + 1024:
        raise ValueError(f"the vocabulary is too large or too sparse to show as text: its highest id is {size - 1:,} "
                         f"for {entries:,} tokens (expected ids below {MAX_VOCAB_IDS:,}, at least "
                         f"{MIN_FILL:.0%} of them used)")


def _table_bytes(raw: list[bytes], text: np.ndarray) -> int:
    """The table's memory: the two pointer arrays and each distinct bytes and str object (ids without a
    token share one empty object)."""
    seen: set[int] = set()
    total = 8 * (len(raw) + text.size)
    for obj in (*raw, *text.tolist()):
        if id(obj) not in seen:
            seen.add(id(obj))
            total += sys.getsizeof(obj)
    return total


def _tokenizer_file(folder: Path) -> Path | None:
    f = folder / "tokenizer.json"
    return f if f.is_file() else None


def _load_tokenizer(path: Path):
    from tokenizers import Tokenizer

    if path.is_file():
        return Tokenizer.from_file(str(path))
    if (f := _tokenizer_file(path)) is not None:
        return Tokenizer.from_file(str(f))
    from transformers import AutoTokenizer  # slow tokenizer files only: let transformers convert them

    # data only: an artifact's (or any) tokenizer folder never runs its own code, nor asks whether to
    return AutoTokenizer.from_pretrained(str(path), local_files_only=True, trust_remote_code=False).backend_tokenizer


# A run's rollouts share one tokenizer, and its display table takes ~0.5 s to build: built once per content
_VOCABS: Bounded[tuple[str, str], Vocab] = Bounded(4)
_DIGESTS: Bounded[tuple[str, int, int, int], str] = Bounded(16)  # a tokenizer file's (path, inode, size, mtime)


def _content_key(origin: str, tokenizer_dir: Path | None, tokenizer_json: bytes | None) -> tuple[str, str] | None:
    """What identifies the artifact's own tokenizer by content (None: not the artifact's, or not one file)."""
    if not origin.startswith("the artifact's"):
        return None
    if tokenizer_dir is not None:
        f = _tokenizer_file(tokenizer_dir)
        if f is None:
            return None
        st = f.stat()
        # a run's rollouts share its tokenizer's file: read and hashed once while it stays the same file
        same = (str(f.resolve()), st.st_ino, st.st_size, st.st_mtime_ns)
        digest = _DIGESTS.get(same)
        if digest is None:
            digest = hashlib.sha256(f.read_bytes()).hexdigest()
            _DIGESTS.put(same, digest)
        return origin, digest
    if tokenizer_json is not None:
        return origin, hashlib.sha256(tokenizer_json).hexdigest()
    return None


def resolve_vocab(tokenizer_dir: Path | None, model: str | None, user_path: str | None = None,
                  tokenizer_json: bytes | None = None) -> tuple[Vocab | None, list[str]]:
    """The first tokenizer found (artifact files or the artifact's tokenizer.json held in memory, local
    HF cache for `model`, `user_path`) and why others failed."""
    why: list[str] = []
    candidates: list[tuple[str, Callable[[], object]]] = []
    if tokenizer_dir is not None:
        candidates.append((f"the artifact's {tokenizer_dir.name}/ files", lambda: _load_tokenizer(tokenizer_dir)))
    elif tokenizer_json is not None:  # an unpacked upload, deleted after loading: its tokenizer was kept
        def from_memory():
            from tokenizers import Tokenizer

            return Tokenizer.from_str(tokenizer_json.decode("utf-8"))
        candidates.append(("the artifact's tokenizer/ files", from_memory))
    else:
        why.append("the artifact carries no tokenizer files")
    if model:
        def from_cache():
            from huggingface_hub import try_to_load_from_cache

            found = try_to_load_from_cache(model, "tokenizer.json")
            if not isinstance(found, str):
                raise FileNotFoundError(f"{model} is not in the local Hugging Face cache")
            return _load_tokenizer(Path(found))
        candidates.append((f"{model} from the local Hugging Face cache", from_cache))
    if user_path:
        candidates.append((user_path, lambda: _load_tokenizer(Path(user_path).expanduser())))
    for origin, load in candidates:
        try:
            key = _content_key(origin, tokenizer_dir, tokenizer_json)
            hit = _VOCABS.get(key) if key is not None else None
            if hit is None:
                hit = vocab_from_tokenizer(load(), origin)
                if key is not None:
                    _VOCABS.put(key, hit)
            return hit, why
        except Exception as e:  # a tokenizer problem must never stop the view: fall through, say why
            why.append(f"{origin}: {type(e).__name__}: {str(e)[:200]}")
    why.append("showing token ids instead of text")
    return None, why


def beyond_vocab(vocab: Vocab | None, turns, named: int = 3) -> str | None:
    """A notice naming the ids this vocabulary has no entry for (they are shown as ⟨id⟩), or None.

    Such ids are valid in the artifact (0..2**31-1) but mean the tokenizer is not the one the rollout
    was sampled with, or the engine emitted padding ids: either way the reader must be told."""
    if vocab is None:
        return None
    found: list[str] = []
    total = 0
    for t in turns:
        for name in ("prompt_ids", "output_ids"):
            ids = getattr(t, name)
            over = np.flatnonzero(ids >= vocab.size)
            if over.size:
                total += int(over.size)
                k = int(over[0])
                found.append(f"turn {t.index} {name}: {over.size} (first {int(ids[k])} at element {k})")
    if not found:
        return None
    more = f"; and {len(found) - named} more" if len(found) > named else ""
    return (f"{total} token id(s) are beyond the vocabulary of {vocab.origin} (ids 0..{vocab.size - 1}): "
            + "; ".join(found[:named]) + more + ". They are shown as ⟨id⟩; the tokenizer may not be the one "
            "this rollout was sampled with.")


def decode(vocab: Vocab | None, ids) -> str:
    """Plain text of a run of ids, or the ids themselves when there is no tokenizer."""
    if vocab is None:
        return " ".join(f"⟨{i}⟩" for i in np.asarray(ids).tolist())
    return vocab.decode(ids)


def token_texts(vocab: Vocab | None, ids: np.ndarray) -> TokenTexts:
    """Display text and kind for each id; characters split across tokens are merged onto the first."""
    ids = np.asarray(ids)
    n = ids.size
    if vocab is None:
        return TokenTexts(np.array([f"⟨{i}⟩" for i in ids.tolist()], dtype=object), np.full(n, UNKNOWN, np.int8))
    inside = (ids >= 0) & (ids < vocab.size)
    safe = np.where(inside, ids, 0)
    text = vocab.text[safe]
    kind = np.where(vocab.special[safe], SPECIAL, NORMAL).astype(np.int8)
    if not inside.all():
        for k in np.flatnonzero(~inside).tolist():
            text[k] = f"⟨{int(ids[k])}⟩"
            kind[k] = UNKNOWN
    broken = np.flatnonzero(inside & ~vocab.whole[safe] & ~vocab.special[safe])
    if broken.size:
        _merge_split_characters(vocab, ids, broken, text, kind)
    return TokenTexts(text, kind)


def _merge_split_characters(vocab: Vocab, ids: np.ndarray, broken: np.ndarray, text: np.ndarray, kind: np.ndarray) -> None:
    """Join runs of tokens that are not valid UTF-8 alone until their bytes decode."""
    k, end = 0, broken.size
    while k < end:
        start = int(broken[k])
        buf = b""
        j = k
        while j < end and int(broken[j]) == start + (j - k):
            buf += vocab.raw[int(ids[broken[j]])]
            j += 1
            try:
                merged = buf.decode("utf-8")
            except UnicodeDecodeError:
                continue
            text[start] = merged
            for pos in range(start + 1, start + (j - k)):
                text[pos] = ""
                kind[pos] = JOINED
            break
        else:
            # no prefix decodes cleanly: the bytes really are broken; each keeps its own U+FFFD text
            j = k + 1
        k = j if j > k else k + 1


_VISIBLE = str.maketrans({" ": "·", "\t": "→", "\r": "␍", "\n": "↵"})


def make_visible(text: str) -> str:
    """Whitespace as marks a reader can see (space ·, tab →, newline ↵); other text unchanged."""
    return text.translate(_VISIBLE)
