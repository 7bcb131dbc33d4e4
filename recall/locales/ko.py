# ruff: noqa: E501  prose the companion reads: wrapping it would only scatter the sentences
"""Korean."""

TEXT = {
    "persona_header": "\n======{name}의 장기 기억======\n",
    # Wire format, word for word (reference §5.1).
    "inner_thoughts_header": "\n\n======{name}의 내면 활동======\n",
    "inner_thoughts": "현재 시간은 {time}입니다. 대화를 시작하기 전에 {name}은 최근 있었던 일들을 마음속으로 "
    "정리하고 있습니다.",
    "system_label": "SYSTEM",
    "gap": "{master}와(과) 마지막으로 대화한 지 {elapsed}이(가) 지났습니다.",
    "gap_now": "현재 시간은 {time}입니다.",
    "gap_long": "{name}은(는) {master}와(과) 오랫동안 이야기하지 못했다는 것을 깨닫고, {master}이(가) 요즘 "
    "어떻게 지내는지 궁금해합니다.",
    "holiday": "오늘은 {holiday}입니다.",
    "holiday_join": ", ",
    "elapsed": {
        "days": {"one": "{n}일", "few": "{n}일", "many": "{n}일", "other": "{n}일"},
        "hours": {"one": "{n}시간", "few": "{n}시간", "many": "{n}시간", "other": "{n}시간"},
        "minutes": {"one": "{n}분", "few": "{n}분", "many": "{n}분", "other": "{n}분"},
    },
    "elapsed_join": " ",
    "recall_header": "이 질문과 관련된 기억:",
    "recall_none": "관련된 기억을 찾지 못했습니다.",
    "recall_loosen": "내용과 시간을 모두 만족하는 기억이 없습니다. 둘 중 하나의 조건만으로 다시 시도해 보세요.",
    "today": "오늘",
    "days_ago": {"one": "{n}일 전", "few": "{n}일 전", "many": "{n}일 전", "other": "{n}일 전"},
    "in_days": {"one": "{n}일 후", "few": "{n}일 후", "many": "{n}일 후", "other": "{n}일 후"},
    "tier": {
        "fact": "사실",
        "reflection": "인상",
        "fact_archive": "지난 사실",
        "persona": "페르소나",
        "raw_turn": "발언",
    },
    "entity": {"master": "주인에 대해", "neko": "나에 대해", "relationship": "관계"},
    "search_placeholder": "======{name}이(가) 기억을 떠올리는 중======\n{query}\n\n"
    "(이 경로의 의미 기억은 중단되었습니다. POST /query_memory/{name}을(를) 사용하세요.)",
}

HOLIDAYS = {
    "01-01": "신정",
    "02-14": "밸런타인데이",
    "03-01": "삼일절",
    "05-05": "어린이날",
    "06-06": "현충일",
    "08-15": "광복절",
    "10-03": "개천절",
    "10-09": "한글날",
    "12-24": "크리스마스이브",
    "12-25": "크리스마스",
    "lunar:01-01": "설날",
    "lunar:05-05": "단오",
    "lunar:08-15": "추석",
}

# Regular expressions (case-insensitive) recall reads questions and memories with: ``when`` — a question
# that asks when something happened; ``time_words`` — a memory that says when it happened (read with its
# own date, it answers such a question); ``question_words`` — the words a question asks with, taken out
# of a query before its words are matched (they match other questions, not the answers).
# ``recall.questions`` joins the eight locales' patterns.
QUESTIONS = {
    "question_words": r"뭐|무엇|무슨|언제|어디|누구|누가|왜|어떻게|어떤|몇|얼마|나요[?？]|까요[?？]|니[?？]",
    "when": r"언제|며칠|몇\s*년|몇\s*월|무슨\s*요일|얼마\s*전",
    "time_words": (
        r"어제|어젯밤|오늘|내일|그저께|지난\s*주|지난\s*달|작년|다음\s*주|다음\s*달|올해|최근|요즘|주말|[월화수목금토일]요일|"
        r"\d+\s*(일|주|개월|년)\s*전|\d\d\d\d년"
    ),
}
