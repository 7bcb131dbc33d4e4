"""BM25 (Lucene IDF, k1 1.5, b 0.75) as a sparse precomputed index, and the lexical views (tokenizers)."""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from nekomem.textproc import recall_tokens, search_tokens

BM25_K1 = 1.5
BM25_B = 0.75

# Lexical views: a name → tokenizer(text, stop_names). Adding a view here makes it available to configs.
Tokenizer = Callable[[str, Sequence[str]], list[str]]
LEXICAL_VIEWS: dict[str, Tokenizer] = {
    "original": lambda text, names: recall_tokens(text, names),
    "words": lambda text, names: search_tokens(text, names),
    "unigrams": lambda text, names: search_tokens(text, names, unigrams=True),
}


class Bm25View:
    """One lexical view of a pool: its tokenizer and a precomputed sparse BM25 index (Lucene IDF).

    The layout bm25s uses (one column per term listing the documents that contain it), built with numpy
    from a flat token-id array so a 100k-row pool needs no per-document Python lists; a column holds
    term frequencies and a query turns its columns into scores on the original's scale (``(k1 + 1)``
    included).
    After ``freeze`` the vocabulary is a sorted array of the tokens' hashes (8 bytes a term instead of a
    dict entry and a string); hashes are per process, as the index is. A 64-bit collision between two
    distinct terms (≈ n²/2⁶⁴) would only merge their columns.
    """

    def __init__(
        self, tokenizer: Tokenizer, texts: Iterable[str] = (), stop_names: Sequence[str] = ()
    ) -> None:
        self.tokenizer = tokenizer
        self.stop_names = tuple(stop_names)
        self._vocab: dict[str, int] | None = {}
        self._tokens = array("i")  # every document's token ids, concatenated
        self._lengths = array("i")  # tokens per document
        self.size = 0
        self._keys = np.zeros(0, dtype=np.int64)  # sorted token hashes
        self._columns = np.zeros(0, dtype=np.int32)  # column of each key
        self._indptr = np.zeros(1, dtype=np.int64)
        self._indices = np.zeros(0, dtype=np.int32)
        self._tf = np.zeros(0, dtype=np.uint8)
        self._idf = np.zeros(0, dtype=np.float32)
        self._norm = np.zeros(0, dtype=np.float32)  # k1·(1 − b + b·dl/avgdl) per row
        for text in texts:
            self.add(text)
        if self.size:
            self.freeze()

    def add(self, text: str) -> None:
        assert self._vocab is not None, "frozen"
        vocab = self._vocab
        ids = [vocab.setdefault(tok, len(vocab)) for tok in self.tokenizer(text, self.stop_names)]
        self._tokens.extend(ids)
        self._lengths.append(len(ids))
        self.size += 1

    def freeze(self) -> None:
        """Compute the sparse score matrix and drop the build-time structures."""
        if self._vocab is None:
            return
        vocab, self._vocab = self._vocab, None
        n, n_terms = self.size, len(vocab)
        tokens = np.frombuffer(self._tokens, dtype=np.int32) if self._tokens else np.zeros(0, np.int32)
        lengths = np.frombuffer(self._lengths, dtype=np.int32) if self._lengths else np.zeros(0, np.int32)
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
            self._idf = np.log1p((n - df + 0.5) / (df + 0.5)).astype(np.float32)
            avgdl = max(float(lengths.mean()), 1e-9)
            self._norm = (BM25_K1 * (1 - BM25_B + BM25_B * lengths / avgdl)).astype(np.float32)
            # Term frequencies, not scores, are stored (1 byte a posting instead of 4); a query computes
            # the scores of its own terms' postings. A term repeated > 255 times in one row counts 255.
            self._tf = np.minimum(tf, 255).astype(np.uint8)
            self._indices = docs
            self._indptr = np.concatenate(([0], np.cumsum(df))).astype(np.int64)
            keys = np.fromiter((hash(t) for t in vocab), dtype=np.int64, count=n_terms)
            order = np.argsort(keys, kind="stable")
            self._keys = keys[order]
            self._columns = np.fromiter(vocab.values(), dtype=np.int32, count=n_terms)[order]
        self._tokens = array("i")
        self._lengths = array("i")

    def _term_columns(self, query: str) -> list[int]:
        # Query terms de-duplicated (§4.3); unknown terms contribute nothing.
        wanted = list(dict.fromkeys(self.tokenizer(query, self.stop_names)))
        if not wanted or not self._keys.size:
            return []
        hashes = np.fromiter((hash(t) for t in wanted), dtype=np.int64, count=len(wanted))
        at = np.minimum(np.searchsorted(self._keys, hashes), self._keys.size - 1)
        found = self._keys[at] == hashes
        return [int(c) for c in self._columns[at[found]]]

    def scores(self, query: str) -> np.ndarray:
        """Scores of every row on the original's scale (0 where no query term occurs)."""
        self.freeze()
        scores = np.zeros(self.size, dtype=np.float32)
        k1_plus_1 = np.float32(BM25_K1 + 1)
        for column in self._term_columns(query):
            start, end = self._indptr[column], self._indptr[column + 1]
            rows = self._indices[start:end]
            tf = self._tf[start:end].astype(np.float32)
            # A row occurs once per column, so a fancy-indexed add is exact (no np.add.at).
            scores[rows] += self._idf[column] * tf * k1_plus_1 / (tf + self._norm[rows])
        return scores

    @property
    def nbytes(self) -> int:
        arrays = (self._keys, self._columns, self._indptr, self._indices, self._tf, self._idf, self._norm)
        return sum(a.nbytes for a in arrays)


def bm25_reference_score(query: Sequence[str], doc: Sequence[str], corpus: Sequence[Sequence[str]]) -> float:
    """The original's formula written out (for tests): Σ idf·tf(k1+1)/(tf + k1(1−b+b·dl/avgdl))."""
    n_docs = len(corpus)
    avgdl = sum(len(d) for d in corpus) / n_docs
    total = 0.0
    for term in dict.fromkeys(query):
        n = sum(1 for d in corpus if term in d)
        tf = list(doc).count(term)
        if not tf:
            continue
        idf = math.log((n_docs - n + 0.5) / (n + 0.5) + 1)
        total += idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * len(doc) / avgdl))
    return total
