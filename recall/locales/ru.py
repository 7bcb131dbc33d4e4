# ruff: noqa: E501  prose the companion reads: wrapping it would only scatter the sentences
"""Russian."""

TEXT = {
    "persona_header": "\n======Долговременная память {name}======\n",
    # Wire format, word for word (reference §5.1).
    "inner_thoughts_header": "\n\n======Внутренние мысли {name}======\n",
    "inner_thoughts": "Текущее время: {time}. Перед началом разговора {name} мысленно перебирает последние события.",
    "system_label": "SYSTEM",
    "gap": "С последнего разговора с {master} прошло {elapsed}.",
    "gap_now": "Текущее время: {time}.",
    "gap_long": "{name} понимает, что разговора с {master} не было уже давно, и хочет узнать, как у {master} дела.",
    "holiday": "Сегодня {holiday}.",
    "holiday_join": " и ",
    "elapsed": {
        "days": {"one": "{n} день", "few": "{n} дня", "many": "{n} дней", "other": "{n} дня"},
        "hours": {"one": "{n} час", "few": "{n} часа", "many": "{n} часов", "other": "{n} часа"},
        "minutes": {"one": "{n} минута", "few": "{n} минуты", "many": "{n} минут", "other": "{n} минуты"},
    },
    "elapsed_join": " ",
    "recall_header": "Воспоминания, связанные с этим запросом:",
    "recall_none": "Подходящих воспоминаний не найдено.",
    "recall_loosen": "Ничто не подошло одновременно по содержанию и по времени; попробуйте ещё раз только с "
    "одним из условий.",
    "today": "сегодня",
    "days_ago": {
        "one": "{n} день назад",
        "few": "{n} дня назад",
        "many": "{n} дней назад",
        "other": "{n} дня назад",
    },
    "in_days": {
        "one": "через {n} день",
        "few": "через {n} дня",
        "many": "через {n} дней",
        "other": "через {n} дня",
    },
    "tier": {
        "fact": "факт",
        "reflection": "впечатление",
        "fact_archive": "старый факт",
        "persona": "персона",
        "raw_turn": "реплика",
    },
    "entity": {"master": "о хозяине", "neko": "о себе", "relationship": "отношения"},
    "search_placeholder": "======{name} пытается вспомнить======\n{query}\n\n"
    "(Семантическая память на этом маршруте отключена; используйте POST /query_memory/{name}.)",
}

HOLIDAYS = {
    "01-01": "Новый год",
    "01-07": "Рождество Христово",
    "02-14": "День святого Валентина",
    "02-23": "День защитника Отечества",
    "03-08": "Международный женский день",
    "05-01": "Праздник Весны и Труда",
    "05-09": "День Победы",
    "06-12": "День России",
    "11-04": "День народного единства",
    "12-31": "канун Нового года",
}

# Regular expressions (case-insensitive) recall reads questions and memories with: ``when`` — a question
# that asks when something happened; ``time_words`` — a memory that says when it happened (read with its
# own date, it answers such a question); ``question_words`` — the words a question asks with, taken out
# of a query before its words are matched (they match other questions, not the answers).
# ``recall.questions`` joins the eight locales' patterns.
QUESTIONS = {
    "question_words": r"(?<!\w)(что|когда|где|куда|откуда|кто|кого|кому|какой|какая|какое|какие|каких|почему|зачем|как|сколько|чей|чья|чьё|ли)(?!\w)",
    "when": (
        r"\bкогда\b|\bв какой день\b|\bкакого числа\b|\bв каком (году|месяце)\b|"
        r"\bкак давно\b"
    ),
    "time_words": (
        r"\b(вчера|сегодня|завтра|позавчера|недавно|назад|выходны\w*|на прошлой неделе|"
        r"в прошлом (месяце|году)|в прошлую \w+|в прошлый \w+|на следующей неделе|"
        r"в понедельник|во вторник|в среду|в четверг|в пятницу|в субботу|в воскресенье|"
        r"\d\d\d\d)\b"
    ),
}
