"""BM25 (Lucene IDF, k1 1.5, b 0.75) as a sparse precomputed index, and the lexical views (tokenizers)."""

from __future__ import annotations

import functools
import hashlib
import math
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from nekomem.language.tokens import recall_tokens, search_tokens, word_chars
from recall.engine.kernels import add_ranges, live_in_ranges

BM25_K1 = 1.5
BM25_B = 0.75
# Postings of appended rows wait in arrival order (found by one comparison over the tail a query term)
# until this many, then are merged into the sorted segment: ~100 Chinese turns.
TAIL_POSTINGS = 8192

# Lexical views: a name → tokenizer(text, stop_names). Adding a view here makes it available to configs.
Tokenizer = Callable[[str, Sequence[str]], list[str]]
LEXICAL_VIEWS: dict[str, Tokenizer] = {
    "original": lambda text, names: recall_tokens(text, names),
    "words": lambda text, names: search_tokens(text, names),
    "unigrams": lambda text, names: search_tokens(text, names, unigrams=True),
    # Scored only for the one-character words of a query (``RecallIndex``: the "bm25:chars" path).
    "chars": lambda text, names: word_chars(text, names),
}


# A term's hash is asked for at every query and every appended turn, and blake2b dominated a turn's
# append (~0.8 ms); the common terms of a language are few, so a bounded memo answers most of them.
TERM_HASH_MEMO = 32_768


