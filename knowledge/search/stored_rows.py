"""BM25 rows counted once, by the import job, and stored with their chunks, so a serving process takes a
new pack into its index by reading numbers instead of tokenising ~5 MB of text.

Tokenising a 5 000-entry pack is ~2.5 s of one core (half the tokeniser, half counting and hashing the
terms). In a serving process it either held the GIL against the requests or, in a child at a low
priority, waited for a free core; the import job already runs in a task worker, off the requests.

A stored row is ``digest | length | keys | tfs``: the digest is of the tokeniser's stamp and the row's
text, so a row whose text the index makes differently (its names changed since, or another tokeniser)
does not match, and is tokenised again as if nothing were stored.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping, Sequence

import numpy as np

from knowledge.search.tokenising import TOKENIZER, counted_flat
from recall.engine import CountedRows

DIGEST_BYTES = 8
_HEADER = struct.Struct("<8si")  # digest, row length in tokens
# A text through every step of the tokeniser (Traditional→Simplified, CJK n-grams, case, stemming,
# stop words): a tokeniser that answers it differently stamps its rows differently.
_PROBE = "預熱 猫咪散步 Running the Dogs' café-au-lait 3.14 и кошки corriendo"
STAMP = hashlib.blake2b(
    b"knowledge-rows-1\0" + "\0".join(TOKENIZER(_PROBE, ())).encode("utf-8"), digest_size=DIGEST_BYTES
).digest()


def row_digest(text: str) -> bytes:
    encoded = text.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(encoded, digest_size=DIGEST_BYTES, key=STAMP).digest()


def rows_stored_form(texts: Sequence[str], known: Mapping[bytes, bytes] | None = None) -> list[bytes]:
    """Each row of ``texts`` counted as the index counts it (``counted_flat``), in its stored form.
    ``known``: stored rows by their digest (``stored_digest``; a previous version's), taken as they
    are for a text of that digest instead of counting it again."""
    digests = [row_digest(text) for text in texts]
    out: list[bytes | None] = [known.get(digest) for digest in digests] if known else [None] * len(texts)
    missing = [at for at, row in enumerate(out) if row is None]
    rows = counted_flat([texts[at] for at in missing])
    start = 0
    for at, terms, length in zip(missing, rows.terms.tolist(), rows.lengths.tolist(), strict=True):
        out[at] = (
            _HEADER.pack(digests[at], length)
            + rows.keys[start : start + terms].tobytes()
            + rows.tfs[start : start + terms].tobytes()
        )
        start += terms
    return [row for row in out if row is not None]


def stored_digest(row: bytes) -> bytes:
    """The digest a stored row was counted for (of the tokeniser's stamp and the row's text)."""
    return row[:DIGEST_BYTES]


def rows_from_stored(texts: Sequence[str], stored: Sequence[bytes | None]) -> list[CountedRows | None]:
    """Each row's counted form read from ``stored`` (one a row, None: nothing stored), or None where
    nothing usable is stored for that text (to be tokenised)."""
    out: list[CountedRows | None] = []
    for text, blob in zip(texts, stored, strict=True):
        out.append(_row_read(text, blob) if blob else None)
    return out


def _row_read(text: str, blob: bytes) -> CountedRows | None:
    if len(blob) < _HEADER.size or (len(blob) - _HEADER.size) % 9:
        return None
    digest, length = _HEADER.unpack_from(blob)
    if digest != row_digest(text):
        return None
    terms = (len(blob) - _HEADER.size) // 9
    keys_end = _HEADER.size + 8 * terms
    return CountedRows(
        keys=np.frombuffer(blob, dtype="<i8", count=terms, offset=_HEADER.size).astype(np.int64),
        tfs=np.frombuffer(blob, dtype=np.uint8, count=terms, offset=keys_end),
        terms=np.array([terms], dtype=np.int32),
        lengths=np.array([length], dtype=np.int32),
    )


def rows_joined(rows: Sequence[CountedRows]) -> CountedRows:
    """Counted rows one after another, as one ``CountedRows`` (``Bm25View.append_flat`` takes it)."""
    if not rows:
        return CountedRows(
            keys=np.zeros(0, np.int64),
            tfs=np.zeros(0, np.uint8),
            terms=np.zeros(0, np.int32),
            lengths=np.zeros(0, np.int32),
        )
    return CountedRows(
        keys=np.concatenate([row.keys for row in rows]),
        tfs=np.concatenate([row.tfs for row in rows]),
        terms=np.concatenate([row.terms for row in rows]),
        lengths=np.concatenate([row.lengths for row in rows]),
    )


def rows_split(rows: CountedRows) -> list[CountedRows]:
    """``rows`` as one ``CountedRows`` a row."""
    out: list[CountedRows] = []
    at = 0
    for terms, length in zip(rows.terms.tolist(), rows.lengths.tolist(), strict=True):
        out.append(
            CountedRows(
                keys=rows.keys[at : at + terms],
                tfs=rows.tfs[at : at + terms],
                terms=np.array([terms], dtype=np.int32),
                lengths=np.array([length], dtype=np.int32),
            )
        )
        at += terms
    return out
