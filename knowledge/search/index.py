"""The search index over the enabled entries (reference §1.8 "Search"): exact surfaces, BM25 over chunk
rows with the recall engine's index and tokeniser, cosine over chunk vectors, RRF.

Built from plain ``SearchEntry`` records. BM25 rows are an entry's chunks, each carrying the entry's
names (title, aliases, recognition terms) and the first also its summary and tags, so a name found in
any chunk finds the entry and the chunk that matched best is the one shown. An entry's BM25 score is its
best row's. A new index is built from the previous one: rows whose text did not change keep their
tokenised postings (tokenising is most of a build), gone rows are tombstoned and new ones appended;
when the dead rows outnumber the live ones the index is built afresh.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from knowledge.search.chunking import entry_chunks, row_texts
from knowledge.search.text import is_cjk_trigram, loose_surface, strict_surface
from knowledge.search.tokenising import (
    OFFLOAD_ROWS,
    TOKENIZER,
    fresh_view,
    tokenised,
)
from knowledge.search.types import SearchEntry
from knowledge.search.view_update import view_updated
from recall.engine import Bm25View, rrf_fuse

RRF_K = 60
LEXICAL_CANDIDATES = 48
SEMANTIC_CANDIDATES = 24
SEMANTIC_THRESHOLD = 0.5
MIN_TOKEN_COVERAGE = 0.6
# A long query is sampled across its length, not cut: the term that matters may come last.
MAX_QUERY_TOKENS = 128
MATERIAL_TYPES = ("knowledge", "corpus")
# Work between two calls of a build's ``pause`` (a background build waits there for the process's
# requests): each well under a millisecond, about what a request that arrives meanwhile shares the
# interpreter lock with before the build notices it and waits. At 2 000 entries a slice, requests
# during a take-in ran in turns with slices of 100–400 ms (bench/knowledge_speed.py).
PAUSE_EVERY_ENTRIES = 100  # entries looked up, placed or read (fast steps)
PAUSE_EVERY_DERIVED = 5  # entries tokenised for their names and chunks

T = TypeVar("T")


def query_terms(query: str) -> list[str]:
    """The query's distinct tokens, at most ``MAX_QUERY_TOKENS`` of them spread over the whole query."""
    unique = list(dict.fromkeys(TOKENIZER(query, ())))
    if len(unique) <= MAX_QUERY_TOKENS:
        return unique
    last = len(unique) - 1
    return [unique[round(i * last / (MAX_QUERY_TOKENS - 1))] for i in range(MAX_QUERY_TOKENS)]


def wanted_material(material_type: str) -> tuple[str, ...]:
    """``knowledge`` or ``corpus`` alone; ``auto``, ``all`` (or anything else) both."""
    return (material_type,) if material_type in MATERIAL_TYPES else MATERIAL_TYPES


@dataclass(frozen=True, slots=True)
class Ranked:
    """One hit: the entry's position in the index, the chunk to show, and each path's rank (1-based)."""

    entry: int
    chunk: int
    exact: int | None = None
    bm25: int | None = None
    vector: int | None = None
    cosine: float | None = None
    fused: float = 0.0


@dataclass(frozen=True, slots=True)
class _Derived:
    chunk_texts: tuple[str, ...]
    rows: tuple[tuple[tuple[str, int], str], ...]  # (row key, row text) per chunk
    surfaces: tuple[tuple[str, str], ...]  # (strict, loose) per distinct name
    tags: tuple[str, ...]  # distinct, case-folded


def _text_key(entry: SearchEntry) -> tuple[object, ...]:
    """Everything ``_derive`` reads of an entry (not its vectors, type or source)."""
    return (
        entry.pack_id,
        entry.title,
        entry.title_key,
        entry.summary,
        entry.content,
        entry.aliases,
        entry.recognition,
        entry.tags,
        tuple([(chunk.ordinal, chunk.text) for chunk in entry.chunks]),
    )


def _derive(entry: SearchEntry) -> _Derived:
    chunks = _chunk_texts(entry)
    card = entry.card_id
    names = dict.fromkeys((entry.title, *entry.aliases, *entry.recognition))
    return _Derived(
        chunk_texts=chunks,
        rows=tuple(((card, hash(text)), text) for text in _row_texts(entry, chunks)),
        surfaces=tuple((strict_surface(name), loose_surface(name)) for name in names),
        tags=tuple(dict.fromkeys(tag.strip().casefold() for tag in entry.tags)),
    )


