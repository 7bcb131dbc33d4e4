"""Columnar row storage: what a hit shows about its row, without a Python object per row."""

from __future__ import annotations

import zlib
from array import array
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from recall.engine.records import Candidate


class StringColumn:
    """Rows of ``fields`` strings, UTF-8 and zlib-compressed in blocks of ``BLOCK`` rows: no Python
    object per row, and about a third of the raw size. A hit decompresses one block (~20 µs)."""

    BLOCK = 32
    # Blocks read lately, decompressed: a query reads its hits', its feedback rows' and a when-question's
    # fused rows' texts, often several of one block, and each read decompressed its block again
    # (~22 blocks a query at 100k rows, 7 % of a query's time). Only the row asked for is decoded: the
    # hits of a 100k-row pool mostly sit in different blocks, and decoding each block's 32 rows cost a
    # query ~1.3 ms of its ~7 in the engine. Emptied by every change of the rows.
    MEMO_BLOCKS = 64

    def __init__(self, fields: int) -> None:
        self.fields = fields
        self._memo: dict[int, bytes] = {}
        self._blob = bytearray()
        self._block_ends = array("q")
        self._ends = array("I")  # per row and field: where it ends in its block's raw bytes
        self._pending = bytearray()
        self._rows = 0

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_memo", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._memo = {}

    def append(self, *values: str) -> None:
        assert len(values) == self.fields
        self._memo.clear()
        if self._rows % self.BLOCK and not self._pending:
            self._reopen()
        for value in values:
            self._pending += value.encode("utf-8", "surrogatepass")
            self._ends.append(len(self._pending))
        self._rows += 1
        if self._rows % self.BLOCK == 0:
            self._seal()

    def _seal(self) -> None:
        self._blob += zlib.compress(bytes(self._pending), 6)
        self._block_ends.append(len(self._blob))
        self._pending = bytearray()

    def _reopen(self) -> None:
        """Take the sealed partial last block back into the pending buffer (rows added after freeze)."""
        last = len(self._block_ends) - 1
        self._pending = bytearray(self._block(last))
        del self._blob[(self._block_ends[last - 1] if last else 0) :]
        self._block_ends.pop()

    def freeze(self, *, trim: bool = True) -> None:
        """Seal the pending rows; ``trim`` also drops the growth slack (a copy of every block: right
        once after a build, not after each appended row, where it cost a new fact ~7 ms at 200k)."""
        if self._pending:
            self._seal()
        if trim:
            self._blob = bytearray(self._blob)

    def blank(self, rows: Iterable[int]) -> None:
        """Empty every field of ``rows`` (forgotten rows: their text must not stay in memory, nor reach
        a saved snapshot, even compressed). The rows after them in their block move up; other blocks
        keep their bytes. Each block is rewritten once for all its rows: a catch-up's tombstones are
        mostly the newest rows, a few blocks, and one compression per row was most of its cost."""
        self._memo.clear()
        by_block: dict[int, list[int]] = {}
        for row in rows:
            by_block.setdefault(row // self.BLOCK, []).append(row)
        for block, blanked in by_block.items():
            self._blank_in_block(block, blanked)

    def _blank_in_block(self, block: int, blanked: list[int]) -> None:
        first_row = block * self.BLOCK
        last_row = min(self._rows, first_row + self.BLOCK)
        sealed = block < len(self._block_ends)
        raw = bytes(self._block(block)) if sealed else bytes(self._pending)
        rows = [self._fields(raw, r) for r in range(first_row, last_row)]
        for row in blanked:
            rows[row - first_row] = ("",) * self.fields
        rebuilt = bytearray()
        for offset, values in enumerate(rows):
            for field, value in enumerate(values):
                rebuilt += value.encode("utf-8", "surrogatepass")
                self._ends[(first_row + offset) * self.fields + field] = len(rebuilt)
        if not sealed:
            self._pending = rebuilt
            return
        start = self._block_ends[block - 1] if block else 0
        packed = zlib.compress(bytes(rebuilt), 6)
        shift = len(packed) - (self._block_ends[block] - start)
        self._blob[start : self._block_ends[block]] = packed
        for later in range(block, len(self._block_ends)):
            self._block_ends[later] += shift

    def _block(self, block: int, *, upto: int = 0) -> bytes:
        """A sealed block's raw bytes; ``upto``: at least its first ``upto`` bytes (0: all of them)."""
        start = self._block_ends[block - 1] if block else 0
        packed = self._blob[start : self._block_ends[block]]
        if upto:
            return zlib.decompressobj().decompress(packed, upto)
        return zlib.decompress(packed)

    def _fields(self, raw: bytes, row: int) -> tuple[str, ...]:
        first = row * self.fields
        start = self._ends[first - 1] if row % self.BLOCK else 0
        out = []
        for end in self._ends[first : first + self.fields]:
            out.append(raw[start:end].decode("utf-8", "surrogatepass"))
            start = end
        return tuple(out)

    def __getitem__(self, row: int) -> tuple[str, ...]:
        if not 0 <= row < self._rows:
            raise IndexError(row)
        block = row // self.BLOCK
        end = self._ends[(row + 1) * self.fields - 1]  # where the row ends in its block's raw bytes
        memo = self._memo
        raw = memo.get(block)
        if raw is None or len(raw) < end:
            # Decompressed only as far as the row: on average half the block's work.
            raw = self._block(block, upto=end) if block < len(self._block_ends) else bytes(self._pending)
            if len(memo) >= self.MEMO_BLOCKS:
                memo.clear()
            memo[block] = raw
        return self._fields(raw, row)

    def column(self, field: int) -> Iterator[str]:
        """One field of every row, in order (each block decompressed once)."""
        for block in range(len(self._block_ends)):
            raw = self._block(block)
            for row in range(block * self.BLOCK, min(self._rows, (block + 1) * self.BLOCK)):
                yield self._fields(raw, row)[field]

    def __len__(self) -> int:
        return self._rows

    @property
    def nbytes(self) -> int:
        return len(self._blob) + self._ends.itemsize * len(self._ends) + 8 * len(self._block_ends)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
NO_TIME = -(2**63)


class TimeColumn:
    """Aware datetimes as int64 microseconds since the epoch (read back in UTC: the same instant);
    naive ones, which have no instant, are kept as they are."""

    def __init__(self) -> None:
        self._micros = array("q")
        self._naive: dict[int, datetime] = {}

    def append(self, value: datetime | None) -> None:
        if value is None:
            self._micros.append(NO_TIME)
        elif value.tzinfo is None or value.utcoffset() is None:
            self._naive[len(self._micros)] = value
            self._micros.append(NO_TIME)
        else:
            self._micros.append((value - _EPOCH) // _MICROSECOND)

    def micros(self) -> np.ndarray:
        """Every row's instant in microseconds (``NO_TIME``: none, or a naive datetime), no copy."""
        return np.frombuffer(self._micros, dtype=np.int64) if self._micros else np.zeros(0, np.int64)

    def __getitem__(self, row: int) -> datetime | None:
        micros = self._micros[row]
        if micros == NO_TIME:
            return self._naive.get(row)
        return _EPOCH + timedelta(microseconds=micros)


class Codes:
    """A column of few distinct values (tier, entity) as small integer codes."""

    def __init__(self) -> None:
        self._codes = array("i")
        self._values: list[Any] = []
        self._index: dict[Any, int] = {}

    def append(self, value: Any) -> None:
        code = self._index.get(value)
        if code is None:
            code = self._index[value] = len(self._values)
            self._values.append(value)
        self._codes.append(code)

    def __getitem__(self, row: int) -> Any:
        return self._values[self._codes[row]]

    def codes(self) -> np.ndarray:
        """Every row's code (equal codes, equal values), no copy."""
        return np.frombuffer(self._codes, dtype=np.int32) if self._codes else np.zeros(0, np.int32)

    def code_of(self, value: Any) -> int:
        """The code ``value`` has (−1: no row holds it)."""
        return self._index.get(value, -1)

    def mask(self, wanted: frozenset[Any]) -> np.ndarray:
        return np.isin(self.codes(), [c for v, c in self._index.items() if v in wanted])


NO_KEY = -(2**63)


class RowStore:
    """What a hit shows about its row, stored column-wise; ``candidate(row)`` rebuilds the record."""

    def __init__(self) -> None:
        self.strings = StringColumn(2)  # (id, text)
        self.tiers = Codes()
        self.entities = Codes()
        self.created = TimeColumn()
        self.starts = TimeColumn()
        self.ends = TimeColumn()
        self.rare: dict[int, tuple[str | None, str | None, str | None, float]] = {}  # subject/scope/evidence
        self.pools = Codes()
        self.speakers = Codes()
        self.keys = array("q")  # NO_KEY when the row has none

    def append(self, c: Candidate) -> None:
        row = len(self.strings)
        self.strings.append(c.id, c.text)
        self.tiers.append(c.tier)
        self.entities.append(c.entity)
        self.created.append(c.created_at)
        self.starts.append(c.event_start_at)
        self.ends.append(c.event_end_at)
        self.pools.append(c.pool)
        self.speakers.append(c.speaker)
        self.keys.append(NO_KEY if c.key is None else c.key)
        if c.subject_kind is not None or c.subject_id is not None or c.scope is not None or c.evidence_score:
            self.rare[row] = (c.subject_kind, c.subject_id, c.scope, c.evidence_score)

    def candidate(self, row: int) -> Candidate:
        kind, subject, scope, evidence = self.rare.get(row, (None, None, None, 0.0))
        row_id, text = self.strings[row]
        return Candidate(
            id=row_id,
            text=text,
            tier=self.tiers[row],
            entity=self.entities[row],
            created_at=self.created[row],
            event_start_at=self.starts[row],
            event_end_at=self.ends[row],
            subject_kind=kind,
            subject_id=subject,
            scope=scope,
            evidence_score=evidence,
            pool=self.pools[row],
            key=None if self.keys[row] == NO_KEY else self.keys[row],
            speaker=self.speakers[row],
        )

    def __len__(self) -> int:
        return len(self.strings)
