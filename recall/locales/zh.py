"""Simplified Chinese."""

TEXT = {
    "persona_header": "\n======{name}的长期记忆======\n",
    # Wire format, word for word (reference §5.1): the chat server cuts /new_dialog at the end of the
    # sentence that follows this header.
    "inner_thoughts_header": "\n\n======以下是{name}的内心活动======\n",
    "inner_thoughts": "现在时间是{time}。开始聊天前，{name}又在脑海内整理了近期发生的事情。",
    "system_label": "SYSTEM",
    "gap": "距离上次与{master}聊天已经过去了{elapsed}。",
    "gap_now": "现在的时间是{time}。",
    "gap_long": "{name}意识到已经很久没有和{master}说话了，有点想知道{master}最近过得怎么样。",
    "holiday": "今天是{holiday}。",
    "holiday_join": "、",
    "elapsed": {
        "days": {"one": "{n}天", "few": "{n}天", "many": "{n}天", "other": "{n}天"},
        "hours": {"one": "{n}小时", "few": "{n}小时", "many": "{n}小时", "other": "{n}小时"},
        "minutes": {"one": "{n}分钟", "few": "{n}分钟", "many": "{n}分钟", "other": "{n}分钟"},
    },
    "elapsed_join": "",
    "recall_header": "以下是与本次查询相关的记忆：",
    "recall_none": "没有找到相关的记忆。",
    "recall_loosen": "同时按内容和时间查找没有结果；可以只用其中一个条件再试一次。",
    "today": "今天",
    "days_ago": {"one": "{n}天前", "few": "{n}天前", "many": "{n}天前", "other": "{n}天前"},
    "in_days": {"one": "{n}天后", "few": "{n}天后", "many": "{n}天后", "other": "{n}天后"},
    "tier": {
        "fact": "事实",
        "reflection": "反思",
        "fact_archive": "旧事实",
        "persona": "人格",
        "raw_turn": "原话",
    },
    "entity": {"master": "关于主人", "neko": "关于自己", "relationship": "关系"},
    "search_placeholder": "======{name}试着回想======\n{query}\n\n"
    "（这个入口的语义记忆已下线，请使用 POST /query_memory/{name}）",
}

HOLIDAYS = {
    "01-01": "元旦",
    "02-14": "情人节",
    "03-08": "妇女节",
    "05-01": "劳动节",
    "06-01": "儿童节",
    "10-01": "国庆节",
    "10-31": "万圣节前夜",
    "12-24": "平安夜",
    "12-25": "圣诞节",
    "lunar:01-01": "春节",
    "lunar:01-15": "元宵节",
    "lunar:05-05": "端午节",
    "lunar:07-07": "七夕节",
    "lunar:08-15": "中秋节",
    "lunar:09-09": "重阳节",
}

# Regular expressions (case-insensitive) recall reads questions and memories with: ``when`` — a question
# that asks when something happened; ``time_words`` — a memory that says when it happened (read with its
# own date, it answers such a question); ``question_words`` — the words a question asks with, taken out
# of a query before its words are matched (they match other questions, not the answers).
# ``recall.questions`` joins the eight locales' patterns.
QUESTIONS = {
    "question_words": r"什么|怎么样|怎么|怎样|为什么|哪里|哪儿|哪个|哪些|谁|多少|吗|呢",
    "when": r"什么时候|什么时间|何时|哪天|哪一天|几号|几月|哪年|哪一年|多久以前|多久之前",
    "time_words": (
        r"昨天|昨晚|今天|今晚|明天|前天|后天|上周|上星期|上个月|下周|下个月|去年|前年|明年|今年|最近|周末|星期[一二三四五六日天]|"
        r"周[一二三四五六日]|\d+\s*(天|周|个月|年)(前|以前|之前)|\d\d\d\d年|\d+月\d+[日号]"
    ),
}
