"""Time expressions of every locale (recall.times), alone and inside a question."""

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from recall.times import find_time_expression, fold_expression, parse_time_window

TZ = ZoneInfo("Asia/Shanghai")
# Monday 30 November 2026, 15:00 local time (the same reference as tests/kernel/test_timewindows.py).
NOW = datetime(2026, 11, 30, 15, 0, tzinfo=TZ)


def local(*args: int) -> datetime:
    return datetime(*args, tzinfo=TZ)  # type: ignore[misc,arg-type]


def window(expr: str) -> tuple[datetime, datetime] | None:
    parsed = parse_time_window(expr, now=NOW, tz=TZ)
    return (parsed.start, parsed.end) if parsed else None


TODAY = (local(2026, 11, 30), local(2026, 12, 1))
YESTERDAY = (local(2026, 11, 29), local(2026, 11, 30))
DAY_BEFORE = (local(2026, 11, 28), local(2026, 11, 29))
YESTERDAY_EVENING = (local(2026, 11, 29, 18), local(2026, 11, 30))
YESTERDAY_MORNING = (local(2026, 11, 29, 5), local(2026, 11, 29, 12))
THIS_MORNING = (local(2026, 11, 30, 5), local(2026, 11, 30, 12))
TONIGHT = (local(2026, 11, 30, 18), local(2026, 12, 1))
LAST_WEEK = (local(2026, 11, 23), local(2026, 11, 30))
TWO_WEEKS_AGO = (local(2026, 11, 16), local(2026, 11, 23))
THIS_WEEK = (local(2026, 11, 30), local(2026, 12, 7))
LAST_WEEKEND = (local(2026, 11, 28), local(2026, 11, 30))
THIS_WEEKEND = (local(2026, 12, 5), local(2026, 12, 7))
LAST_WEDNESDAY = (local(2026, 11, 25), local(2026, 11, 26))
SUNDAY = YESTERDAY
THREE_DAYS_AGO = (local(2026, 11, 27), local(2026, 11, 28))
LAST_MONTH = (local(2026, 10, 1), local(2026, 11, 1))
THIS_MONTH = (local(2026, 11, 1), local(2026, 12, 1))
THREE_MONTHS_AGO = (local(2026, 8, 1), local(2026, 9, 1))
LAST_YEAR = (local(2025, 1, 1), local(2026, 1, 1))
THIS_YEAR = (local(2026, 1, 1), local(2027, 1, 1))
TWO_YEARS_AGO = (local(2024, 1, 1), local(2025, 1, 1))
RECENTLY = (local(2026, 11, 23), local(2026, 12, 1))
FEW_DAYS_AGO = (local(2026, 11, 24), local(2026, 11, 30))
A_WHILE_AGO = (local(2026, 10, 1), local(2026, 11, 28))
EARLIER_THIS_WEEK = (local(2026, 11, 30), NOW)
MAY = (local(2026, 5, 1), local(2026, 6, 1))
MAY_3 = (local(2026, 5, 3), local(2026, 5, 4))
MAY_2023 = (local(2023, 5, 1), local(2023, 6, 1))

