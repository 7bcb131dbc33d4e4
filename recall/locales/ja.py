# ruff: noqa: E501  prose the companion reads: wrapping it would only scatter the sentences
"""Japanese."""

TEXT = {
    "persona_header": "\n======{name}の長期記憶======\n",
    # Wire format, word for word (reference §5.1).
    "inner_thoughts_header": "\n\n======{name}の心の声======\n",
    "inner_thoughts": "現在の時刻は{time}です。会話を始める前に、{name}は最近の出来事を頭の中で整理しています。",
    "system_label": "SYSTEM",
    "gap": "{master}と最後に話してから{elapsed}が経ちました。",
    "gap_now": "現在の時刻は{time}です。",
    "gap_long": "{name}は{master}としばらく話していないことに気づき、{master}が最近どうしているか少し気になっています。",
    "holiday": "今日は{holiday}です。",
    "holiday_join": "・",
    "elapsed": {
        "days": {"one": "{n}日", "few": "{n}日", "many": "{n}日", "other": "{n}日"},
        "hours": {"one": "{n}時間", "few": "{n}時間", "many": "{n}時間", "other": "{n}時間"},
        "minutes": {"one": "{n}分", "few": "{n}分", "many": "{n}分", "other": "{n}分"},
    },
    "elapsed_join": "",
    "recall_header": "この問い合わせに関連する記憶：",
    "recall_none": "関連する記憶は見つかりませんでした。",
    "recall_loosen": "内容と時間の両方に合う記憶はありませんでした。どちらか一方の条件だけでもう一度試してください。",
    "today": "今日",
    "days_ago": {"one": "{n}日前", "few": "{n}日前", "many": "{n}日前", "other": "{n}日前"},
    "in_days": {"one": "{n}日後", "few": "{n}日後", "many": "{n}日後", "other": "{n}日後"},
    "tier": {
        "fact": "事実",
        "reflection": "印象",
        "fact_archive": "過去の事実",
        "persona": "人物像",
        "raw_turn": "発言",
    },
    "entity": {"master": "ご主人について", "neko": "自分について", "relationship": "関係"},
    "search_placeholder": "======{name}は思い出そうとしている======\n{query}\n\n"
    "（この窓口の意味記憶は停止しています。POST /query_memory/{name} を使ってください）",
}

HOLIDAYS = {
    "01-01": "元日",
    "02-11": "建国記念の日",
    "02-14": "バレンタインデー",
    "02-23": "天皇誕生日",
    "03-03": "ひな祭り",
    "04-29": "昭和の日",
    "05-03": "憲法記念日",
    "05-04": "みどりの日",
    "05-05": "こどもの日",
    "07-07": "七夕",
    "08-11": "山の日",
    "11-03": "文化の日",
    "11-23": "勤労感謝の日",
    "12-24": "クリスマス・イブ",
    "12-25": "クリスマス",
    "12-31": "大晦日",
}

# Regular expressions (case-insensitive) recall reads questions and memories with: ``when`` — a question
# that asks when something happened; ``time_words`` — a memory that says when it happened (read with its
# own date, it answers such a question); ``question_words`` — the words a question asks with, taken out
# of a query before its words are matched (they match other questions, not the answers).
# ``recall.questions`` joins the eight locales' patterns.
QUESTIONS = {
    "question_words": r"何|なに|なん(?=で|の|だ|て)|どう|どこ|どれ|どの|どんな|誰|だれ|いつ|なぜ|ですか|ましたか|でしたか|か[?？]",
    "when": r"いつ(?!も)|何日|何年|何月|何曜日|どのくらい前",
    "time_words": (
        r"昨日|昨夜|ゆうべ|今日|今夜|明日|おととい|一昨日|先週|先月|去年|昨年|来週|来月|今年|最近|週末|[月火水木金土日]曜日|\d+\s*(日|週間|"
        r"か月|ヶ月|年)前|\d\d\d\d年"
    ),
}
