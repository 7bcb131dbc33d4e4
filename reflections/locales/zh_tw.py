# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Traditional Chinese (Taiwan)."""

PROMPTS = {
    "synthesis": """你在幫{name}整理對{master}的長期印象。下面是最近記下的一些事實（以及一些更早、已經整理過的相關事實，僅作背景）。
請把它們歸納成一條更高層的印象：{name}從這些事實裡看出了什麼？
要求：
- 一句到三句話，少於 150 字；直接寫人名（主人寫作「{master}」）；不要編造事實中沒有的內容。
- 用這些事實本身的語言書寫印象，不要翻譯。
- entity 只能是 master、neko、relationship。
- relation_type 必須與 entity 對應：master → preference|trait|habit|identity|emotional|boundary；neko → self_awareness|learned|role_note；relationship → dynamic|milestone|tension|shared_memory|agreement。
- temporal_scope 是 pattern（長期規律）、state（一段時間的狀態）、episode（一次事件）或 past（已經過去）。
- subject 是這條印象的主題（幾個字），event_when 同事實的相對時間格式或 null。
只輸出一個 JSON 物件：{{"reflection": "...", "entity": "...", "relation_type": "...", "temporal_scope": "...", "subject": "...", "event_when": null}}

新事實：
{facts}

相關的舊事實：
{related}""",
    "feedback": """{name}最近主動向{master}提起過下面這些印象：
{items}
請根據{master}在下面對話中的回應判斷每一條：confirmed（認同、補充或默認是對的）、denied（否認、糾正）、ignored（沒有回應這一條）。
只輸出一個 JSON 陣列：[{{"reflection_id": "...", "feedback": "confirmed|denied|ignored"}}]""",
    "signals": """下面是{name}對{master}的現有印象（observations），以及從最近對話中新提取的事實。
請判斷每條新事實是否支持（reinforces）或反駁（negates）某條現有印象；無關的不要輸出。
現有印象：
{observations}
新事實：
{facts}
只輸出一個 JSON 物件：{{"signals": [{{"source_fact_id": "...", "target_id": "...", "target_type": "reflection|persona", "signal": "reinforces|negates", "reason": "..."}}]}}""",
    "keyword": """{master}剛剛說了一些像是否定或糾正的話。下面是{master}最近的消息，以及{name}現有的印象。
哪些印象被{master}的話否定了？沒有就輸出空列表。
{master}的消息：
{messages}
現有印象：
{observations}
只輸出一個 JSON 物件：{{"targets": [{{"target_id": "...", "reason": "..."}}]}}""",
    "rebuttal": """下面是{name}比較確定的關於{master}的印象，以及{master}最近的消息。
有沒有哪條印象被這些消息明確推翻了？只有明確推翻時才判 denied。
印象：
{observations}
{master}的消息：
{messages}
只輸出一個 JSON 物件：{{"verdicts": [{{"reflection_id": "...", "verdict": "denied|kept"}}]}}""",
    "rerank": """下面是{name}關於{master}的記憶（帶編號），以及關於{master}的新內容。哪些記憶與新內容最相關？每條記憶的證據分只作參考。
新內容：
{queries}
記憶：
{memories}
只輸出一個 JSON 物件：{{"ranked": [最相關記憶的編號，最相關的在前，最多 {budget} 個]}}""",
    "fact_line": "- {text}（重要程度：{importance}）",
    "refine": """下面是{name}對{master}的幾條意思幾乎相同的印象。請整理它們，讓每件事只清楚地說一次：
- merge：幾條說的是同一件事 → 合成一條；
- split：一條裡混了互不相關的內容 → 拆成幾條；
- modify：一條表述不清或彆扭 → 改寫得更好，意思不變；
- discard：一條完全被其他印象涵蓋，或沒有內容。
保留所有具體細節，不要加入原文沒有的內容；沿用原文的語言。沒問題的印象不要寫進答案；全都沒問題時回答 []。
印象：
{lines}
只回答一個 JSON 陣列，例如：[{{"action": "merge", "ids": [0, 1], "text": "..."}}, {{"action": "split", "id": 2, "texts": ["...", "..."]}}, {{"action": "modify", "id": 3, "text": "..."}}, {{"action": "discard", "id": 4}}]""",
    "recheck_reflection": """{name}在 {date} 記下了對{master}的這條印象：
{text}
請重新分類：
- temporal_scope：pattern（長期模式）、state（一段時間的狀態）、episode（一次事件）或 past（現在已經過去）；
- event_when：它描述的事發生在什麼時候，相對 {date}：{{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": null}}，早於那天用負數 offset，有結束時間時 "end" 用同樣的格式；沒有時間資訊時為 null。
只回答一個 JSON 物件：{{"temporal_scope": "pattern|state|episode|past", "event_when": null}}""",
    "recheck_fact": """{name}在 {date} 記下了這條事實：
{text}
它描述的事發生在什麼時候，相對 {date}？event_when 為 {{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": null}}，早於那天用負數 offset，有結束時間時 "end" 用同樣的格式；沒有時間資訊時為 null。
只回答一個 JSON 物件：{{"event_when": null}}""",
    "refine_line": "[{index}] {text} (evidence={score})",
}
