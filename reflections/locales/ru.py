# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Russian."""

PROMPTS = {
    "synthesis": """Ты помогаешь {name} составить долговременное впечатление о {master}. Ниже — недавно записанные факты (и несколько более старых, уже обработанных связанных фактов, только для фона).
Сведи их в одно впечатление более высокого уровня: что {name} видит в этих фактах?
Правила:
- От одного до трёх предложений, меньше 150 слов; называй людей по имени («{master}» для хозяина); не добавляй того, чего нет в фактах.
- Пиши впечатление на языке самих фактов; не переводи.
- entity — одно из master, neko, relationship.
- relation_type должен соответствовать entity: master → preference|trait|habit|identity|emotional|boundary; neko → self_awareness|learned|role_note; relationship → dynamic|milestone|tension|shared_memory|agreement.
- temporal_scope — pattern (устойчивая закономерность), state (состояние на какое-то время), episode (одно событие) или past (уже в прошлом).
- subject называет тему в нескольких словах; event_when в той же относительной форме времени, что у фактов, или null.
Ответь только одним JSON-объектом: {{"reflection": "...", "entity": "...", "relation_type": "...", "temporal_scope": "...", "subject": "...", "event_when": null}}

Новые факты:
{facts}

Связанные старые факты:
{related}""",
    "feedback": """Недавно в разговоре с {master} по инициативе {name} были затронуты эти впечатления:
{items}
По ответам {master} в диалоге ниже оцени каждое: confirmed (соглашается, дополняет или принимает как верное), denied (отвергает или поправляет), ignored (никак не отвечает на него).
Ответь только одним JSON-массивом: [{{"reflection_id": "...", "feedback": "confirmed|denied|ignored"}}]""",
    "signals": """Ниже — текущие впечатления {name} о {master} (observations) и факты, только что извлечённые из недавнего диалога.
Для каждого нового факта скажи, подтверждает ли он (reinforces) или опровергает (negates) одно из впечатлений; несвязанные не выводи.
Впечатления:
{observations}
Новые факты:
{facts}
Ответь только одним JSON-объектом: {{"signals": [{{"source_fact_id": "...", "target_id": "...", "target_type": "reflection|persona", "signal": "reinforces|negates", "reason": "..."}}]}}""",
    "keyword": """{master} только что сказал что-то похожее на отрицание или поправку. Ниже — последние сообщения {master} и текущие впечатления {name}.
Какие впечатления опровергают слова {master}? Если никаких, ответь пустым списком.
Сообщения {master}:
{messages}
Впечатления:
{observations}
Ответь только одним JSON-объектом: {{"targets": [{{"target_id": "...", "reason": "..."}}]}}""",
    "rebuttal": """Ниже — впечатления о {master}, которые {name} считает довольно надёжными, и последние сообщения {master}.
Опровергает ли какое-нибудь сообщение впечатление явно? Отвечай denied, только когда опровержение явное.
Впечатления:
{observations}
Сообщения {master}:
{messages}
Ответь только одним JSON-объектом: {{"verdicts": [{{"reflection_id": "...", "verdict": "denied|kept"}}]}}""",
    "rerank": """Ниже — пронумерованные воспоминания {name} о {master} и новое о {master}. Какие воспоминания важнее всего для нового? Оценка доказательств каждого воспоминания — лишь дополнительная информация.
Новое:
{queries}
Воспоминания:
{memories}
Ответь только одним JSON-объектом: {{"ranked": [номера самых важных воспоминаний, самые важные первыми, не больше {budget}]}}""",
    "fact_line": "- {text} (важность: {importance})",
}