CASES = {
    "zh-TW": [
        ("上週", LAST_WEEK),
        ("上個禮拜", LAST_WEEK),
        ("上上週", TWO_WEEKS_AGO),
        ("這週", THIS_WEEK),
        ("上週末", LAST_WEEKEND),
        ("上週三", LAST_WEDNESDAY),
        ("上個月", LAST_MONTH),
        ("這個月", THIS_MONTH),
        ("三個月前", THREE_MONTHS_AGO),
        ("兩週前", TWO_WEEKS_AGO),
        ("幾天前", FEW_DAYS_AGO),
        ("前陣子", A_WHILE_AGO),
        ("這陣子", RECENTLY),
        ("禮拜天", SUNDAY),
        ("昨晚", YESTERDAY_EVENING),
        ("大前天", THREE_DAYS_AGO),
        ("去年", LAST_YEAR),
    ],
    "ja": [
        ("今日", TODAY),
        ("昨日", YESTERDAY),
        ("きのう", YESTERDAY),
        ("一昨日", DAY_BEFORE),
        ("おととい", DAY_BEFORE),
        ("昨日の夜", YESTERDAY_EVENING),
        ("昨夜", YESTERDAY_EVENING),
        ("ゆうべ", YESTERDAY_EVENING),
        ("今朝", THIS_MORNING),
        ("昨日の朝", YESTERDAY_MORNING),
        ("今夜", TONIGHT),
        ("先週", LAST_WEEK),
        ("先々週", TWO_WEEKS_AGO),
        ("今週", THIS_WEEK),
        ("先週末", LAST_WEEKEND),
        ("今週末", THIS_WEEKEND),
        ("先週の水曜日", LAST_WEDNESDAY),
        ("日曜日", SUNDAY),
        ("3日前", THREE_DAYS_AGO),
        ("三日前", THREE_DAYS_AGO),
        ("2週間前", TWO_WEEKS_AGO),
        ("3か月前", THREE_MONTHS_AGO),
        ("3ヶ月前", THREE_MONTHS_AGO),
        ("2年前", TWO_YEARS_AGO),
        ("先月", LAST_MONTH),
        ("今月", THIS_MONTH),
        ("去年", LAST_YEAR),
        ("昨年", LAST_YEAR),
        ("今年", THIS_YEAR),
        ("一昨年", TWO_YEARS_AGO),
        ("最近", RECENTLY),
        ("この頃", RECENTLY),
        ("数日前", FEW_DAYS_AGO),
        ("この前", FEW_DAYS_AGO),
        ("少し前", A_WHILE_AGO),
        ("しばらく前", A_WHILE_AGO),
        ("5月", MAY),
        ("5月3日", MAY_3),
        ("2023年5月", MAY_2023),
    ],
    "ko": [
        ("오늘", TODAY),
        ("어제", YESTERDAY),
        ("그저께", DAY_BEFORE),
        ("어제 저녁", YESTERDAY_EVENING),
        ("어젯밤", YESTERDAY_EVENING),
        ("오늘 아침", THIS_MORNING),
        ("어제 아침", YESTERDAY_MORNING),
        ("지난주", LAST_WEEK),
        ("지난 주", LAST_WEEK),
        ("저번 주", LAST_WEEK),
        ("지지난주", TWO_WEEKS_AGO),
        ("이번 주", THIS_WEEK),
        ("이번주", THIS_WEEK),
        ("지난 주말", LAST_WEEKEND),
        ("지난주말", LAST_WEEKEND),
        ("이번 주말", THIS_WEEKEND),
        ("지난주 수요일", LAST_WEDNESDAY),
        ("일요일", SUNDAY),
        ("3일 전", THREE_DAYS_AGO),
        ("사흘 전", THREE_DAYS_AGO),
        ("2주 전", TWO_WEEKS_AGO),
        ("두 주 전", TWO_WEEKS_AGO),
        ("3개월 전", THREE_MONTHS_AGO),
        ("세 달 전", THREE_MONTHS_AGO),
        ("2년 전", TWO_YEARS_AGO),
        ("지난달", LAST_MONTH),
        ("이번 달", THIS_MONTH),
        ("작년", LAST_YEAR),
        ("올해", THIS_YEAR),
        ("재작년", TWO_YEARS_AGO),
        ("최근", RECENTLY),
        ("요즘", RECENTLY),
        ("며칠 전", FEW_DAYS_AGO),
        ("얼마 전", A_WHILE_AGO),
        ("5월", MAY),
        ("5월 3일", MAY_3),
        ("2023년 5월", MAY_2023),
    ],
    "ru": [
        ("сегодня", TODAY),
        ("вчера", YESTERDAY),
        ("позавчера", DAY_BEFORE),
        ("вчера вечером", YESTERDAY_EVENING),
        ("вчера утром", YESTERDAY_MORNING),
        ("прошлой ночью", YESTERDAY_EVENING),
        ("сегодня утром", THIS_MORNING),
        ("на прошлой неделе", LAST_WEEK),
        ("на позапрошлой неделе", TWO_WEEKS_AGO),
        ("на этой неделе", THIS_WEEK),
        ("в прошлые выходные", LAST_WEEKEND),
        ("на прошлых выходных", LAST_WEEKEND),
        ("в эти выходные", THIS_WEEKEND),
        ("в прошлую среду", LAST_WEDNESDAY),
        ("в воскресенье", SUNDAY),
        ("3 дня назад", THREE_DAYS_AGO),
        ("три дня назад", THREE_DAYS_AGO),
        ("две недели назад", TWO_WEEKS_AGO),
        ("неделю назад", LAST_WEEK),
        ("3 месяца назад", THREE_MONTHS_AGO),
        ("два года назад", TWO_YEARS_AGO),
        ("в прошлом месяце", LAST_MONTH),
        ("в этом месяце", THIS_MONTH),
        ("в прошлом году", LAST_YEAR),
        ("в этом году", THIS_YEAR),
        ("в позапрошлом году", TWO_YEARS_AGO),
        ("недавно", RECENTLY),
        ("в последнее время", RECENTLY),
        ("на днях", FEW_DAYS_AGO),
        ("несколько дней назад", FEW_DAYS_AGO),
        ("некоторое время назад", A_WHILE_AGO),
        ("в мае", MAY),
        ("май", MAY),
        ("3 мая", MAY_3),
        ("в мае 2023", MAY_2023),
        ("в начале недели", EARLIER_THIS_WEEK),
    ],
    "es": [
        ("hoy", TODAY),
        ("ayer", YESTERDAY),
        ("anteayer", DAY_BEFORE),
        ("ayer por la noche", YESTERDAY_EVENING),
        ("anoche", YESTERDAY_EVENING),
        ("ayer por la mañana", YESTERDAY_MORNING),
        ("esta mañana", THIS_MORNING),
        ("esta noche", TONIGHT),
        ("la semana pasada", LAST_WEEK),
        ("la semana antepasada", TWO_WEEKS_AGO),
        ("esta semana", THIS_WEEK),
        ("el fin de semana pasado", LAST_WEEKEND),
        ("este fin de semana", THIS_WEEKEND),
        ("el finde", LAST_WEEKEND),
        ("el miércoles pasado", LAST_WEDNESDAY),
        ("el miercoles pasado", LAST_WEDNESDAY),
        ("el domingo", SUNDAY),
        ("hace 3 días", THREE_DAYS_AGO),
        ("hace tres días", THREE_DAYS_AGO),
        ("hace dos semanas", TWO_WEEKS_AGO),
        ("hace 3 meses", THREE_MONTHS_AGO),
        ("hace dos años", TWO_YEARS_AGO),
        ("el mes pasado", LAST_MONTH),
        ("este mes", THIS_MONTH),
        ("el año pasado", LAST_YEAR),
        ("este año", THIS_YEAR),
        ("el año antepasado", TWO_YEARS_AGO),
        ("recientemente", RECENTLY),
        ("últimamente", RECENTLY),
        ("hace unos días", FEW_DAYS_AGO),
        ("el otro día", FEW_DAYS_AGO),
        ("hace un tiempo", A_WHILE_AGO),
        ("en mayo", MAY),
        ("3 de mayo", MAY_3),
        ("mayo de 2023", MAY_2023),
    ],
    "pt": [
        ("hoje", TODAY),
        ("ontem", YESTERDAY),
        ("anteontem", DAY_BEFORE),
        ("ontem à noite", YESTERDAY_EVENING),
        ("ontem de manhã", YESTERDAY_MORNING),
        ("hoje de manhã", THIS_MORNING),
        ("esta manhã", THIS_MORNING),
        ("hoje à noite", TONIGHT),
        ("semana passada", LAST_WEEK),
        ("na semana passada", LAST_WEEK),
        ("semana retrasada", TWO_WEEKS_AGO),
        ("esta semana", THIS_WEEK),
        ("nesta semana", THIS_WEEK),
        ("fim de semana passado", LAST_WEEKEND),
        ("no último fim de semana", LAST_WEEKEND),
        ("neste fim de semana", THIS_WEEKEND),
        ("quarta-feira passada", LAST_WEDNESDAY),
        ("na quarta passada", LAST_WEDNESDAY),
        ("domingo", SUNDAY),
        ("há 3 dias", THREE_DAYS_AGO),
        ("três dias atrás", THREE_DAYS_AGO),
        ("há duas semanas", TWO_WEEKS_AGO),
        ("há 3 meses", THREE_MONTHS_AGO),
        ("há dois anos", TWO_YEARS_AGO),
        ("mês passado", LAST_MONTH),
        ("no mês passado", LAST_MONTH),
        ("este mês", THIS_MONTH),
        ("ano passado", LAST_YEAR),
        ("este ano", THIS_YEAR),
        ("ano retrasado", TWO_YEARS_AGO),
        ("recentemente", RECENTLY),
        ("ultimamente", RECENTLY),
        ("há alguns dias", FEW_DAYS_AGO),
        ("uns dias atrás", FEW_DAYS_AGO),
        ("há um tempo", A_WHILE_AGO),
        ("em maio", MAY),
        ("3 de maio", MAY_3),
        ("maio de 2023", MAY_2023),
    ],
    "en": [("a while ago", A_WHILE_AGO)],
    "zh": [("前段时间", A_WHILE_AGO)],
}


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        pytest.param(expr, expected, id=f"{lang}:{expr}")
        for lang, cases in CASES.items()
        for expr, expected in cases
    ],
)
def test_expression_alone(expr: str, expected: tuple[datetime, datetime]) -> None:
    assert window(expr) == expected


