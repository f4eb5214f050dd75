"""A run table's shards on disk: appending a group to a segment's open tail, sealing it into Parquet, reading both.

The writer (`ShardWriter`) is the recorder's (and `viewer convert`'s): each append is one Arrow IPC record
batch written to the segment's tail (`<seg>-<NNNNN>.arrows`) and flushed, so a SIGKILL loses at most what was
not yet appended; when the tail holds `seal_rows` rows (or `seal_bytes`), or the segment ends, it is written as
`<seg>-<NNNNN>.parquet` (built hidden, synced, renamed: atomic), and only then is the tail removed and the next
number started. A sealed shard is never rewritten.

The reader reads what a listing of the table's folder names (`shards`): each sealed shard, and each tail whose
number has no sealed shard yet, up to its last whole batch (the rest of a batch cut short by SIGKILL is left out
with a note). Files are read through a store's `open` (rollout_trace/artifact/stores.py: a local folder, a zip,
the Hub with range reads), only the columns asked for, and a Parquet file only in the row groups asked for; over
the network the column chunks one read needs are fetched as one range where little lies between them
(`fetched_first`), and a file's footer is read once (the caller keeps it).
No Gradio, no pages here.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from . import budget
from .atomic import _sync
from .problems import Problem
from .run_format import SEALED, SHARD_NAME, TAIL, shard_name
from .run_schema import ENCODINGS

# A table a page scans (rollouts, consumed) is sealed in shards of one large row group: reading a column costs
# a fixed amount per row group and per file (its footer), so a million rollouts are about 60 shards of one row
# group each (measured: 4 columns of 1M rows from 1,024-row groups cost 8x what they cost from 65,536-row groups).
SEAL_ROWS = 16384
SEAL_BYTES = 64 * 2**20  # ... or this much in its tail first (long texts): a follower reads a tail whole
# The artifact files are sealed in smaller shards of small row groups: opening one rollout reads its row group
# (32 rollouts' files), and a tail of files (read whole by a follower who opens one of its rollouts) stays small.
FILES_SEAL_ROWS = 2048
FILES_SEAL_BYTES = 256 * 2**20
FILES_ROW_GROUP = 32
COMPRESSION = "zstd"
MAX_ROW_BYTES = 4096  # what a row's numbers and names (not its text) decompress to, at most, on average
# A read over the network (a Hub run) fetches the byte ranges of the column chunks it needs as one range where
# the gap between two is at most this: a request to the Hub costs more than this many bytes take to arrive
# (a page's columns of a rollouts shard came in 1-5 requests each read, a consumption shard's in 5)
HOLE_BYTES = 256 * 1024


@dataclass(frozen=True)
class Shard:
    """One file of a run table: a sealed shard or an open tail, in its folder (`name` is the file's name)."""

    name: str
    segment: str
    number: int
    sealed: bool
    size: int


def shards(listing: dict[str, int]) -> tuple[list[Shard], list[str]]:
    """The files of a table folder's listing (name -> size) that make its table, in (segment, number) order, and
    the names that are none (hidden files, a tail whose shard is sealed, anything else are left out; the others
    named). A tail whose shard was sealed is what a seal cut short before it removed the tail."""
    found: dict[tuple[str, int], Shard] = {}
    others = []
    for name, size in listing.items():
        if name.startswith("."):
            continue
        m = SHARD_NAME.match(name)
        if m is None:
            if not name.endswith(".end.json"):
                others.append(name)
            continue
        key = (m["segment"], int(m["number"]))
        shard = Shard(name, m["segment"], int(m["number"]), m["ext"] == SEALED, size)
        if key not in found or shard.sealed:
            found[key] = shard
    return [found[k] for k in sorted(found)], sorted(others)


def next_number(folder: Path, segment: str) -> int:
    """The number of the segment's next shard in `folder` (a writer restarted in the same segment goes on)."""
    numbers = [int(m["number"]) for n in os.listdir(folder) if (m := SHARD_NAME.match(n)) and m["segment"] == segment]
    return max(numbers, default=-1) + 1


class ShardWriter:
    """Appends batches of `schema` rows to a segment's tail in `folder` and seals it; one thread uses it."""

    def __init__(self, folder: Path, segment: str, schema: pa.Schema, seal_rows: int = SEAL_ROWS,
                 seal_bytes: int = SEAL_BYTES, row_group: int | None = None):
        """`row_group`: rows per Parquet row group of a sealed shard (default: the whole shard in one)."""
        self.folder, self.segment, self.schema = Path(folder), segment, schema
        self.seal_rows, self.seal_bytes = seal_rows, seal_bytes
        self.row_group = row_group or seal_rows
        self.folder.mkdir(parents=True, exist_ok=True)
        self.number = next_number(self.folder, segment)
        self._file: IO[bytes] | None = None
        self._stream: Any = None
        self.rows = 0  # in the open tail
        self.sealed: list[str] = []  # the shards this writer sealed, by name

    @property
    def tail(self) -> Path:
        return self.folder / shard_name(self.segment, self.number, TAIL)

    def append(self, table: pa.Table) -> tuple[int, int]:
        """One group's rows, appended to the tail whole and flushed; the tail sealed once it is large enough.
        Where they landed: the shard's number and the position of the first of them in it."""
        at = (self.number, self.rows)
        if table.num_rows == 0:
            return at
        if self._stream is None:
            self._file = open(self.tail, "xb")  # noqa: SIM115 - held open between appends, closed by seal()
            self._stream = ipc.new_stream(self._file, self.schema)
        assert self._file is not None
        self._stream.write_table(table.cast(self.schema).combine_chunks(), max_chunksize=table.num_rows)
        self._file.flush()
        self.rows += table.num_rows
        if self.rows >= self.seal_rows or self._file.tell() >= self.seal_bytes:
            self.seal()
        return at

    def seal(self) -> str | None:
        """Write the tail as the sealed shard of its number and start the next; the shard's name (None: empty)."""
        if self._stream is None:
            return None
        assert self._file is not None
        self._stream.close()
        self._file.close()
        self._stream = self._file = None
        table = read_tail_file(self.tail)[0]
        name = shard_name(self.segment, self.number, SEALED)
        write_parquet(table, self.folder / name, self.row_group)
        self.tail.unlink()
        self.sealed.append(name)
        self.number += 1
        self.rows = 0
        return name

    def close(self) -> None:
        """Seal what the tail holds (the segment ended)."""
        self.seal()


class RolloutWriter:
    """Writes a segment's rollouts, a group at a time, into the run's two tables (rollout_trace/artifact/run_format.py):
    each rollout's artifact files into the files table first, then its row, which says where its files sit
    (`files_shard`, `files_row`), into the rollouts table; each table's tail appended whole and flushed, and
    sealed on its own (the recorder's, `viewer convert`'s and the benchmarks' one writer)."""

    def __init__(self, run: Path, segment: str, seal_rows: int = SEAL_ROWS, files_seal_rows: int = FILES_SEAL_ROWS):
        from .run_format import FILES_DIR, ROLLOUTS_DIR
        from .run_schema import FILES, ROLLOUTS_TABLE

        self.files = ShardWriter(Path(run) / FILES_DIR, segment, FILES, seal_rows=files_seal_rows,
                                 seal_bytes=FILES_SEAL_BYTES, row_group=FILES_ROW_GROUP)
        self.rollouts = ShardWriter(Path(run) / ROLLOUTS_DIR, segment, ROLLOUTS_TABLE, seal_rows=seal_rows)

    def append(self, table: pa.Table) -> None:
        """One group's records (rollout_trace/artifact/run_schema.py `ROLLOUTS`, every column) written: the files of
        those that have any, then every row. A SIGKILL between the two leaves files no row points at (never read)."""
        import pyarrow.compute as pc

        from .run_schema import ARTIFACT_FILES, FILES, ROLLOUTS_TABLE

        has = pc.is_valid(table["file_summary"])
        for name in ARTIFACT_FILES:
            has = pc.or_(has, pc.is_valid(table[name]))
        has = pc.fill_null(has, False)
        files = table.filter(has).select(list(FILES.names))
        shard, first = self.files.append(files)
        rows = has.to_numpy(zero_copy_only=False)
        at = np.cumsum(rows) - 1 + first
        table = table.set_column(table.schema.get_field_index("files_shard"), "files_shard",
                                 pa.array(np.full(len(rows), shard), pa.int64(), mask=~rows))
        table = table.set_column(table.schema.get_field_index("files_row"), "files_row",
                                 pa.array(at, pa.int64(), mask=~rows))
        self.rollouts.append(table.select(ROLLOUTS_TABLE.names))

    @property
    def sealed(self) -> list[str]:
        return self.rollouts.sealed

    def close(self) -> None:
        """Seal both tails (the segment ended): the files first, so a sealed rollouts shard's files are sealed."""
        self.files.close()
        self.rollouts.close()


def _leaves(name: str, kind: pa.DataType) -> Iterator[str]:
    """The Parquet column paths of an Arrow column (a list's values are "NAME.list.element", a struct's fields
    "NAME.FIELD"): what the writer's per-column options name."""
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        yield from _leaves(f"{name}.list.element", kind.value_type)
    elif pa.types.is_struct(kind):
        for f in kind:
            yield from _leaves(f"{name}.{f.name}", f.type)
    else:
        yield name


def write_sealed(table: pa.Table, where: Any, row_group: int = SEAL_ROWS) -> None:
    """`table` as a sealed shard's Parquet bytes, to a path or a file object: zstd, statistics, and each column of
    run_schema.py's ENCODINGS stored so (the rest dictionary-encoded, Parquet's default)."""
    leaves = [path for f in table.schema for path in _leaves(f.name, f.type)]
    pq.write_table(table, where, row_group_size=row_group, compression=COMPRESSION, write_statistics=True,
                   use_dictionary=[p for p in leaves if p not in ENCODINGS],
                   column_encoding={p: k for p, k in ENCODINGS.items() if p in leaves and k != "PLAIN"} or None)


def write_parquet(table: pa.Table, dest: Path, row_group: int = SEAL_ROWS) -> None:
    """`table` as a Parquet file at `dest`, atomically: built under a hidden name beside it, synced, renamed."""
    tmp = dest.with_name(f".{dest.name}.{secrets.token_hex(4)}.partial")
    try:
        write_sealed(table, tmp, row_group)
        _sync(tmp)
        os.replace(tmp, dest)
        _sync(dest.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_tail_file(path: Path) -> tuple[pa.Table, str | None]:
    """A local tail's whole batches (memory-mapped, nothing copied), and a note when its last batch was cut."""
    with pa.memory_map(str(path)) as source:
        return read_tail(source, path.name)


def read_tail(source: Any, name: str, columns: Sequence[str] | None = None) -> tuple[pa.Table, str | None]:
    """An open tail's whole batches (of `columns`), and a note when its last batch was cut short (a SIGKILL)."""
    try:
        reader = ipc.open_stream(source)
    except (pa.ArrowInvalid, OSError, EOFError):
        return pa.table({}), f"{name}: no whole batch yet (its writer was stopped before the first group was written)"
    schema = reader.schema if columns is None else pa.schema([reader.schema.field(c) for c in columns
                                                             if c in reader.schema.names])
    batches, note = [], None
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            break
        except (pa.ArrowInvalid, OSError, EOFError):
            note = f"{name}: the last group's rows were cut short (a write stopped by SIGKILL); left out"
            break
        batches.append(batch.select(schema.names) if columns is not None else batch)
    return pa.Table.from_batches(batches, schema), note


@dataclass
class ReadShard:
    """What reading one shard gave: its rows of the columns asked for, and what was wrong with it."""

    table: pa.Table
    problems: list[Problem]
    notes: list[str]
    metadata: Any = None  # a Parquet file's footer as read (what the next read of the same file passes back)


def read_columns(open_file: Callable[[str], Any], path: str, shard: Shard, schema: pa.Schema,
                 columns: Sequence[str], check: pa.Schema | None = None, metadata: Any = None,
                 small: Collection[str] = (), dictionary: Collection[str] = ()) -> ReadShard:
    """`columns` of one shard file (at `path`, opened through `open_file`), each of the type `schema` gives it.
    With `check`, the file's whole schema must fit it (every column there, of its type or one that converts
    safely): a file that does not is named and gives no rows, so every view counts the same rows. Without it, a
    column that does not convert is named and read as nulls (its rows stay). A column of `small` (a page's
    numbers and names, not text) that would decompress to more than MAX_ROW_BYTES a row is named and read as
    nulls, never decompressed (a 100 MB title of one letter is a few KB on disk). A text column of `dictionary`
    is read dictionary-encoded from a Parquet file (its few distinct values decoded once, not a string a row)."""
    problems: list[Problem] = []
    notes: list[str] = []
    try:
        with open_file(path) as f:
            if shard.sealed:
                # the footer read once per file (`metadata`), the column chunks asked for at once
                if metadata is None:
                    metadata = pq.read_metadata(f)
                have = metadata.schema.to_arrow_schema()
                encoded = [c for c in columns if c in dictionary and c in have.names and have.field(c).type == pa.string()]
                wanted = [c for c in columns if c in have.names]
                sizes = _decoded_sizes(metadata, wanted)
                for c in [c for c in wanted if c in small]:
                    size = sizes[c]
                    if size > MAX_ROW_BYTES * metadata.num_rows + 2**20:
                        problems.append(Problem(path, "a column's values are far larger than the run table's "
                                                "(a value this size is not one the recorder writes); read as missing",
                                                field=c, expected=f"at most {MAX_ROW_BYTES:,} bytes a row",
                                                found=f"{size:,} bytes for {metadata.num_rows:,} rows"))
                        wanted.remove(c)
                budget.decoded(path, sum(sizes[c] for c in wanted))
                source = fetched_first(f, chunk_ranges(metadata, wanted, range(metadata.num_row_groups), shard.size))
                table = pq.ParquetFile(source, metadata=metadata, pre_buffer=True,
                                       read_dictionary=encoded or None).read(columns=wanted)
            else:
                table, note = read_tail(_in_memory(f), path, None)
                notes += [note] if note else []
                have = table.schema
                table = table.select([c for c in columns if c in have.names])
    except (pa.ArrowInvalid, OSError, EOFError, ValueError) as e:
        problems.append(Problem(path, f"cannot be read as a {'Parquet file' if shard.sealed else 'table tail'}: "
                                f"{_short(str(e) or type(e).__name__)}; its rows are left out"))
        return ReadShard(_empty(schema, columns), problems, notes)
    if check is not None:
        problems += schema_problems(have, check, path)
        if problems:
            return ReadShard(_empty(schema, columns), problems, notes)
    out = {}
    for name in columns:
        want = schema.field(name).type
        col = table[name] if name in table.column_names else None
        if col is not None and col.type != want and not (pa.types.is_dictionary(col.type) and col.type.value_type == want):
            try:
                col = col.cast(want, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                problems.append(Problem(path, "a column's values do not fit the run table's type; read as missing",
                                        field=name, expected=str(want), found=str(table[name].type)))
                col = None
        out[name] = col if col is not None else pa.chunked_array([pa.nulls(table.num_rows, want)])
    return ReadShard(pa.table(out, schema=pa.schema([schema.field(c).with_type(out[c].type) for c in columns])),
                     problems, notes,
                     metadata if shard.sealed else None)


# What one value of a Parquet physical type decodes to in Arrow at least (a text's offset, a boolean's byte at most)
_WIDTH = {"BOOLEAN": 1, "INT32": 4, "FLOAT": 4, "INT64": 8, "DOUBLE": 8, "INT96": 12, "BYTE_ARRAY": 4,
          "FIXED_LEN_BYTE_ARRAY": 4}


def _decoded_sizes(metadata: Any, columns: Sequence[str]) -> dict[str, int]:
    """What the column chunks of each of `columns` decode to, as the file's footer says (every row group): their
    pages decompressed, or their values at their type's width where that is more (a run of one value, or an
    ordinal stored as its differences, is a few bytes in a page however many values it holds). One pass over
    the footer for all of them."""
    sizes = dict.fromkeys(columns, 0)
    for g in range(metadata.num_row_groups):
        rg = metadata.row_group(g)
        for i in range(rg.num_columns):
            c = rg.column(i)
            top = c.path_in_schema.split(".")[0]
            if top in sizes:
                sizes[top] += max(c.total_uncompressed_size, c.num_values * _WIDTH.get(c.physical_type, 1))
    return sizes


def schema_problems(have: pa.Schema, want: pa.Schema, path: str) -> list[Problem]:
    """Why a file's columns do not fit the run table's (`want`): a column missing, or of a type that does not
    convert to the table's. One problem per file: its rows are left out."""
    types = dict(zip(have.names, have.types, strict=True))  # `names` makes a list at each call
    for f in want:
        got = types.get(f.name)
        if got is None:
            return [Problem(path, "a column of the run table is missing; its rows are left out", field=f.name,
                            expected=str(f.type), found="no such column")]
        if got != f.type:
            try:
                pa.array([], got).cast(f.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                return [Problem(path, "a column holds another type than the run table's; its rows are left out",
                                field=f.name, expected=str(f.type), found=str(got))]
    return []


def read_rows(open_file: Callable[[str], Any], path: str, shard: Shard, rows: Sequence[int],
              columns: Sequence[str], metadata: Any = None,
              on_footer: Callable[[Any], None] | None = None) -> pa.Table:
    """Rows `rows` (positions in the shard, in order) of `columns` of the file at `path` (a sealed shard's part, or
    its tail): of a Parquet file only the row groups that hold them are read (its footer read again unless given
    as `metadata`, and handed to `on_footer` when read); a tail to its last whole batch."""
    with open_file(path) as f:
        if not shard.sealed:
            table, _ = read_tail(_in_memory(f), path, columns)
            return table.take(pa.array(list(rows), pa.int64()))
        if metadata is None:
            metadata = pq.read_metadata(f)
            if on_footer is not None:
                on_footer(metadata)
        starts, at = [], 0
        for i in range(metadata.num_row_groups):
            starts.append(at)
            at += metadata.row_group(i).num_rows
        picked = sorted({_group_of(starts, r) for r in rows})
        source = fetched_first(f, chunk_ranges(metadata, columns, picked, shard.size))
        part = pq.ParquetFile(source, metadata=metadata).read_row_groups(picked, columns=list(columns))
        base = {g: sum(metadata.row_group(x).num_rows for x in picked[:k]) for k, g in enumerate(picked)}
        return part.take(pa.array([base[_group_of(starts, r)] + r - starts[_group_of(starts, r)] for r in rows],
                                  pa.int64()))


def chunk_ranges(metadata: Any, columns: Collection[str], row_groups: Collection[int], size: int,
                 hole: int = HOLE_BYTES) -> list[tuple[int, int]]:
    """The byte ranges [start, end) holding the column chunks of `columns` (top-level names) in `row_groups`, as
    the file's footer places them, joined where at most `hole` bytes lie between two, and none past `size` (the
    file's size as listed, when known: a footer can claim any offset)."""
    top = set(columns)
    spans = []
    for g in row_groups:
        rg = metadata.row_group(g)
        for i in range(rg.num_columns):
            c = rg.column(i)
            if c.path_in_schema.split(".")[0] not in top:
                continue
            start = c.data_page_offset
            if c.has_dictionary_page and 0 < c.dictionary_page_offset < start:
                start = c.dictionary_page_offset
            spans.append((max(start, 0), start + c.total_compressed_size))
    joined: list[list[int]] = []
    for a, b in sorted(spans):
        if joined and a - joined[-1][1] <= hole:
            joined[-1][1] = max(joined[-1][1], b)
        else:
            joined.append([a, b])
    return [(a, min(b, size) if size > 0 else b) for a, b in joined if not size or a < size]


def fetched_first(f: Any, spans: Sequence[tuple[int, int]]) -> Any:
    """`f` itself when reading it costs no request (memory-mapped, or in memory); else `spans` fetched first, one
    read each, and the file read from them (a read they do not hold goes to `f`): a Parquet reader asks for each
    column chunk (joined only across gaps of 8 KiB), and over the network each ask is a request."""
    if isinstance(f, (pa.MemoryMappedFile, pa.BufferReader)) or not spans:
        return f
    return pa.PythonFile(_Fetched(f, spans), mode="r")


class _Fetched:
    """A file's byte ranges read ahead, serving the reads they hold (see `fetched_first`)."""

    def __init__(self, f: Any, spans: Sequence[tuple[int, int]]):
        self.f, self.pos = f, 0
        self.held: list[tuple[int, bytes]] = []
        for a, b in spans:
            f.seek(a)
            self.held.append((a, f.read(b - a)))

    def read(self, n: int = -1) -> bytes:
        for a, data in self.held:
            if a <= self.pos and n >= 0 and self.pos + n <= a + len(data):
                got = data[self.pos - a:self.pos - a + n]
                self.pos += n
                return got
        self.f.seek(self.pos)
        got = self.f.read(n)
        self.pos += len(got)
        return got

    def seek(self, pos: int, whence: int = 0) -> int:
        self.pos = pos if whence == 0 else self.pos + pos if whence == 1 else self.f.size() + pos
        return self.pos

    def tell(self) -> int:
        return self.pos

    def size(self) -> int:
        return self.f.size()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    @property
    def closed(self) -> bool:
        return self.f.closed

    def close(self) -> None:
        """The file it reads from is closed by its opener."""


def _in_memory(f: Any) -> pa.BufferReader:
    """An open tail's bytes, copied: the recorder still appends to it and removes it once sealed, so what a snapshot
    keeps of it must not point into the file (a mapped page of a file cut shorter is a SIGBUS)."""
    return pa.BufferReader(f.read())


def _group_of(starts: list[int], row: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= row:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _empty(schema: pa.Schema, columns: Sequence[str]) -> pa.Table:
    return pa.Table.from_batches([], pa.schema([schema.field(c) for c in columns]))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:199] + "…"