@functools.lru_cache(maxsize=TERM_HASH_MEMO)
def term_hash(token: str) -> int:
    """A token's 64-bit key, the same in every process (the vocabulary is stored as these)."""
    return int.from_bytes(
        hashlib.blake2b(token.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little", signed=True
    )


class CountedRows(NamedTuple):
    """Rows counted by ``Bm25View.counted_flat``: each row's distinct term hashes and their frequencies
    (capped at 255), row after row, how many terms each row has, and its length in tokens."""

    keys: np.ndarray  # int64
    tfs: np.ndarray  # uint8
    terms: np.ndarray  # int32, one a row
    lengths: np.ndarray  # int32, one a row


class Bm25View:
    """One lexical view of a pool: its tokenizer and a sparse BM25 index (Lucene IDF) that takes changes.

    The layout bm25s uses (one column per term listing the documents that contain it), built with numpy
    from a flat token-id array so a 100k-row pool needs no per-document Python lists; a column holds
    term frequencies and a query turns its columns into scores on the original's scale (``(k1 + 1)``
    included). After ``freeze`` the vocabulary is a sorted array of the tokens' 64-bit hashes (8 bytes a
    term instead of a dict entry and a string). A collision between two distinct terms (≈ n²/2⁶⁴) would
    only merge their columns.

    Rows added after ``freeze`` are postings (term hash, row, tf) beside the frozen columns: a short
    tail in arrival order, merged every ``TAIL_POSTINGS`` into one segment sorted by hash. Removed rows
    are tombstoned; a term's document frequency counts its live rows at query time, and the live row
    count and total length are kept for the live rows only. So a view that took changes scores every
    live row exactly (bit for bit) as a view built from the live rows would.
    """

    def __init__(
        self, tokenizer: Tokenizer, texts: Iterable[str] = (), stop_names: Sequence[str] = ()
    ) -> None:
        self.tokenizer = tokenizer
        self.stop_names = tuple(stop_names)
        self._vocab: dict[str, int] | None = {}
        self._tokens = array("i")  # every document's token ids, concatenated (until frozen)
        self._build_lengths = array("i")  # tokens per document (until frozen)
        self.size = 0
        self._keys = np.zeros(0, dtype=np.int64)  # sorted token hashes
        self._columns = np.zeros(0, dtype=np.int32)  # column of each key
        self._indptr = np.zeros(1, dtype=np.int64)
        self._indices = np.zeros(0, dtype=np.int32)
        self._tf = np.zeros(0, dtype=np.uint8)
        self._lengths = np.zeros(0, dtype=np.int32)  # tokens per row, every row
        self._alive = np.zeros(0, dtype=bool)
        self._live = 0
        self._total_length = 0  # of the live rows
        # Postings of the rows appended after freeze: sorted by hash, then the tail not merged yet. Flat
        # arrays, not a list per term: a Chinese turn brings ~80 terms the delta has not seen, and two
        # small arrays and a dict entry for each made ~20 KB a row (40 MB a character before compaction).
        self._added_keys = np.zeros(0, dtype=np.int64)
        self._added_rows = np.zeros(0, dtype=np.int32)
        self._added_tfs = np.zeros(0, dtype=np.uint8)
        self._tail_keys = array("q")
        self._tail_rows = array("i")
        self._tail_tfs = array("B")
        self._norm_for: tuple[int, int, int] | None = None
        self._norm = np.zeros(0, dtype=np.float32)  # k1·(1 − b + b·dl/avgdl) per row
        for text in texts:
            self.add(text)
        if self.size:
            self.freeze()

    def __getstate__(self) -> dict[str, Any]:
        # The tokenizer is saved by its view name (tokenizers are functions of this module).
        state = dict(self.__dict__)
        state["tokenizer"] = next(name for name, fn in LEXICAL_VIEWS.items() if fn is self.tokenizer)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.tokenizer = LEXICAL_VIEWS[state["tokenizer"]]

    def add(self, text: str) -> None:
        assert self._vocab is not None, "frozen"
        vocab = self._vocab
        ids = [vocab.setdefault(tok, len(vocab)) for tok in self.tokenizer(text, self.stop_names)]
        self._tokens.extend(ids)
        self._build_lengths.append(len(ids))
        self.size += 1

    def freeze(self) -> None:
        """Compute the sparse term-frequency columns and drop the build-time structures."""
        if self._vocab is None:
            return
        vocab, self._vocab = self._vocab, None
        n, n_terms = self.size, len(vocab)
        tokens = np.frombuffer(self._tokens, dtype=np.int32) if self._tokens else np.zeros(0, np.int32)
        lengths = (
            np.frombuffer(self._build_lengths, dtype=np.int32).copy()
            if self._build_lengths
            else np.zeros(0, np.int32)
        )
        self._lengths = lengths
        self._alive = np.ones(n, dtype=bool)
        self._live = n
        self._total_length = int(lengths.sum(dtype=np.int64))
        if n and tokens.size:
            # (term, document) pairs in column order, with their term frequencies.
            pairs, tf = np.unique(
                tokens.astype(np.int64) * n + np.repeat(np.arange(n, dtype=np.int64), lengths),
                return_counts=True,
            )
            terms = (pairs // n).astype(np.int32)
            docs = (pairs % n).astype(np.int32)
            del pairs
            df = np.bincount(terms, minlength=n_terms)
            # Term frequencies, not scores, are stored (1 byte a posting instead of 4); a query computes
            # the scores of its own terms' postings. A term repeated > 255 times in one row counts 255.
            self._tf = np.minimum(tf, 255).astype(np.uint8)
            self._indices = docs
            self._indptr = np.concatenate(([0], np.cumsum(df))).astype(np.int64)
            keys = np.fromiter((term_hash(t) for t in vocab), dtype=np.int64, count=n_terms)
            order = np.argsort(keys, kind="stable")
            self._keys = keys[order]
            self._columns = np.fromiter(vocab.values(), dtype=np.int32, count=n_terms)[order]
        self._tokens = array("i")
        self._build_lengths = array("i")

    # --- changes after freeze ------------------------------------------------------------------------

    def _counts(self, text: str) -> tuple[dict[int, int], int]:
        tokens = self.tokenizer(text, self.stop_names)
        counts: dict[int, int] = {}
        for token in tokens:
            key = term_hash(token)
            counts[key] = counts.get(key, 0) + 1
        return counts, len(tokens)

    def counted(self, texts: Sequence[str]) -> list[tuple[dict[int, int], int]]:
        """The term counts and length of each text, as ``append_counted`` takes them (changes nothing)."""
        return [self._counts(text) for text in texts]

    def counted_flat(self, texts: Sequence[str]) -> CountedRows:
        """``counted`` as flat arrays, for ``append_flat``: many rows counted in another process cross to
        this one as a few arrays (not a dict a row), and are appended by whole-array steps."""
        keys, tfs, terms, lengths = array("q"), array("q"), array("i"), array("i")
        for text in texts:
            counts, length = self._counts(text)
            keys.extend(counts)
            tfs.extend(counts.values())
            terms.append(len(counts))
            lengths.append(length)
        return CountedRows(
            keys=np.array(keys, dtype=np.int64),
            tfs=np.minimum(np.array(tfs, dtype=np.int64), 255).astype(np.uint8),
            terms=np.array(terms, dtype=np.int32),
            lengths=np.array(lengths, dtype=np.int32),
        )

    def append_flat(self, rows: CountedRows) -> None:
        """``append_counted`` of rows counted by ``counted_flat``: the same rows, postings and numbers,
        merged straight into the sorted segment (the tail first, so the order stays arrival order)."""
        self.freeze()
        count = int(rows.lengths.size)
        if not count:
            return
        if self._tail_keys:
            self._merge_tail()
        owners = (self.size + np.repeat(np.arange(count, dtype=np.int64), rows.terms)).astype(np.int32)
        self._lengths = np.concatenate((self._lengths, rows.lengths.astype(np.int32)))
        self._alive = np.concatenate((self._alive, np.ones(count, dtype=bool)))
        self.size += count
        self._live += count
        self._total_length += int(rows.lengths.sum(dtype=np.int64))
        order = np.argsort(rows.keys, kind="stable")
        keys = rows.keys[order]
        if not self._added_keys.size:
            # The first rows since the freeze (a large pack taken into a fresh index): they are the
            # segment, sorted; inserting 1.5M postings into empty arrays took twice the sort's time.
            self._added_keys = keys.astype(np.int64, copy=False)
            self._added_rows = owners[order]
            self._added_tfs = rows.tfs[order].astype(np.uint8, copy=False)
            return
        at = np.searchsorted(self._added_keys, keys, side="right")
        self._added_keys = np.insert(self._added_keys, at, keys)
        self._added_rows = np.insert(self._added_rows, at, owners[order])
        self._added_tfs = np.insert(self._added_tfs, at, rows.tfs[order])

    def append(self, texts: Sequence[str]) -> None:
        """Add rows ``size …`` after freeze (their numbers are the next free ones)."""
        self.append_counted(self.counted(texts))

    def append_counted(self, rows: Sequence[tuple[dict[int, int], int]]) -> None:
        """``append`` of texts already counted (``counted``): nothing here can fail halfway."""
        self.freeze()
        lengths = array("i")
        for counts, length in rows:
            row = self.size
            self._tail_keys.extend(counts)
            self._tail_rows.extend([row] * len(counts))
            self._tail_tfs.extend([min(tf, 255) for tf in counts.values()])
            lengths.append(length)
            self._total_length += length
            self.size += 1
            self._live += 1
        if lengths:
            self._lengths = np.concatenate((self._lengths, np.frombuffer(lengths, dtype=np.int32)))
            self._alive = np.concatenate((self._alive, np.ones(len(lengths), dtype=bool)))
        if len(self._tail_keys) >= TAIL_POSTINGS:
            self._merge_tail()

    def _merge_tail(self) -> None:
        """Sort the tail into the added segment: O(segment) copies, no per-term objects."""
        keys = np.frombuffer(self._tail_keys, dtype=np.int64)
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        rows = np.frombuffer(self._tail_rows, dtype=np.int32)[order]
        tfs = np.frombuffer(self._tail_tfs, dtype=np.uint8)[order]
        at = np.searchsorted(self._added_keys, keys, side="right")
        self._added_keys = np.insert(self._added_keys, at, keys)
        self._added_rows = np.insert(self._added_rows, at, rows)
        self._added_tfs = np.insert(self._added_tfs, at, tfs)
        self._tail_keys, self._tail_rows, self._tail_tfs = array("q"), array("i"), array("B")

    def remove(self, row: int) -> None:
        """Tombstone a live row (its terms' document frequencies follow: they count live rows)."""
        self.freeze()
        if not self._alive[row]:
            return
        self._alive[row] = False
        self._live -= 1
        self._total_length -= int(self._lengths[row])

    @property
    def dead(self) -> int:
        return self.size - self._live

    # --- queries -------------------------------------------------------------------------------------

    def _row_norms(self) -> np.ndarray:
        state = (self.size, self._live, self._total_length)
        if self._norm_for != state:
            avgdl = max(self._total_length / self._live, 1e-9) if self._live else 1e-9
            self._norm = (BM25_K1 * (1 - BM25_B + BM25_B * self._lengths.astype(np.float64) / avgdl)).astype(
                np.float32
            )
            self._norm_for = state
        return self._norm

    def _postings(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(term, row, tf) of every posting of the query's term hashes ``keys``, ordered by term (the
        index into ``keys``), and each term's posting count (dead rows included): ``_segments``'
        ranges gathered, in a few whole-array steps rather than a pass per term."""
        counts = np.zeros(keys.size, dtype=np.int64)
        terms, rows, tfs = [], [], []
        for segment in self._segments(keys):
            taken = _ranges(segment.starts, segment.ends)
            terms.append(np.repeat(segment.at, taken.counts))
            rows.append(segment.rows[taken.at])
            tfs.append(segment.tfs[taken.at])
            counts[segment.at] += taken.counts
        if not terms:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty.astype(np.int32), empty.astype(np.uint8), counts
        if len(terms) == 1:
            # One segment's ranges are listed in term order already (sorting 60k postings of a
            # 100k-row query was a quarter of its time).
            return terms[0], rows[0], tfs[0], counts
        term, row, tf = np.concatenate(terms), np.concatenate(rows), np.concatenate(tfs)
        by_term = np.argsort(term, kind="stable")
        return term[by_term], row[by_term], tf[by_term], counts

    def scores(self, query: str) -> np.ndarray:
        """Scores of every row on the original's scale (0 where no query term occurs, and on dead rows).

        Each row's score is its terms' contributions added in the query's term order, in float32, as a
        view built from the live rows adds them: the same score bit for bit, whatever part of the index
        (frozen, added, tail) holds a posting."""
        # Query terms de-duplicated (§4.3); unknown terms contribute nothing.
        return self.term_scores(list(dict.fromkeys(self.tokenizer(query, self.stop_names))))

    def term_scores(
        self,
        tokens: Sequence[str],
        weights: Sequence[float] | None = None,
        *,
        scored: list[np.ndarray] | None = None,
    ) -> np.ndarray:
        """``scores`` of distinct ``tokens`` (already tokenised), each term's part times its weight;
        the rows that contain one are added to ``scored``, each once (every other row scores 0).

        Each posting adds ``idf·tf·(k1 + 1) / (tf + norm)`` in float32, operation by operation as
        written, to its row in the query's term order (``kernels``), read where it lies in each segment
        (``_segments``): no posting is gathered or sorted, but for the tail's few."""
        self.freeze()
        scores = np.zeros(self.size, dtype=np.float32)
        if not self._live or not tokens:
            return scores
        keys = np.fromiter((term_hash(t) for t in tokens), dtype=np.int64, count=len(tokens))
        segments = self._segments(keys)
        postings = sum(int((segment.ends - segment.starts).sum()) for segment in segments)
        if not postings:
            return scores
        idf = self._idf(self._document_frequencies(keys, segments), weights)
        touched = np.empty(min(self.size, postings), np.int32)
        seen = np.zeros(self.size, dtype=np.bool_)
        n, norm, k1_plus_1 = 0, self._row_norms(), np.float32(BM25_K1 + 1)
        for rows, tfs, starts, ends, at in segments:
            n += add_ranges(scores, seen, touched[n:], rows, tfs, starts, ends, idf[at], norm, k1_plus_1)
        if scored is not None:
            scored.append(touched[:n])
        if self._live < self.size:
            scores[~self._alive] = 0.0
        return scores

    def _idf(self, df: np.ndarray, weights: Sequence[float] | np.ndarray | None) -> np.ndarray:
        """Lucene's IDF of each document frequency over the live rows, times its term's weight."""
        idf = np.array(
            [math.log1p((self._live - n + 0.5) / (n + 0.5)) for n in df.tolist()], dtype=np.float32
        )
        if weights is not None:
            idf *= np.asarray(weights, dtype=np.float32)
        return idf

    def term_rows(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(index into ``tokens``, row) of every live row that contains each of the distinct ``tokens``:
        which query terms a row covers, without scoring (the knowledge search's coverage rule)."""
        self.freeze()
        if not self._live or not tokens:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty.astype(np.int32)
        keys = np.fromiter((term_hash(t) for t in tokens), dtype=np.int64, count=len(tokens))
        term, rows, _tfs, _counts = self._postings(keys)
        if self._live < self.size and rows.size:
            live = self._alive[rows]
            term, rows = term[live], rows[live]
        return term, rows

    def idf(self, tokens: Sequence[str]) -> np.ndarray:
        """Each token's IDF over the live rows, as ``scores`` computes it, from posting counts: the rows
        of a posting are read only when some row was removed, and then only to count the live ones."""
        self.freeze()
        if not tokens:
            return np.zeros(0, dtype=np.float32)
        keys = np.fromiter((term_hash(t) for t in tokens), dtype=np.int64, count=len(tokens))
        return self._idf(self._document_frequencies(keys, self._segments(keys)), None)

    def _segments(self, keys: np.ndarray) -> list[_Segment]:
        """Where the postings of each of ``keys`` lie, a segment at a time (frozen columns, the sorted
        segment of added rows, the tail): ranges into the segment's arrays, in the keys' order. A row
        is in one segment only, so scoring each in turn adds a row's terms in the query's order."""
        segments = []
        if self._keys.size:
            at = np.minimum(np.searchsorted(self._keys, keys), self._keys.size - 1)
            found = self._keys[at] == keys
            columns = self._columns[at[found]]
            starts, ends = self._indptr[columns], self._indptr[columns + 1]
            segments.append(_Segment(self._indices, self._tf, starts, ends, np.flatnonzero(found)))
        if self._added_keys.size:
            starts = np.searchsorted(self._added_keys, keys, side="left")
            ends = np.searchsorted(self._added_keys, keys, side="right")
            some = np.flatnonzero(ends > starts)
            segments.append(_Segment(self._added_rows, self._added_tfs, starts[some], ends[some], some))
        if self._tail_keys:
            tail = np.frombuffer(self._tail_keys, dtype=np.int64)
            order = np.argsort(keys, kind="stable")
            ordered = keys[order]
            at = np.minimum(np.searchsorted(ordered, tail), ordered.size - 1)
            hits = np.flatnonzero(ordered[at] == tail)
            term = order[at[hits]]
            by_term = np.argsort(term, kind="stable")  # a row's postings in the query's term order
            counts = np.bincount(term, minlength=keys.size)
            some = np.flatnonzero(counts)
            ends = np.cumsum(counts[some])
            rows = np.frombuffer(self._tail_rows, dtype=np.int32)[hits][by_term]
            tfs = np.frombuffer(self._tail_tfs, dtype=np.uint8)[hits][by_term]
            segments.append(_Segment(rows, tfs, ends - counts[some], ends, some))
        return segments

    def _document_frequencies(self, keys: np.ndarray, segments: list[_Segment]) -> np.ndarray:
        df = np.zeros(keys.size, dtype=np.int64)
        for rows, _tfs, starts, ends, at in segments:
            df[at] += (
                ends - starts if self._live == self.size else live_in_ranges(rows, self._alive, starts, ends)
            )
        return df

    @property
    def nbytes(self) -> int:
        frozen = (self._keys, self._columns, self._indptr, self._indices, self._tf)
        per_row = (self._lengths, self._alive, self._norm)
        added = (self._added_keys, self._added_rows, self._added_tfs)
        tail = len(self._tail_keys) * 13  # 8 + 4 + 1 bytes a posting
        return sum(a.nbytes for a in (*frozen, *per_row, *added)) + tail


class _Segment(NamedTuple):
    """The postings of a query's terms in one segment of a view: ranges ``starts[i] … ends[i] - 1`` of
    ``rows`` / ``tfs``, the i-th for the key at ``at[i]``."""

    rows: np.ndarray
    tfs: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    at: np.ndarray


class _Taken(NamedTuple):
    """Positions of the postings in some ranges of a posting array, and how many each range gave."""

    at: np.ndarray
    counts: np.ndarray


def _ranges(starts: np.ndarray, ends: np.ndarray) -> _Taken:
    """The positions ``start … end - 1`` of every range, concatenated, without a loop over the ranges."""
    counts = (ends - starts).astype(np.int64)
    total = int(counts.sum())
    if not total:
        return _Taken(np.zeros(0, dtype=np.int64), counts)
    firsts = np.cumsum(counts) - counts  # where each range starts in the output
    return _Taken(np.repeat(starts - firsts, counts) + np.arange(total), counts)
