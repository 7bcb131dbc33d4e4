# ruff: noqa: E501  prose the companion and the model read: wrapping it would scatter the sentences
"""Simplified Chinese."""

TEXT = {
    "master": "### 关于{master}",
    "neko": "### 关于{ai}",
    "relationship": "### 关系动态",
    "scoped": "### 关于{subject}",
    "other": "### {section}",
    "pending": "### {ai}最近的印象（还不太确定）",
    "confirmed": "### {ai}比较确定的印象",
    "past_open": "======以下为较久远的记忆======",
    "past_note": "（这些是较早以前的事，只作背景参考；除非{master}主动提起，否则不要提及。）",
    "past_close": "======以上为较久远的记忆======",
    "suppressed": "### 暂不主动提及的内容（{ai}记得，但最近提到太多次了，不要再主动提起）",
    "now": "刚刚",
    "days": {"one": "{n}天前", "few": "{n}天前", "many": "{n}天前", "other": "{n}天前"},
    "weeks": {"one": "{n}周前", "few": "{n}周前", "many": "{n}周前", "other": "{n}周前"},
    "months": {"one": "{n}个月前", "few": "{n}个月前", "many": "{n}个月前", "other": "{n}个月前"},
    "legacy": "{name}记得：{line}",
}

PROMPTS = {
    "merge": """{name}对{master}有一条已经很确定的新印象，准备写进长期人设。下面是人设里同一类别的已有条目和相关印象。
请决定如何处理这条新印象：
- promote_fresh：它是新的信息，作为一条新条目加入；
- merge_into：它和某条已有人设条目说的是同一件事，把两者合并成一句（target_id 填那条条目方括号里的 id，merged_text 填合并后的文字）；
- reject：它不可靠、与已有内容矛盾或没有长期价值。
merged_text 用新印象和已有条目原本的语言书写，不要翻译。
只输出一个 JSON 对象：{{"action": "promote_fresh|merge_into|reject", "target_id": "persona.<entity>.<id> 或 null", "merged_text": "... 或 null", "reason": "简短理由"}}

新印象（{entity}）：{text}

已有条目：
{pool}""",
    "none": "（无）",
    "corrections": """{name}的长期人设里，有些已有条目和新的观察说的是相近的事，可能互相矛盾。请逐条判断：
- merge：两者合并成一句（text 填合并后的文字）；
- keep_new：新观察取代旧条目（text 填新条目的文字）；
- keep_old：旧条目是对的，丢弃新观察；
- keep_both：两者都成立，各自保留（text 填新条目的文字）。
text 用条目原本的语言书写，不要翻译。
只输出一个 JSON 数组：[{{"index": 0, "action": "merge|keep_new|keep_old|keep_both", "text": "..."}}]

{lines}""",
    "correction_line": "[{index}] 已有(trust={old_trust}): {old_text} | 新观察(trust={new_trust}): {new_text}",
    "import_fuse": "下面是用户从其他程序带来的关于「{entity}」的记忆条目。请把它们融合成少量简洁、不重复的陈述，保留所有确切信息，不要编造。总长度不超过 {cap} 个 token。只输出 JSON 字符串数组。\n\n{items}",
    "refine": """下面是{name}长期人格（分区“{section}”）中几条意思几乎相同的条目。请整理它们，让每件事只清楚地说一次：
- merge：几条说的是同一件事 → 合成一条；
- split：一条里混了互不相关的内容 → 拆成几条；
- modify：一条表述不清或别扭 → 改写得更好，意思不变；
- discard：一条完全被其他条目覆盖，或没有内容。
保留所有具体细节，不要添加条目里没有的内容；沿用条目本身的语言。没问题的条目不要写进答案；全都没问题时回答 []。
条目：
{lines}
只回答一个 JSON 数组，例如：[{{"action": "merge", "ids": [0, 1], "text": "..."}}, {{"action": "split", "id": 2, "texts": ["...", "..."]}}, {{"action": "modify", "id": 3, "text": "..."}}, {{"action": "discard", "id": 4}}]""",
    "refine_line": "[{index}] {text} (evidence={score})",
}
