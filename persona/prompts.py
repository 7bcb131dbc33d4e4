# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Prompts of the persona layer, in our own words (zh and en)."""

from __future__ import annotations

from typing import Any

_MERGE = {
    "zh": """{name}对{master}有一条已经很确定的新印象，准备写进长期人设。下面是人设里同一类别的已有条目和相关印象。
请决定如何处理这条新印象：
- promote_fresh：它是新的信息，作为一条新条目加入；
- merge_into：它和某条已有人设条目说的是同一件事，把两者合并成一句（target_id 填那条条目方括号里的 id，merged_text 填合并后的文字）；
- reject：它不可靠、与已有内容矛盾或没有长期价值。
只输出一个 JSON 对象：{{"action": "promote_fresh|merge_into|reject", "target_id": "persona.<entity>.<id> 或 null", "merged_text": "... 或 null", "reason": "简短理由"}}

新印象（{entity}）：{text}

已有条目：
{pool}""",
    "en": """{name} holds a new, well-established impression of {master} that is about to enter the long-term persona. Below are the persona's existing entries of the same kind and related impressions.
Decide what to do with the new impression:
- promote_fresh: it is new information; add it as a new entry;
- merge_into: it says the same as one existing persona entry; merge the two into one sentence (target_id is that entry's id in brackets, merged_text the merged wording);
- reject: it is unreliable, contradicts what is known, or has no lasting value.
Answer with one JSON object only: {{"action": "promote_fresh|merge_into|reject", "target_id": "persona.<entity>.<id> or null", "merged_text": "... or null", "reason": "a short reason"}}

New impression ({entity}): {text}

Existing entries:
{pool}""",
}

_CORRECTIONS = {
    "zh": """{name}的长期人设里，有些已有条目和新的观察说的是相近的事，可能互相矛盾。请逐条判断：
- merge：两者合并成一句（text 填合并后的文字）；
- keep_new：新观察取代旧条目（text 填新条目的文字）；
- keep_old：旧条目是对的，丢弃新观察；
- keep_both：两者都成立，各自保留（text 填新条目的文字）。
只输出一个 JSON 数组：[{{"index": 0, "action": "merge|keep_new|keep_old|keep_both", "text": "..."}}]

{lines}""",
    "en": """In {name}'s long-term persona, some existing entries and new observations talk about nearly the same thing and may contradict each other. Judge each pair:
- merge: combine both into one sentence (text is the merged wording);
- keep_new: the new observation replaces the old entry (text is the new entry's wording);
- keep_old: the old entry is right; drop the new observation;
- keep_both: both hold; keep each (text is the new entry's wording).
Answer with one JSON array only: [{{"index": 0, "action": "merge|keep_new|keep_old|keep_both", "text": "..."}}]

{lines}""",
}


def _pick(table: dict[str, str], language: str) -> str:
    return table.get(language, table["en"])


def merge_messages(
    *, name: str, master: str, entity: str, text: str, pool: list[str], language: str
) -> list[dict[str, Any]]:
    none = "（无）" if language == "zh" else "(none)"
    prompt = _pick(_MERGE, language).format(
        name=name, master=master, entity=entity, text=text, pool="\n".join(pool) or none
    )
    return [{"role": "user", "content": prompt}]


def corrections_messages(*, name: str, lines: list[str], language: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": _pick(_CORRECTIONS, language).format(name=name, lines="\n".join(lines))}
    ]
