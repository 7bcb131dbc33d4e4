"""An entry's content cut into chunks (reference §1.8): about 900 characters, at most 1 200, at most 32 an
entry, cut at paragraph, then sentence boundaries (CJK sentence ends need no space after them), and only
as a last resort inside a sentence. The store calls these when it imports a pack."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

TARGET_CHARS = 900
MAX_CHARS = 1_200
MAX_CHUNKS = 32
MAX_EMBED_CHARS = 2_000

_PARAGRAPH_RE = re.compile(r"\n\s*\n")
# After a CJK sentence end, or after a Latin one followed by whitespace (so "3.14" and "e.g." stay whole
# unless a space follows, which is a sentence end often enough).
_SENTENCE_END_RE = re.compile(r"(?<=[。！？；…!?;])|(?<=[.])(?=\s)")
_SPACE_RE = re.compile(r"\s+")


def _windows(text: str) -> list[str]:
    """A sentence longer than a chunk, in even windows of at most ``MAX_CHARS`` (near ``TARGET_CHARS``)."""
    count = math.ceil(len(text) / TARGET_CHARS)
    size = math.ceil(len(text) / count)
    return [text[at : at + size] for at in range(0, len(text), size)]


def _pieces(paragraph: str) -> list[str]:
    """A paragraph as pieces of at most ``MAX_CHARS``: whole when it fits, else its sentences packed."""
    if len(paragraph) <= MAX_CHARS:
        return [paragraph]
    pieces: list[str] = []
    current = ""
    for sentence in (s.strip() for s in _SENTENCE_END_RE.split(paragraph)):
        if not sentence:
            continue
        if len(sentence) > MAX_CHARS:
            if current:
                pieces.append(current)
                current = ""
            pieces.extend(_windows(sentence))
            continue
        spaced = current and not _cjk_join(current, sentence)
        joined = f"{current} {sentence}" if spaced else current + sentence
        if current and len(joined) > MAX_CHARS:
            pieces.append(current)
            current = sentence
        else:
            current = joined
    if current:
        pieces.append(current)
    return pieces


def _cjk_join(left: str, right: str) -> bool:
    # Chinese and Japanese sentences follow each other without a space.
    return ord(left[-1]) >= 0x2E80 and ord(right[0]) >= 0x2E80


def entry_chunks(*, title: str, summary: str, content: str) -> list[str]:
    """The entry's chunks in order: about ``TARGET_CHARS`` each, never over ``MAX_CHARS``, at most
    ``MAX_CHUNKS`` (the rest of a very long entry is not indexed). An entry without content is one chunk
    of its summary, or of its title, so every entry can be found and shown."""
    chunks: list[str] = []
    current = ""
    for paragraph in (p.strip() for p in _PARAGRAPH_RE.split(content)):
        if not paragraph:
            continue
        for piece in _pieces(paragraph):
            joined = f"{current}\n\n{piece}" if current else piece
            if current and (len(joined) > MAX_CHARS or len(current) >= TARGET_CHARS):
                chunks.append(current)
                current = piece
            else:
                current = joined
            if len(chunks) >= MAX_CHUNKS:
                return chunks
    if current:
        chunks.append(current)
    if not chunks:
        fallback = (summary or title).strip()[:MAX_CHARS]
        return [fallback] if fallback else []
    return chunks[:MAX_CHUNKS]


def chunk_embed_text(*, title: str, summary: str, chunk: str, first: bool) -> str:
    """What a chunk's vector is computed from: the title, the summary (first chunk only) and the chunk,
    at most ``MAX_EMBED_CHARS``. The title leads every chunk so a later chunk still says what it is about."""
    lines = [_SPACE_RE.sub(" ", title).strip()]
    if first and summary.strip():
        lines.append(_SPACE_RE.sub(" ", summary).strip())
    lines.append(chunk.strip())
    return "\n".join(line for line in lines if line)[:MAX_EMBED_CHARS]


def row_texts(
    *,
    title: str,
    aliases: Sequence[str],
    recognition: Sequence[str],
    summary: str,
    tags: Sequence[str],
    chunks: Sequence[str],
) -> list[str]:
    """The BM25 rows of an entry, one a chunk: each carries the entry's names (so a name found in any
    chunk finds the entry), the first also its summary and tags. The index and the import (which
    counts them once for every server, ``stored_rows``) both make them here."""
    names = "\n".join((title, *aliases, *recognition))
    first = "\n".join((names, summary, *tags))
    return [f"{first if at == 0 else names}\n{chunk}" for at, chunk in enumerate(chunks)]
