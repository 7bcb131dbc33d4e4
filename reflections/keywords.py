"""Words that suggest the master is correcting, denying or refusing something, per locale (reference §3.2
and §3.4's negative-keyword hook): a message with one of them sends the last user messages to the emotion
tier, which names the observations they deny. A hint that costs one LLM call, not a verdict: the lists
favour phrases a speaker uses to push back ("that's not true", "stop talking about it") over bare
negations that every other sentence contains.

Matched on the folded text (NFKC, Traditional → Simplified, lower case, diacritics off), so the zh-TW list
and the zh one fold to the same words, and "não" matches "nao" typed without the tilde. Every list is
tried whatever the locale: a user may push back in another language than the one set.
"""

from __future__ import annotations

from functools import lru_cache

from nekomem.language.normalize import normalize_for_search

NEGATIVE_KEYWORDS: dict[str, tuple[str, ...]] = {
    "zh": (
        "不是", "不对", "没有", "错了", "才不", "并不", "不再", "别再", "不喜欢", "搞错", "误会", "瞎说",
        "别说了", "别提了", "不要再说", "不要再提", "不想聊", "不想提",
    ),
    "zh-TW": (
        "不是", "不對", "沒有", "錯了", "才不", "並不", "不再", "別再", "不喜歡", "搞錯", "誤會", "亂講",
        "別說了", "別提了", "不要再說", "不要再提", "不想聊", "不想提",
    ),
    "en": (
        "not true", "wrong", "no longer", "don't", "do not", "never", "isn't", "not really", "stop saying",
        "that's not", "i'm not", "doesn't", "stop talking about", "stop bringing", "drop it",
    ),
    "ja": (
        "違う", "ちがう", "違います", "そうじゃない", "そんなことない", "間違", "誤解", "もう好きじゃない",
        "好きじゃない", "その話はやめ", "その話やめ", "やめて", "もう言わないで", "話したくない",
        "してない", "してません", "もうしない",
    ),
    "ko": (
        "아니야", "아니에요", "아닌데", "아니거든", "틀렸", "잘못 알", "오해", "그만해", "그 얘기 그만",
        "얘기하지 마", "말하지 마", "안 좋아해", "안 좋아하", "더 이상", "안 했어", "안 했는데",
    ),
    "ru": (
        "неправда", "не правда", "это не так", "не так", "ошибаешься", "ошибся", "ошиблась", "неверно",
        "больше не", "я не ", "не люблю", "хватит об этом", "хватит", "перестань", "не говори об этом",
        "не напоминай", "никогда",
    ),
    "es": (
        "no es verdad", "no es cierto", "te equivocas", "estás equivocad", "no es así", "ya no", "nunca",
        "no me gusta", "deja de hablar", "deja de mencionar", "no quiero hablar", "no hables de", "yo no ",
        "no soy", "eso no",
    ),
    "pt": (
        "não é verdade", "não é bem assim", "você está errad", "está errado", "errado", "já não", "não mais",
        "nunca", "não gosto", "pare de falar", "para de falar", "não quero falar", "não fale", "eu não ",
        "não sou", "chega disso", "isso não",
    ),
}  # fmt: skip


def _fold(text: str) -> str:
    return normalize_for_search(text).replace("\u2019", "'")  # don’t typed with a curly apostrophe


@lru_cache(maxsize=1)
def _folded_keywords() -> tuple[str, ...]:
    return tuple(sorted({_fold(word) for words in NEGATIVE_KEYWORDS.values() for word in words}))


def has_negative_keyword(texts: list[str]) -> bool:
    """Whether any of the messages contains a word of pushback in any locale."""
    folded = _fold(" ".join(texts)) + " "  # the trailing space lets "yo no " end a message
    return any(word in folded for word in _folded_keywords())
