"""Tokenizers, overlaps, bracket stripping and token counting (nekomem.language)."""

import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from nekomem.language import counting, tokens
from nekomem.language.counting import count_tokens, heuristic_token_count, truncate_head_tail, truncate_tokens
from nekomem.language.messages import message_text, strip_bracketed
from nekomem.language.normalize import normalized_identity
from nekomem.language.tokens import (
    dice_overlap,
    fts_tokens,
    keyword_overlap,
    keyword_set,
    recall_tokens,
    search_tokens,
)
from tests.support.dataset import turns

# --- recall_tokens (original §4.3) ---------------------------------------------------------------------


def test_recall_tokens_han_run_becomes_bigrams_then_trigrams() -> None:
    assert recall_tokens("喜欢猫咪") == ["喜欢", "欢猫", "猫咪", "喜欢猫", "欢猫咪"]


def test_recall_tokens_keeps_case_and_repeats_and_drops_short_segments() -> None:
    assert recall_tokens("Cats, cats and a DOG! Cats") == ["Cats", "cats", "and", "DOG", "Cats"]


def test_recall_tokens_removes_stop_names_without_joining_neighbours() -> None:
    # "小天" removed; "和" and "去" must not form a bigram across the removed name.
    assert recall_tokens("我和小天去公园", ["小天"]) == ["我和", "去公", "公园", "去公园"]


def test_recall_tokens_splits_on_cjk_punctuation_brackets_dashes_and_ideographic_space() -> None:
    text = "今天，天气【很好】——散步…看书·喝茶\u3000睡觉"
    assert recall_tokens(text) == ["今天", "天气", "很好", "散步", "看书", "喝茶", "睡觉"]


def test_recall_tokens_mixed_segment_follows_majority_rule() -> None:
    # 3 Han of 5 characters: mostly CJK, so the whole segment is n-grammed (the original's behaviour).
    assert recall_tokens("ab很好用") == ["ab", "b很", "很好", "好用", "ab很", "b很好", "很好用"]
    # 2 Han of 6 characters: kept whole.
    assert recall_tokens("iPho很好") == ["iPho很好"]


def test_recall_tokens_kana_and_hangul_count_as_cjk() -> None:
    assert recall_tokens("ねこ 고양이") == ["ねこ", "고양", "양이", "고양이"]


# --- keyword_set / keyword_overlap (§3.6) --------------------------------------------------------------


def test_keyword_set_is_the_set_of_recall_tokens() -> None:
    assert keyword_set("猫猫猫，猫猫", ["主人"]) == {"猫猫", "猫猫猫"}


def test_keyword_overlap_uses_the_smaller_set() -> None:
    a = keyword_set("喜欢猫")  # 喜欢 欢猫 喜欢猫
    b = keyword_set("喜欢狗")  # 喜欢 欢狗 喜欢狗
    assert keyword_overlap(a, b) == pytest.approx(1 / 3)
    assert keyword_overlap({"x", "y"}, {"x", "y", "z", "w"}) == 1.0
    assert keyword_overlap({"x", "y", "z", "w", "v"}, {"x", "y", "q"}) == pytest.approx(2 / 3)


def test_keyword_overlap_contradiction_threshold_example() -> None:
    old = keyword_set("主人喜欢喝咖啡", ["主人"])  # 喜欢 欢喝 喝咖 咖啡 喜欢喝 欢喝咖 喝咖啡
    new = keyword_set("主人不喜欢喝咖啡了", ["主人"])
    assert keyword_overlap(old, new) == 1.0  # every old keyword reappears: flagged (≥ 0.4)


def test_keyword_overlap_empty_is_zero() -> None:
    assert keyword_overlap(set(), {"a"}) == 0.0
    assert keyword_overlap(set(), set()) == 0.0


# --- search_tokens ----------------------------------------------------------------------------------------


def test_search_tokens_splits_mixed_latin_and_cjk_runs() -> None:
    assert search_tokens("iPhone15很好用") == ["iphone15", "很好", "好用", "很好用"]


def test_search_tokens_folds_traditional_width_case_and_diacritics() -> None:
    assert (
        search_tokens("喜歡蘋果") == search_tokens("喜欢苹果") == ["喜欢", "欢苹", "苹果", "喜欢苹", "欢苹果"]
    )
    assert search_tokens("ＣＡＦÉ Naïve") == ["cafe", "naiv"]


def test_search_tokens_stems_and_drops_english_stop_words() -> None:
    assert search_tokens("The cats were running to the parks") == ["cat", "run", "park"]
    assert search_tokens("I like studies") == ["like", "studi"]


def test_search_tokens_removes_stop_names_case_insensitively() -> None:
    assert search_tokens("Master likes 小天的猫", ["master", "小天"]) == ["like", "的猫"]


def test_search_tokens_unigrams_adds_single_han_characters_only() -> None:
    assert search_tokens("猫咪", unigrams=True) == ["猫咪", "猫", "咪"]
    assert search_tokens("ねこ", unigrams=True) == ["ねこ"]


