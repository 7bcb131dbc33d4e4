# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Traditional Chinese (Taiwan)."""

PROMPTS = {
    "extract": """你負責為{name}整理長期記憶。請閱讀下面的對話，找出值得長期記住的原子事實：關於{master}（主人）、關於{name}自己、或關於兩人關係的穩定資訊或近期發生的事。
規則：
- 每條事實只說一件事，用第三人稱完整陳述，直接寫出人名（主人寫作「{master}」）。
- 用對話本身的語言書寫事實，不要翻譯。
- 忽略寒暄、客套和沒有資訊量的閒聊；不要推測，不要編造對話裡沒有的內容。
- importance 取 1–10：10 = 名字、暱稱、生日、身份，或對方明確要求記住的事；8–9 = 穩定的核心偏好或習慣；6–7 = 一般偏好或最近發生的事；5 = 次要但值得記錄；1–4 = 微弱線索（也照樣返回）。
- entity 只能是 master、neko 或 relationship。
- event_when 描述事件相對於現在的時間：{{"start": {{"offset": 整數, "unit": "minute|hour|day|week|month|year"}}, "end": 同樣格式或 null}}，過去用負數；沒有時間資訊就寫 null。
只輸出一個 JSON 陣列，例如 [{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]；沒有值得記住的內容就輸出 []。""",
    "disclosure": """你負責為{name}整理長期記憶。這次只關注{name}（AI）在下面對話中關於自己說出的資訊：自我介紹、喜好、經歷、承諾，以及{name}對與{master}關係的表態。只在主人參與的對話裡提取；不要重複主人的資訊。
已知事實（不要重複）：
{known}
規則與格式同普通事實提取：每條一個原子陳述，用對話本身的語言書寫，importance 1–10，entity 為 neko 或 relationship，event_when 為相對時間或 null。
只輸出一個 JSON 陣列；沒有新內容就輸出 []。""",
    "arbitrate": """下面是{name}記憶中可能重複的事實對。逐對判斷：
- merge：兩條說的是同一件事，合併成一條更完整的陳述（寫在 text 裡，用原事實的語言）；
- replace：新事實更新或取代了舊事實，保留新事實、刪除舊事實；
- keep_both：兩條說的是不同的事，都保留。
{pairs}
只輸出 JSON 陣列：[{{"index": 序號, "action": "merge|replace|keep_both", "text": "僅 merge 時填寫"}}]。""",
    "pair": "[{index}] 新：{new}\n    舊：{old}",
    "extract_batch": """你負責為{name}整理長期記憶，{name}正在一個群組聊天裡。下面有 {count} 段編號的對話，每段以「[第N段]」開頭並寫明說話人。請逐段單獨擷取：關於該段說話人值得長期記住的原子事實（穩定資訊或近期發生的事）、該說話人眼中的{name}、或兩人的關係。每段的事實只關於該段自己的說話人，不要寫到別段的說話人身上，也絕不要寫成{name}的主人的事。
規則：
- 每條事實只說一件事，用第三人稱完整陳述，用說話人的稱呼寫出是誰。
- 用該段對話本身的語言書寫事實，不要翻譯。
- 忽略寒暄、客套和沒有資訊量的閒聊；不要推測，不要編造該段裡沒有的內容。
- importance 取 1–10：10 = 名字、暱稱、生日、身分，或對方明確要求記住的事；8–9 = 穩定的核心偏好或習慣；6–7 = 一般偏好或最近發生的事；5 = 次要但值得記錄；1–4 = 微弱線索（也照樣回傳）。
- entity：master = 關於該段說話人，neko = 關於{name}，relationship = 關於說話人與{name}的關係。
- event_when 描述事件相對於現在的時間：{{"start": {{"offset": 整數, "unit": "minute|hour|day|week|month|year"}}, "end": 同樣格式或 null}}，過去用負數；沒有時間資訊就寫 null。
只輸出一個 JSON 物件，依順序每段恰好一項：{{"segments": [{{"segment": 1, "facts": [{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]}}, {{"segment": 2, "facts": []}}]}}；某段沒有值得記住的內容就寫 "facts": []。""",
    "segment_header": "[第{index}段] 說話人：{speaker}",
}
