"""Traditional Chinese (Taiwan)."""

TEXT = {
    "persona_header": "\n======{name}的長期記憶======\n",
    # Wire format, word for word (reference §5.1): the chat server cuts /new_dialog at the end of the
    # sentence that follows this header.
    "inner_thoughts_header": "\n\n======以下是{name}的內心活動======\n",
    "inner_thoughts": "現在時間是{time}。開始聊天前，{name}又在腦海裡整理了近期發生的事情。",
    "system_label": "SYSTEM",
    "gap": "距離上次與{master}聊天已經過去了{elapsed}。",
    "gap_now": "現在的時間是{time}。",
    "gap_long": "{name}意識到已經很久沒有和{master}說話了，有點想知道{master}最近過得怎麼樣。",
    "holiday": "今天是{holiday}。",
    "holiday_join": "、",
    "elapsed": {
        "days": {"one": "{n}天", "few": "{n}天", "many": "{n}天", "other": "{n}天"},
        "hours": {"one": "{n}小時", "few": "{n}小時", "many": "{n}小時", "other": "{n}小時"},
        "minutes": {"one": "{n}分鐘", "few": "{n}分鐘", "many": "{n}分鐘", "other": "{n}分鐘"},
    },
    "elapsed_join": "",
    "recall_header": "以下是與本次查詢相關的記憶：",
    "recall_none": "沒有找到相關的記憶。",
    "recall_loosen": "同時按內容和時間搜尋沒有結果；可以只用其中一個條件再試一次。",
    "today": "今天",
    "days_ago": {"one": "{n}天前", "few": "{n}天前", "many": "{n}天前", "other": "{n}天前"},
    "in_days": {"one": "{n}天后", "few": "{n}天后", "many": "{n}天后", "other": "{n}天后"},
    "tier": {
        "fact": "事實",
        "reflection": "反思",
        "fact_archive": "舊事實",
        "persona": "人格",
        "raw_turn": "原話",
    },
    "entity": {"master": "關於主人", "neko": "關於自己", "relationship": "關係"},
    "search_placeholder": "======{name}試著回想======\n{query}\n\n"
    "（這個入口的語義記憶已下線，請使用 POST /query_memory/{name}）",
}

HOLIDAYS = {
    "01-01": "元旦",
    "02-14": "情人節",
    "02-28": "和平紀念日",
    "03-08": "婦女節",
    "04-04": "兒童節",
    "05-01": "勞動節",
    "10-10": "國慶日",
    "10-31": "萬聖夜",
    "12-24": "平安夜",
    "12-25": "聖誕節",
    "lunar:01-01": "春節",
    "lunar:01-15": "元宵節",
    "lunar:05-05": "端午節",
    "lunar:07-07": "七夕節",
    "lunar:08-15": "中秋節",
    "lunar:09-09": "重陽節",
}

# Regular expressions (case-insensitive) recall reads questions and memories with: ``when`` — a question
# that asks when something happened; ``time_words`` — a memory that says when it happened (read with its
# own date, it answers such a question); ``question_words`` — the words a question asks with, taken out
# of a query before its words are matched (they match other questions, not the answers).
# ``recall.questions`` joins the eight locales' patterns.
QUESTIONS = {
    "question_words": r"什麼|怎麼樣|怎麼|怎樣|為什麼|哪裡|哪兒|哪個|哪些|誰|多少|嗎|呢",
    "when": r"什麼時候|什麼時間|何時|哪天|哪一天|幾號|幾月|哪年|哪一年|多久以前|多久之前",
    "time_words": (
        r"昨天|昨晚|今天|今晚|明天|前天|後天|上週|上星期|上個月|下週|下個月|去年|前年|明年|今年|最近|週末|星期[一二三四五六日天]|"
        r"週[一二三四五六日]|\d+\s*(天|週|個月|年)(前|以前|之前)|\d\d\d\d年|\d+月\d+[日號]"
    ),
}
