"""An entry's chunks: near 900 characters, never over 1 200, at most 32, cut where the text pauses."""

from __future__ import annotations

from knowledge.search import MAX_CHARS, MAX_CHUNKS, MAX_EMBED_CHARS, chunk_embed_text, entry_chunks

CHINESE_SENTENCE = "这是一个关于网络流行语的长段落，用来说明切分时会在句号处断开。"  # 31 characters
ENGLISH_SENTENCE = "Rubber duck debugging asks you to explain each line of code aloud. "  # 67 characters


def test_a_short_entry_is_one_chunk_of_its_content() -> None:
    assert entry_chunks(title="T", summary="S", content="  短内容。 ") == ["短内容。"]


def test_paragraphs_are_packed_to_about_900_characters_and_never_split_inside() -> None:
    paragraphs = [f"第{n}段。" + CHINESE_SENTENCE * 10 for n in range(12)]  # ~315 characters each
    chunks = entry_chunks(title="T", summary="", content="\n\n".join(paragraphs))
    assert all(len(chunk) <= MAX_CHARS for chunk in chunks)
    assert all(len(chunk) >= 600 for chunk in chunks[:-1])  # packed, not one paragraph a chunk
    # Each paragraph lands whole in exactly one chunk.
    for paragraph in paragraphs:
        assert sum(paragraph in chunk for chunk in chunks) == 1


def test_a_long_chinese_paragraph_is_cut_after_sentence_ends_without_spaces() -> None:
    paragraph = CHINESE_SENTENCE * 100  # 3 100 characters, no whitespace at all
    chunks = entry_chunks(title="T", summary="", content=paragraph)
    assert len(chunks) >= 3
    assert all(len(chunk) <= MAX_CHARS for chunk in chunks)
    assert all(chunk.endswith("。") for chunk in chunks)
    assert "".join(chunks) == paragraph


def test_a_long_english_paragraph_is_cut_between_sentences() -> None:
    paragraph = (ENGLISH_SENTENCE * 60).strip()
    chunks = entry_chunks(title="T", summary="", content=paragraph)
    assert all(len(chunk) <= MAX_CHARS and chunk.endswith("aloud.") for chunk in chunks)
    assert " ".join(chunks) == paragraph


def test_a_sentence_longer_than_a_chunk_is_cut_in_even_windows() -> None:
    chunks = entry_chunks(title="T", summary="", content="字" * 2_500)
    assert [len(chunk) for chunk in chunks] == [834, 834, 832]


def test_at_most_32_chunks_an_entry() -> None:
    content = "\n\n".join(CHINESE_SENTENCE * 30 for _ in range(60))  # 60 paragraphs of 930 characters
    chunks = entry_chunks(title="T", summary="", content=content)
    assert len(chunks) == MAX_CHUNKS


def test_an_entry_without_content_is_found_by_its_summary_or_title() -> None:
    assert entry_chunks(title="标题", summary="摘要", content="") == ["摘要"]
    assert entry_chunks(title="标题", summary="", content=" ") == ["标题"]


def test_the_embed_text_leads_with_the_title_and_carries_the_summary_on_the_first_chunk_only() -> None:
    first = chunk_embed_text(title="绝绝子", summary="网络用语", chunk="内容一", first=True)
    later = chunk_embed_text(title="绝绝子", summary="网络用语", chunk="内容二", first=False)
    assert first == "绝绝子\n网络用语\n内容一"
    assert later == "绝绝子\n内容二"
    long = chunk_embed_text(title="T", summary="S" * 900, chunk="C" * 1_200, first=True)
    assert len(long) == MAX_EMBED_CHARS
