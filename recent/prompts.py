"""Prompts of the recent layer, in zh and en (paraphrased for nekomem; reference §7 describes the intent).

The dialogue delimiters stay in Simplified Chinese in every language: the original matches them as
a watermark, and the models we target read them fine either way.
"""

from __future__ import annotations

DIALOGUE_START = "======以下为对话======"
DIALOGUE_END = "======以上为对话======"

MEMO_PREFIX = {
    "zh": "先前对话的备忘录: ",
    "en": "Memo of the earlier conversation: ",
}

_SUMMARISE = {
    "zh": (
        "你负责为{name}整理和{master}之间的对话记录。请把下面的对话压缩成一段简洁的备忘录，要求：\n"
        "- 只写对话里真实出现的内容，不要推测，也不要写出会让人误解的句子；\n"
        "- 同一个名词不要反复出现，能用代词就用代词；\n"
        "- 如果某件事后来被更正了，写成「先是X，后来更正为Y」；\n"
        "- {master}明确要求不要再提的事情，要把这条要求原样保留下来；\n"
        "- 如果对话里已有旧的备忘录，把它的内容一并融入新的备忘录。\n"
        '只输出一个 JSON 对象：{{"summary": "<备忘录>"}}，不要输出别的内容。'
    ),
    "en": (
        "You keep the notes of the conversation between {name} and {master}. Condense the dialogue "
        "below into one short memo:\n"
        "- write only what the dialogue actually says; do not guess or phrase anything misleadingly;\n"
        "- avoid repeating the same noun, use pronouns where they are clear;\n"
        '- when something was corrected later, write it as "first X, later corrected to Y";\n'
        "- keep any request of {master} not to bring something up again, word for word;\n"
        "- if the dialogue starts with an earlier memo, fold its content into the new one.\n"
        'Reply with a single JSON object only: {{"summary": "<the memo>"}}.'
    ),
}

_FURTHER = {
    "zh": (
        "下面是{name}和{master}之间对话的备忘录，它太长了。请在不丢失关键信息（尤其是更正和「不要再提」"
        "的要求）的前提下，把它压缩到 500 字以内。\n"
        '只输出一个 JSON 对象：{{"summary": "<压缩后的备忘录>"}}。'
    ),
    "en": (
        "Below is a memo of the conversation between {name} and {master}; it is too long. Shorten it to "
        "at most 500 words, keeping the key facts, corrections and any request not to bring something up.\n"
        'Reply with a single JSON object only: {{"summary": "<the shorter memo>"}}.'
    ),
}

_STALE_HINT = {
    "zh": (
        "注意：上一次整理备忘录已经是一个多小时以前了。旧备忘录里已经过时的内容，请移到新备忘录末尾"
        "单独的一段「较早的事」里，不要和近期的内容混在一起。\n"
    ),
    "en": (
        "Note: the previous memo was written more than an hour ago. Move whatever in it is no longer "
        'current into a separate final paragraph headed "Earlier", apart from the recent events.\n'
    ),
}

_REVIEW = {
    "zh": (
        "下面是{name}和{master}最近的对话记录（可能以一条备忘录开头）。请检查其中{name}的发言是否有前后"
        "矛盾、重复啰嗦、语义混乱或与备忘录冲突的地方，并给出修正后的对话。要求：\n"
        "- 条数和顺序尽量与原对话一致，没有问题的发言原样保留；\n"
        "- 不要编造新的事实，{master}的发言只在明显重复时才精简；\n"
        "- role 只能是 human（{master}）、ai（{name}）或 system（仅限开头的备忘录）。\n"
        '只输出一个 JSON 对象：{{"explanation": "<改了什么以及原因>", '
        '"corrected_dialogue": [{{"role": "human|ai|system", "content": "<文本>"}}]}}。'
    ),
    "en": (
        "Below is the recent conversation between {name} and {master} (it may start with a memo). Check "
        "{name}'s lines for contradictions, needless repetition, confusion or conflicts with the memo, "
        "and return the corrected dialogue:\n"
        "- keep the number and order of messages where possible; leave good lines unchanged;\n"
        "- invent no new facts; shorten {master}'s lines only when they clearly repeat themselves;\n"
        "- role is human ({master}), ai ({name}) or system (only the leading memo).\n"
        'Reply with a single JSON object only: {{"explanation": "<what changed and why>", '
        '"corrected_dialogue": [{{"role": "human|ai|system", "content": "<text>"}}]}}.'
    ),
}


def _framed(dialogue: str) -> str:
    return f"{DIALOGUE_START}\n{dialogue}\n{DIALOGUE_END}"


def summarise_messages(
    *, language: str, name: str, master: str, dialogue: str, stale_hint: bool = False
) -> list[dict[str, str]]:
    system = _SUMMARISE[language].format(name=name, master=master)
    user = (_STALE_HINT[language] if stale_hint else "") + _framed(dialogue)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def further_summarise_messages(
    *, language: str, name: str, master: str, summary: str
) -> list[dict[str, str]]:
    system = _FURTHER[language].format(name=name, master=master)
    return [{"role": "system", "content": system}, {"role": "user", "content": summary}]


def review_messages(*, language: str, name: str, master: str, dialogue: str) -> list[dict[str, str]]:
    system = _REVIEW[language].format(name=name, master=master)
    return [{"role": "system", "content": system}, {"role": "user", "content": _framed(dialogue)}]


def stale_hint_text(language: str) -> str:
    return _STALE_HINT[language]