QUESTIONS = [
    ("先週どこに行った?", "先週", LAST_WEEK),
    ("昨日の夜、何を食べたっけ？", "昨日の夜", YESTERDAY_EVENING),
    ("先月話した映画の名前は？", "先月", LAST_MONTH),
    ("지난주에 뭐 했어?", "지난주", LAST_WEEK),
    ("지난 주말에 누구 만났지?", "지난 주말", LAST_WEEKEND),
    ("어제 저녁에 뭐 먹었어?", "어제 저녁", YESTERDAY_EVENING),
    ("что я делал на прошлой неделе?", "на прошлой неделе", LAST_WEEK),
    ("Куда я ездил в прошлые выходные?", "в прошлые выходные", LAST_WEEKEND),
    ("о чём мы говорили три дня назад?", "три дня назад", THREE_DAYS_AGO),
    ("¿qué hice la semana pasada?", "la semana pasada", LAST_WEEK),
    ("¿Adónde fui el fin de semana pasado?", "el fin de semana pasado", LAST_WEEKEND),
    ("¿de qué hablamos hace tres días?", "hace tres días", THREE_DAYS_AGO),
    ("o que fiz semana passada?", "semana passada", LAST_WEEK),
    ("Com quem jantei ontem à noite?", "ontem à noite", YESTERDAY_EVENING),
    ("o que eu comprei no mês passado?", "no mês passado", LAST_MONTH),
    ("上週我們去了哪裡？", "上週", LAST_WEEK),
    ("我上個月看的電影叫什麼", "上個月", LAST_MONTH),
    ("上周我去哪了", "上周", LAST_WEEK),
    ("what did I cook last weekend?", "last weekend", LAST_WEEKEND),
]


