# ruff: noqa: E501  prose the companion and the model read: wrapping it would scatter the sentences
"""Traditional Chinese (Taiwan)."""

TEXT = {
    "master": "### 關於{master}",
    "neko": "### 關於{ai}",
    "relationship": "### 關係動態",
    "scoped": "### 關於{subject}",
    "other": "### {section}",
    "pending": "### {ai}最近的印象（還不太確定）",
    "confirmed": "### {ai}比較確定的印象",
    "past_open": "======以下為較久遠的記憶======",
    "past_note": "（這些是較早以前的事，只作背景參考；除非{master}主動提起，否則不要提及。）",
    "past_close": "======以上為較久遠的記憶======",
    "suppressed": "### 暫不主動提及的內容（{ai}記得，但最近提到太多次了，不要再主動提起）",
    "now": "剛剛",
    "days": {"one": "{n}天前", "few": "{n}天前", "many": "{n}天前", "other": "{n}天前"},
    "weeks": {"one": "{n}週前", "few": "{n}週前", "many": "{n}週前", "other": "{n}週前"},
    "months": {"one": "{n}個月前", "few": "{n}個月前", "many": "{n}個月前", "other": "{n}個月前"},
    "legacy": "{name}記得：{line}",
}

PROMPTS = {
    "merge": """{name}對{master}有一條已經很確定的新印象，準備寫進長期人設。下面是人設裡同一類別的已有條目和相關印象。
請決定如何處理這條新印象：
- promote_fresh：它是新的資訊，作為一條新條目加入；
- merge_into：它和某條已有人設條目說的是同一件事，把兩者合併成一句（target_id 填那條條目方括號裡的 id，merged_text 填合併後的文字）；
- reject：它不可靠、與已有內容矛盾或沒有長期價值。
merged_text 用新印象和已有條目原本的語言書寫，不要翻譯。
只輸出一個 JSON 物件：{{"action": "promote_fresh|merge_into|reject", "target_id": "persona.<entity>.<id> 或 null", "merged_text": "... 或 null", "reason": "簡短理由"}}

新印象（{entity}）：{text}

已有條目：
{pool}""",
    "none": "（無）",
    "corrections": """{name}的長期人設裡，有些已有條目和新的觀察說的是相近的事，可能互相矛盾。請逐條判斷：
- merge：兩者合併成一句（text 填合併後的文字）；
- keep_new：新觀察取代舊條目（text 填新條目的文字）；
- keep_old：舊條目是對的，丟棄新觀察；
- keep_both：兩者都成立，各自保留（text 填新條目的文字）。
text 用條目原本的語言書寫，不要翻譯。
只輸出一個 JSON 陣列：[{{"index": 0, "action": "merge|keep_new|keep_old|keep_both", "text": "..."}}]

{lines}""",
    "correction_line": "[{index}] 已有(trust={old_trust}): {old_text} | 新觀察(trust={new_trust}): {new_text}",
    "import_fuse": "下面是使用者從其他程式帶來的關於「{entity}」的記憶條目。請把它們融合成少量簡潔、不重複的陳述，保留所有確切資訊，不要編造。總長度不超過 {cap} 個 token。只輸出 JSON 字串陣列。\n\n{items}",
    "refine": """下面是{name}長期人格（分區「{section}」）中幾條意思幾乎相同的條目。請整理它們，讓每件事只清楚地說一次：
- merge：幾條說的是同一件事 → 合成一條；
- split：一條裡混了互不相關的內容 → 拆成幾條；
- modify：一條表述不清或彆扭 → 改寫得更好，意思不變；
- discard：一條完全被其他條目涵蓋，或沒有內容。
保留所有具體細節，不要加入條目裡沒有的內容；沿用條目本身的語言。沒問題的條目不要寫進答案；全都沒問題時回答 []。
條目：
{lines}
只回答一個 JSON 陣列，例如：[{{"action": "merge", "ids": [0, 1], "text": "..."}}, {{"action": "split", "id": 2, "texts": ["...", "..."]}}, {{"action": "modify", "id": 3, "text": "..."}}, {{"action": "discard", "id": 4}}]""",
    "refine_line": "[{index}] {text} (evidence={score})",
}
