"""Entries as the store hands them to the search (a Chinese meme with alias and recognition terms, an
English programming entry, a corpus example), and synthetic unit vectors."""

from __future__ import annotations

import unicodedata

import numpy as np

from knowledge.search import SearchChunk, SearchEntry, entry_chunks


def title_key(title: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", title).split()).casefold()


def entry(
    title: str,
    content: str,
    *,
    pack_id: str = "demo-memes",
    material_type: str = "knowledge",
    summary: str = "",
    aliases: tuple[str, ...] = (),
    recognition: tuple[str, ...] = (),
    tags: tuple[str, ...] = (),
    vectors: list[np.ndarray] | None = None,
    source_name: str = "Demo",
    license: str = "CC0-1.0",
) -> SearchEntry:
    texts = entry_chunks(title=title, summary=summary, content=content)
    chunks = tuple(
        SearchChunk(
            chunk_id=hash((pack_id, title, at)) & 0xFFFFFFF,
            ordinal=at,
            text=text,
            vector=None if vectors is None else unit(vectors[at]).tobytes(),
        )
        for at, text in enumerate(texts)
    )
    return SearchEntry(
        pack_id=pack_id,
        title=title,
        title_key=title_key(title),
        material_type=material_type,
        summary=summary,
        content=content,
        source_name=source_name,
        license=license,
        aliases=aliases,
        recognition=recognition,
        tags=tags,
        chunks=chunks,
    )


def unit(vector: np.ndarray | list[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    return (array / np.linalg.norm(array)).astype(np.float32)


def meme(**fields: object) -> SearchEntry:
    return entry(
        "绝绝子",
        "绝绝子是网络流行语，表示非常好，常用来夸赞别人或者事物。",
        summary="表示极好的网络用语。",
        aliases=("jjz", "绝了"),
        recognition=("绝绝子是什么意思",),
        tags=("domain:meme",),
        **fields,  # type: ignore[arg-type]
    )


def duck(**fields: object) -> SearchEntry:
    return entry(
        "Rubber duck debugging",
        "Rubber duck debugging means explaining your code line by line to a rubber duck until the bug "
        "shows itself.",
        summary="Explaining code aloud to find bugs.",
        aliases=("rubber ducking",),
        tags=("domain:programming",),
        **fields,  # type: ignore[arg-type]
    )


def greeting(**fields: object) -> SearchEntry:
    return entry(
        "早安问候",
        "早上好呀！今天也要元气满满哦，记得吃早饭。",
        pack_id="demo-replies",
        material_type="corpus",
        summary="一句早安问候的范例。",
        tags=("style:cute", "domain:meme"),
        **fields,  # type: ignore[arg-type]
    )