@dataclass(slots=True)
class KnowledgeIndex:
    version: str
    entries: list[SearchEntry]
    chunk_texts: list[tuple[str, ...]]
    view: Bm25View
    row_keys: dict[tuple[str, int], int]  # (card id, hash of the row text) → row
    row_entry: np.ndarray  # entry of each row; -1 for a tombstoned row
    row_chunk: np.ndarray
    row_order: np.ndarray  # the live rows by entry and chunk: entry e's rows are row_order[row_start[e]:…]
    row_start: np.ndarray
    material: np.ndarray  # index into MATERIAL_TYPES per entry
    strict: dict[str, list[int]]
    loose: dict[str, list[int]]
    tags: dict[str, list[int]]
    vectors: np.ndarray  # (chunks with a vector, dim) float32, unit rows
    vector_entry: np.ndarray
    vector_chunk: np.ndarray
    # What each entry's text makes (``_text_key``), whatever its position: the next build reuses it for
    # an entry whose text did not change (most of a rebuild's time otherwise, for a change of a few
    # entries), also when only its vectors, type or source did.
    derived: dict[tuple[object, ...], _Derived] = field(default_factory=dict)
    # Of the rows this build added to the BM25 view: how many were read as the import counted them
    # (``stored_rows``) and how many were tokenised (tests, the build's log).
    rows_read: int = 0
    rows_tokenised: int = 0
    _names: dict[int, list[frozenset[str]]] = field(default_factory=dict)
    _allowed: dict[tuple[str, ...], np.ndarray] = field(default_factory=dict)

    @property
    def has_vectors(self) -> bool:
        return bool(self.vectors.shape[0])

    # --- the paths ------------------------------------------------------------------------------------

    def exact(self, query: str, allowed: np.ndarray) -> list[int]:
        """Entries the whole query names (title, alias, recognition term): strict surfaces first, the
        loose ones only when nothing matches strictly, so "C" never pulls in "C++"."""
        for table, surface in ((self.strict, strict_surface(query)), (self.loose, loose_surface(query))):
            if not surface:
                continue
            found = [entry for entry in table.get(surface, ()) if allowed[entry]]
            if found:
                return found
        return []

    def bm25(self, query: str, allowed: np.ndarray) -> tuple[list[int], np.ndarray | None]:
        """Qualified BM25 hits, best first, and every row's score (None: no query term).

        The top ``LEXICAL_CANDIDATES`` entries by their best row's score are kept only when they hold
        ≥ 60 % of the query's terms (CJK bigrams and words: trigrams would make a reordered phrase
        miss) or the query names them (all of a title's or alias's tokens are in the query)."""
        terms = query_terms(query)
        if not terms or not self.view.size:
            return [], None
        scores = self.view.term_scores(terms)
        rows = np.flatnonzero(scores > 0)
        owners = self.row_entry[rows]
        rows = rows[(owners >= 0) & allowed[owners]]  # a dead row's -1 reads the last entry: masked first
        candidates = self._best_entries(rows, scores, LEXICAL_CANDIDATES)
        if not candidates:
            return [], scores
        coverage = self._coverage(terms, candidates)
        wanted = set(terms)
        kept = [
            entry
            for entry in candidates
            if coverage[entry] >= MIN_TOKEN_COVERAGE or self._named(entry, wanted)
        ]
        return kept, scores

    def _best_entries(self, rows: np.ndarray, scores: np.ndarray, count: int) -> list[int]:
        """The ``count`` entries whose best row among ``rows`` scores highest, best first (ties: the
        lower row). Only the top rows are sorted: an entry has few rows, so 4·count rows hold count
        entries unless one entry has many."""
        take = count * 4
        while True:
            if rows.size <= take:
                top = rows
            else:
                # Every row tied with the last one taken too: which of them argpartition picks depends on
                # where the rows are, and an index that took changes has its rows elsewhere.
                floor = scores[rows[np.argpartition(-scores[rows], take)[:take]]].min()
                top = rows[scores[rows] >= floor]
            # Ties go to the earlier entry and chunk, which is the lower row of an index built in one go
            # and so the same order whatever rows an index that took changes appended or tombstoned.
            top = top[np.lexsort((self.row_chunk[top], self.row_entry[top], -scores[top]))]
            owners = self.row_entry[top]
            firsts = np.sort(np.unique(owners, return_index=True)[1])
            if firsts.size >= count or top.size == rows.size:
                return [int(entry) for entry in owners[firsts[:count]]]
            take *= 4

    def entry_rows(self, entry: int) -> np.ndarray:
        return self.row_order[self.row_start[entry] : self.row_start[entry + 1]]

    def best_chunk(self, entry: int, scores: np.ndarray | None) -> int:
        """The chunk of the entry's best-scoring row (the first chunk when none scored)."""
        rows = self.entry_rows(entry)
        if scores is None or not rows.size or not scores[rows].max() > 0:
            return 0
        return int(self.row_chunk[rows[int(np.argmax(scores[rows]))]])

    def _coverage(self, terms: Sequence[str], candidates: Sequence[int]) -> np.ndarray:
        """Per entry, the share of the query's terms it holds (only ``candidates`` are counted)."""
        counted = [term for term in terms if not is_cjk_trigram(term)] or list(terms)
        mask = np.zeros(self.view.size, dtype=bool)
        for entry in candidates:
            mask[self.entry_rows(entry)] = True
        term_at, rows = self.view.term_rows(counted)
        keep = mask[rows]
        owners = self.row_entry[rows[keep]].astype(np.int64)
        pairs = np.unique(owners * len(counted) + term_at[keep])
        covered = np.bincount(pairs // len(counted), minlength=len(self.entries))
        return covered / len(counted)

    def _named(self, entry: int, query_terms: set[str]) -> bool:
        names = self._names.get(entry)
        if names is None:
            record = self.entries[entry]
            names = [frozenset(TOKENIZER(name, ())) for name in (record.title, *record.aliases)]
            self._names[entry] = names
        return any(tokens and tokens <= query_terms for tokens in names)

    def vector_scores(self, query_vector: np.ndarray) -> np.ndarray | None:
        """Every chunk vector's cosine with the query (the costly part of the vector path: a matrix-vector
        product over all chunks, run beside the lexical paths); None for a vector of another length."""
        if not self.has_vectors or query_vector.shape[0] != self.vectors.shape[1]:
            return None
        return np.asarray(self.vectors @ query_vector.astype(np.float32))

    def cosine(self, scores: np.ndarray, allowed: np.ndarray) -> list[tuple[int, float, int]]:
        """(entry, cosine, chunk) of the best chunk of each entry at cosine ≥ 0.5, best first, top 24."""
        rows = np.flatnonzero(scores >= SEMANTIC_THRESHOLD)
        rows = rows[allowed[self.vector_entry[rows]]]
        if not rows.size:
            return []
        rows = rows[np.lexsort((rows, -scores[rows]))]
        entries = self.vector_entry[rows]
        firsts = np.sort(np.unique(entries, return_index=True)[1])[:SEMANTIC_CANDIDATES]
        return [(int(entries[i]), float(scores[rows[i]]), int(self.vector_chunk[rows[i]])) for i in firsts]

    # --- a lookup ---------------------------------------------------------------------------------------

    def allowed(self, material_type: str) -> np.ndarray:
        kinds = wanted_material(material_type)
        mask = self._allowed.get(kinds)
        if mask is None:
            mask = self._allowed[kinds] = np.isin(self.material, [MATERIAL_TYPES.index(k) for k in kinds])
        return mask

    def rank(
        self,
        query: str,
        *,
        material_type: str,
        limit: int,
        query_vector: np.ndarray | None = None,
        vector_scores: Callable[[], np.ndarray | None] | None = None,
    ) -> list[Ranked]:
        """The hits of a lookup, exact matches pinned first, then the RRF of BM25 and cosine. The cosine
        path reads ``query_vector``, or the chunk scores ``vector_scores`` answers once the lexical paths
        are done (None: too late, or no vector)."""
        allowed = self.allowed(material_type)
        exact = self.exact(query, allowed)
        lexical, scores = self.bm25(query, allowed)
        if vector_scores is not None:
            cosines = vector_scores()
        else:
            cosines = self.vector_scores(query_vector) if query_vector is not None else None
        semantic = self.cosine(cosines, allowed) if cosines is not None else []
        fused = rrf_fuse({"bm25": lexical, "vector": [entry for entry, _, _ in semantic]}, k=RRF_K)
        fused_score = dict(fused)
        bm25_rank = {entry: at for at, entry in enumerate(lexical, start=1)}
        vector_rank = {entry: (at, cos, chunk) for at, (entry, cos, chunk) in enumerate(semantic, start=1)}
        exact_rank = {entry: at for at, entry in enumerate(exact, start=1)}
        order = list(dict.fromkeys([*exact, *(entry for entry, _ in fused)]))[:limit]
        hits = []
        for entry in order:
            vector = vector_rank.get(entry)
            # Found by its vector alone: show the chunk that matched.
            chunk = self.best_chunk(entry, scores) if entry in bm25_rank or vector is None else vector[2]
            hits.append(
                Ranked(
                    entry=entry,
                    chunk=chunk,
                    exact=exact_rank.get(entry),
                    bm25=bm25_rank.get(entry),
                    vector=vector[0] if vector else None,
                    cosine=round(vector[1], 4) if vector else None,
                    fused=round(fused_score.get(entry, 0.0), 6),
                )
            )
        return hits

    def sample(self, tag: str, *, material_type: str, limit: int, rng: random.Random) -> list[Ranked]:
        """Random entries carrying ``tag`` (compared case-folded)."""
        allowed = self.allowed(material_type)
        pool = [entry for entry in self.tags.get(tag.strip().casefold(), ()) if allowed[entry]]
        return [Ranked(entry=entry, chunk=0) for entry in rng.sample(pool, min(limit, len(pool)))]


# --- building ----------------------------------------------------------------------------------------


def _row_texts(entry: SearchEntry, chunks: Sequence[str]) -> list[str]:
    return row_texts(
        title=entry.title,
        aliases=entry.aliases,
        recognition=entry.recognition,
        summary=entry.summary,
        tags=entry.tags,
        chunks=chunks,
    )


def _chunk_texts(entry: SearchEntry) -> tuple[str, ...]:
    if entry.chunks:
        return tuple(chunk.text for chunk in sorted(entry.chunks, key=lambda chunk: chunk.ordinal))
    # A store that did not chunk (yet): the same cut the import makes.
    return tuple(entry_chunks(title=entry.title, summary=entry.summary, content=entry.content))


def build_index(
    version: str,
    records: Iterable[SearchEntry],
    *,
    previous: KnowledgeIndex | None = None,
    vector_dim: int | None = None,
    offload_rows: int = OFFLOAD_ROWS,
    pause: Callable[[], object] = lambda: None,
    stored_rows: Callable[[Collection[int]], dict[int, bytes]] | None = None,
) -> KnowledgeIndex:
    """The index of ``records`` at ``version``, reusing ``previous``'s unchanged rows. Vectors are kept
    only when their length is ``vector_dim`` float32 values (None: no vector path). Rows added to
    ``previous`` are read as the import counted them where ``stored_rows`` (chunk ids → stored rows)
    has them; at least ``offload_rows`` rows to tokenise are tokenised in a child process. ``pause`` is
    called between slices of a few milliseconds of work (a background build waits there for the
    requests)."""
    entries = list(records)
    known = previous.derived if previous is not None else {}
    derived: dict[tuple[object, ...], _Derived] = {}
    made_of: list[_Derived] = []
    made_here = 0
    for at, entry in enumerate(entries, 1):
        text_key = _text_key(entry)
        made = known.get(text_key)
        if made is None:
            made = _derive(entry)
            made_here += 1
            if made_here % PAUSE_EVERY_DERIVED == 0:
                pause()
        elif at % PAUSE_EVERY_ENTRIES == 0:
            pause()
        derived[text_key] = made
        made_of.append(made)
    chunk_texts = [made.chunk_texts for made in made_of]
    wanted: list[tuple[tuple[str, int], str, int, int]] = []  # (key, text, entry, chunk)
    for at, made in _paced(enumerate(made_of), pause):
        for chunk, (key, text) in enumerate(made.rows):
            wanted.append((key, text, at, chunk))

    reuse = previous is not None and previous.view.size > 0
    if reuse:
        assert previous is not None
        kept = {key for key, _, _, _ in wanted if key in previous.row_keys}
        dead = previous.view.size - previous.view.dead - len(kept)
        fresh = len(wanted) - len(kept)
        # Appending postings costs more per row than building; a mostly new index is built afresh.
        reuse = previous.view.dead + dead <= len(wanted) and fresh <= max(len(kept), 1)
    if reuse:
        assert previous is not None
        view, row_keys, rows_read, rows_tokenised = view_updated(
            previous, wanted, entries, offload_rows, pause, stored_rows
        )
    else:
        view = tokenised(fresh_view, [text for _, text, _, _ in wanted], offload_rows)
        row_keys = {key: row for row, (key, _, _, _) in enumerate(wanted)}
        rows_read, rows_tokenised = 0, len(wanted)
    row_entry = np.full(view.size, -1, dtype=np.int32)
    row_chunk = np.zeros(view.size, dtype=np.int32)
    for key, _, owner, chunk in _paced(wanted, pause):
        row = row_keys[key]
        row_entry[row] = owner
        row_chunk[row] = chunk
    live = np.flatnonzero(row_entry >= 0)
    row_order = live[np.lexsort((row_chunk[live], row_entry[live]))]
    row_start = np.searchsorted(row_entry[row_order], np.arange(len(entries) + 1)).astype(np.int64)

    pause()
    strict: dict[str, list[int]] = {}
    loose: dict[str, list[int]] = {}
    tags: dict[str, list[int]] = {}
    for at, made in _paced(enumerate(made_of), pause):
        for strict_name, loose_name in made.surfaces:
            for table, surface in ((strict, strict_name), (loose, loose_name)):
                if surface and at not in table.setdefault(surface, [])[-1:]:
                    table[surface].append(at)
        for tag in made.tags:
            tags.setdefault(tag, []).append(at)
    material = np.array(
        [MATERIAL_TYPES.index(e.material_type) if e.material_type in MATERIAL_TYPES else 0 for e in entries],
        dtype=np.int8,
    )
    vectors, vector_entry, vector_chunk = _vectors(entries, vector_dim, pause)
    return KnowledgeIndex(
        version=version,
        entries=entries,
        chunk_texts=chunk_texts,
        view=view,
        row_keys=row_keys,
        row_entry=row_entry,
        row_chunk=row_chunk,
        row_order=row_order,
        row_start=row_start,
        material=material,
        strict=strict,
        loose=loose,
        tags=tags,
        vectors=vectors,
        vector_entry=vector_entry,
        vector_chunk=vector_chunk,
        derived=derived,
        rows_read=rows_read,
        rows_tokenised=rows_tokenised,
    )


def _paced(items: Iterable[T], pause: Callable[[], object]) -> Iterator[T]:
    """``items``, with ``pause`` called after every ``PAUSE_EVERY_ENTRIES`` of them."""
    for at, item in enumerate(items, 1):
        yield item
        if at % PAUSE_EVERY_ENTRIES == 0:
            pause()


def _vectors(
    entries: Sequence[SearchEntry], dim: int | None, pause: Callable[[], object]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not dim:
        return np.zeros((0, 1), dtype=np.float32), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
    size = dim * 4
    parts: list[bytes] = []
    owners: list[int] = []
    chunks: list[int] = []
    for at, entry in _paced(enumerate(entries), pause):
        ordered = sorted(entry.chunks, key=lambda chunk: chunk.ordinal)
        for position, chunk in enumerate(ordered):
            if chunk.vector is not None and len(chunk.vector) == size:
                parts.append(chunk.vector)
                owners.append(at)
                chunks.append(position)
    matrix = np.frombuffer(b"".join(parts), dtype=np.float32).reshape(len(parts), dim)
    return matrix, np.asarray(owners, dtype=np.int32), np.asarray(chunks, dtype=np.int32)