@pytest.mark.parametrize(("question", "found", "expected"), QUESTIONS)
def test_expression_inside_a_question(question: str, found: str, expected: tuple[datetime, datetime]) -> None:
    hit = find_time_expression(question, now=NOW, tz=TZ)
    assert hit is not None
    assert hit.text == found == question[hit.start : hit.end]  # the span as the question writes it
    assert (hit.window.start, hit.window.end) == expected
    # A caller that passes the whole question as ``time`` gets the same window.
    assert window(question) == expected


@pytest.mark.parametrize(
    "text",
    [
        "may I ask what you like?",
        "a segunda vez que fomos ao cinema",
        "寝る前に何を食べたい？",
        "Мартышка в зоопарке",
        "13月",
        "5月32日",
        "blah 2023",
        "¿cómo se llama tu gato?",
        "고양이 이름이 뭐야?",
        "what is my favourite colour",
        "я вырос в этой среде",
    ],
)
def test_no_expression_is_invented(text: str) -> None:
    assert find_time_expression(text, now=NOW, tz=TZ) is None
    assert window(text) is None


def test_longest_expression_wins() -> None:
    hit = find_time_expression("上周三下午我们聊了什么", now=NOW, tz=TZ)
    assert hit is not None and hit.window.start == local(2026, 11, 25) and hit.text == "上周三"


def test_a_span_is_cut_from_the_text_as_written() -> None:
    question = "¿Qué  HICE la Semana   Pasada?"
    hit = find_time_expression(question, now=NOW, tz=TZ)
    assert hit is not None and hit.text == "la Semana   Pasada"
    assert fold_expression(hit.text) == "la semana pasada"
