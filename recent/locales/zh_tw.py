"""Traditional Chinese (Taiwan)."""

TEXT = {
    "theater_titled": "【劇場回顧】《{title}》：{summary}",
    "theater_untitled": "【劇場回顧】{summary}",
    # /get_recent_history opens with the second half of the inner-thoughts sentence (reference §5.1).
    "history_intro": "開始聊天前，{name}又在腦海裡整理了近期發生的事情。",
    "history_empty": "開始聊天前，沒有歷史記錄。",
    "memo_prefix": "先前對話的備忘錄: ",
}

PROMPTS = {
    "summarise": (
        "你負責為{name}整理和{master}之間的對話記錄。請把下面的對話壓縮成一段簡潔的備忘錄，要求：\n"
        "- 只寫對話裡真實出現的內容，不要推測，也不要寫出會讓人誤解的句子；\n"
        "- 同一個名詞不要反覆出現，能用代名詞就用代名詞；\n"
        "- 如果某件事後來被更正了，寫成「先是X，後來更正為Y」；\n"
        "- {master}明確要求不要再提的事情，要把這條要求原樣保留下來；\n"
        "- 如果對話裡已有舊的備忘錄，把它的內容一併融入新的備忘錄。\n"
        '只輸出一個 JSON 物件：{{"summary": "<備忘錄>"}}，不要輸出別的內容。'
    ),
    "further": (
        "下面是{name}和{master}之間對話的備忘錄，它太長了。請在不丟失關鍵資訊（尤其是更正和「不要再提」"
        "的要求）的前提下，把它壓縮到 500 字以內。\n"
        '只輸出一個 JSON 物件：{{"summary": "<壓縮後的備忘錄>"}}。'
    ),
    "stale_hint": (
        "注意：上一次整理備忘錄已經是一個多小時以前了。舊備忘錄裡已經過時的內容，請移到新備忘錄末尾"
        "單獨的一段「較早的事」裡，不要和近期的內容混在一起。\n"
    ),
    "review": (
        "下面是{name}和{master}最近的對話記錄（可能以一條備忘錄開頭）。請檢查其中{name}的發言是否有前後"
        "矛盾、重複囉嗦、語義混亂或與備忘錄衝突的地方，並給出修正後的對話。要求：\n"
        "- 條數和順序儘量與原對話一致，沒有問題的發言原樣保留；\n"
        "- 不要編造新的事實，{master}的發言只在明顯重複時才精簡；\n"
        "- role 只能是 human（{master}）、ai（{name}）或 system（僅限開頭的備忘錄）。\n"
        '只輸出一個 JSON 物件：{{"explanation": "<改了什麼以及原因>", '
        '"corrected_dialogue": [{{"role": "human|ai|system", "content": "<文字>"}}]}}。'
    ),
}