def test_search_tokens_keeps_a_lone_cjk_character_and_numbers() -> None:
    assert search_tokens("猫, 5 dogs") == ["猫", "5", "dog"]


def test_search_tokens_keeps_kana_voicing_marks() -> None:
    assert search_tokens("がっこう") == ["がっ", "っこ", "こう", "がっこ", "っこう"]


# --- fts_tokens / dice / identity (§3.3.4) ----------------------------------------------------------------


def test_fts_tokens_folds_and_keeps_whole_latin_runs() -> None:
    assert fts_tokens("小天喜歡Running, Café!", ["小天"]) == ["喜欢", "running", "cafe"]


def test_fts_tokens_traditional_and_simplified_match_fully() -> None:
    a, b = fts_tokens("主人養了一隻貓"), fts_tokens("主人养了一只猫")
    assert a == b
    assert dice_overlap(a, b) == 1.0


def test_dice_overlap_numbers() -> None:
    assert dice_overlap(["a", "b", "c"], ["b", "c", "d"]) == pytest.approx(2 * 2 / 6)
    assert dice_overlap(["a", "a", "b"], ["a"]) == pytest.approx(2 * 1 / 3)  # sets, not multisets
    assert dice_overlap([], []) == 0.0
    assert dice_overlap(["a"], []) == 0.0


def test_dice_overlap_of_chinese_near_duplicates() -> None:
    a = fts_tokens("主人喜欢猫")  # 主人 人喜 喜欢 欢猫 主人喜 人喜欢 喜欢猫  (7)
    b = fts_tokens("主人喜欢狗")  # 主人 人喜 喜欢 欢狗 主人喜 人喜欢 喜欢狗  (7)
    assert dice_overlap(a, b) == pytest.approx(2 * 5 / 14)


def test_normalized_identity_lowercases_and_collapses_whitespace_only() -> None:
    assert normalized_identity("  Master  LIKES\n\tcats, 小天! ") == "master likes cats, 小天!"
    assert normalized_identity("cats likes master") != normalized_identity("master likes cats")


# --- strip_bracketed / message_text -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I (smiles) love you", "I love you"),
        ("[happy] hi", "hi"),
        ("好（笑）的【旁白】呢", "好的呢"),
        ("{x} a <b>c</b>", "a c"),
        ("a (b [c] d) e", "a e"),
        ("a (b", "a (b"),
        ("a ) b", "a ) b"),
        ("a (b] c) d", "a d"),
        ("(only)", ""),
        ("no brackets", "no brackets"),
        ("  two  spaces kept, 没有括号  ", "two  spaces kept, 没有括号"),
        ("a ) b ） c 】", "a ) b ） c 】"),
        ("only a closer]", "only a closer]"),
    ],
)
def test_strip_bracketed(text: str, expected: str) -> None:
    assert strip_bracketed(text) == expected


def test_message_text_joins_text_parts_only() -> None:
    assert message_text("hello") == "hello"
    assert message_text(None) == ""
    content = [
        {"type": "text", "text": "hi"},
        {"type": "image_url", "image_url": {"url": "data:..."}},
        "there",
        {"type": "text"},
    ]
    assert message_text(content) == "hi\nthere"


# --- token counting ---------------------------------------------------------------------------------------


def test_count_tokens_exact_o200k_values() -> None:
    assert counting.tokenizer_identity() == "o200k_base"
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("你好世界，今天天气很好") == 7
    assert count_tokens("<|endoftext|>") > 1  # special-token text counts as plain text, never raises


def _fixture_texts() -> list[str]:
    """Every turn of the conversation fixtures (zh and en), and a few hard cases."""
    hard = ["<|endoftext|> hi <|fim_prefix|>", "龘𠮷🙂 é\u0301", "a" * 5000, "\u0000 tab\tend"]
    return hard + [row["text"] for dataset in ("memorybank-cn", "memorybank-en") for row in turns(dataset)]


def test_the_compiled_core_counts_as_the_packages_own_api_does() -> None:
    # The package's tiktoken-compatible API is the cross-check of the core we load alone.
    core, package = counting._compiled_core_encoder(), counting._package_encoder()
    texts = _fixture_texts()
    assert len(texts) > 100
    assert [core.encode(text) for text in texts] == [package.encode(text) for text in texts]
    assert counting._encoder() is not None and type(counting._encoder()) is type(core)


def test_counting_loads_the_core_without_importing_the_package() -> None:
    # Importing bpe_openai parses three BPE tables into dicts (~1 s, ~140 MB) counting never reads.
    probe = (
        "import sys; from nekomem.language import counting; "
        "print(counting.count_tokens('你好 hello'), 'bpe_openai' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == [str(count_tokens("你好 hello")), "False"]


@pytest.mark.parametrize("budget", range(1, 8))
def test_a_cut_inside_a_character_drops_its_partial_bytes(budget: int) -> None:
    text = "龘𠮷🙂龘𠮷🙂"  # rare characters: byte-level tokens, so cuts fall inside characters
    head, tail = truncate_tokens(text, budget), counting._tail(text, budget)
    assert text.startswith(head) and text.endswith(tail)
    assert "\ufffd" not in head + tail
    assert count_tokens(head) <= budget and count_tokens(tail) <= budget
    assert (head and tail) or budget < 3


def test_count_tokens_is_monotonic_in_appended_text() -> None:
    text = "主人今天去公园散步，看到了很多可爱的小狗。The weather was lovely. "
    counts = [count_tokens(text * n) for n in range(1, 6)]
    assert counts == sorted(counts)
    assert counts[-1] > counts[0]


def test_chinese_costs_more_tokens_per_character_than_english() -> None:
    zh, en = "我今天很开心，因为天气很好。", "I am very happy today because the weather is nice."
    assert count_tokens(zh) / len(zh) > count_tokens(en) / len(en)


@pytest.mark.parametrize("budget", [1, 5, 17, 100])
def test_truncate_tokens_respects_budget_and_is_a_prefix(budget: int) -> None:
    text = "主人喜欢在周末去图书馆看书。" * 20 + " And then she walks home slowly. " * 10
    cut = truncate_tokens(text, budget)
    assert count_tokens(cut) <= budget
    assert text.startswith(cut)
    assert count_tokens(cut) >= budget - 2  # uses (almost) all of the budget


def test_truncate_tokens_returns_short_text_unchanged() -> None:
    assert truncate_tokens("short text", 100) == "short text"
    assert truncate_tokens("anything", 0) == ""


def test_truncate_head_tail_keeps_both_ends() -> None:
    text = "开头" + "中间的内容很长。" * 300 + "结尾"
    cut = truncate_head_tail(text, 250, 250)
    head, marker, tail = cut.partition(counting.HEAD_TAIL_MARKER)
    assert marker
    assert text.startswith(head) and text.endswith(tail)
    assert count_tokens(head) <= 250 and count_tokens(tail) <= 250
    assert truncate_head_tail("short", 250, 250) == "short"


def test_heuristic_counter_is_close_to_o200k() -> None:
    samples = [
        "你好，我叫张曼婷，很高兴认识你。我很喜欢绘画、弹钢琴和品茶。",
        "I really enjoy painting, playing piano and tea tasting. Do you have any good book recommendations?",
    ]
    for sample in samples:
        exact = count_tokens(sample)
        assert abs(heuristic_token_count(sample) - exact) <= 0.25 * exact
    assert heuristic_token_count("") == 0


def test_heuristic_truncation_respects_budget() -> None:
    # The no-encoder fallback path of truncate_tokens / truncate_head_tail.
    text = "主人喜欢在周末去图书馆看书。" * 50
    head, tail = counting.heuristic_prefix(text, 40), counting.heuristic_suffix(text, 40)
    assert head and text.startswith(head) and heuristic_token_count(head) <= 40
    assert tail and text.endswith(tail) and heuristic_token_count(tail) <= 40
    assert heuristic_token_count(text[: len(head) + 1]) > 40


def test_stemming_from_many_threads_at_once_gives_each_word_its_own_stem() -> None:
    # A snowball stemmer keeps the word it works on in the instance: threads sharing one garbled each
    # other's words (IndexError inside the stemmer) once the interpreter switched threads often.
    import sys
    import threading

    from nekomem.language import stemming

    words = [
        f"{stem}{suffix}"
        for stem in ("walk", "jump", "play", "cook", "paint")
        for suffix in ("ing", "ed", "s", "ings", "ers", "ness", "ational", "fulness")
    ] * 40
    expected = [stemming._stemmer(stemming.ENGLISH).stemWord(w) for w in words]
    failures: list[BaseException] = []
    results: dict[int, list[str]] = {}

    def stem_all(worker: int) -> None:
        try:
            results[worker] = [stemming._stemmer(stemming.ENGLISH).stemWord(w) for w in words]
        except BaseException as exc:  # any failure of the stemmer is the finding
            failures.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=stem_all, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not failures
    assert all(result == expected for result in results.values()) and len(results) == 8


def test_the_token_table_loads_once_however_many_threads_ask_for_it_first() -> None:
    counting._encoder_loaded.cache_clear()
    together = threading.Barrier(4)

    def first_count(_: int) -> object:
        together.wait()
        return counting._encoder()

    with ThreadPoolExecutor(4) as pool:
        encoders = list(pool.map(first_count, range(4)))
    assert counting._encoder_loaded.cache_info().misses == 1
    assert len({id(encoder) for encoder in encoders}) == 1


def test_a_starting_worker_loads_the_token_table_in_the_background() -> None:
    from nekomem.runtime import warmups

    assert warmups._warm_ups["token-counter"] is counting.token_counter_warm_up
    assert "token-counter" not in warmups.before_serving_order()  # its ~2 s would hold the first requests


def test_word_chars_are_single_han_and_hangul_characters_folded_to_simplified() -> None:
    # Kana are particles or parts of words, never a word alone; names are stop words here too.
    assert tokens.word_chars("我家的貓と개, cat 小雨", ["小雨"]) == ["我", "家", "的", "猫", "개"]
    assert [t for t in ("猫", "개", "ね", "ab", "猫猫") if tokens.is_word_char(t)] == ["猫", "개"]
