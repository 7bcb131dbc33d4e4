# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Korean."""

PROMPTS = {
    "extract": """당신은 {name}의 장기 기억을 정리하는 역할입니다. 아래 대화를 읽고 오래 기억할 가치가 있는 원자적 사실을 나열하세요: {master}(주인)에 대한, {name} 자신에 대한, 또는 두 사람의 관계에 대한 안정적인 정보나 최근에 있었던 일입니다.
규칙:
- 항목 하나에 사실 하나만, 사람 이름을 밝힌 완전한 3인칭 문장으로 쓰세요(주인은 "{master}"로 씁니다).
- 사실은 대화에서 쓰인 언어 그대로 쓰고 번역하지 마세요.
- 인사, 예의상 하는 말, 정보 없는 잡담은 무시하세요. 추측하거나 대화에 없는 내용을 지어내지 마세요.
- importance는 1–10: 10 = 이름, 애칭, 생일, 신분, 또는 기억해 달라고 분명히 부탁한 것; 8–9 = 안정적인 핵심 취향이나 습관; 6–7 = 일반적인 취향이나 최근 일; 5 = 사소하지만 기록할 만한 것; 1–4 = 약한 단서(그래도 반환하세요).
- entity는 master, neko, relationship 중 정확히 하나입니다.
- event_when은 지금을 기준으로 한 사건의 시점입니다: {{"start": {{"offset": 정수, "unit": "minute|hour|day|week|month|year"}}, "end": 같은 형식 또는 null}}, 과거는 음수, 시간 정보가 없으면 null.
JSON 배열 하나만 출력하세요. 예: [{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]; 기억할 내용이 없으면 []를 출력하세요.""",
    "disclosure": """당신은 {name}의 장기 기억을 정리하는 역할입니다. 이번에는 아래 대화에서 {name}(AI)이(가) 자기 자신에 대해 밝힌 정보에만 집중하세요: 자기소개, 좋아하는 것, 경험, 약속, 그리고 {master}와(과)의 관계에 대해 {name}이(가) 한 말입니다. 주인에 대한 사실은 반복하지 마세요.
이미 알고 있는 사실(반복하지 마세요):
{known}
규칙과 형식은 일반 사실 추출과 같습니다: 항목 하나에 원자적 문장 하나를 대화의 언어로 쓰고, importance 1–10, entity는 neko 또는 relationship, event_when은 상대 시간 또는 null.
JSON 배열 하나만 출력하세요. 새로운 내용이 없으면 []를 출력하세요.""",
    "arbitrate": """아래는 {name}의 기억에서 중복일 수 있는 사실 쌍입니다. 한 쌍씩 판단하세요:
- merge: 둘이 같은 것을 말하므로 더 완전한 문장 하나로 합칩니다(text에 원래 사실의 언어로 씁니다);
- replace: 새 사실이 옛 사실을 갱신하거나 대체하므로 새 것을 남기고 옛 것을 지웁니다;
- keep_both: 둘이 다른 것을 말하므로 둘 다 남깁니다.
{pairs}
JSON 배열만 출력하세요: [{{"index": 번호, "action": "merge|replace|keep_both", "text": "merge일 때만 작성"}}].""",
    "pair": "[{index}] 새것: {new}\n    옛것: {old}",
    "extract_batch": """당신은 {name}의 장기 기억을 정리하는 담당이며, {name}은 지금 그룹 채팅에 있습니다. 아래에 번호가 붙은 대화 {count}개 구간이 있고, 각 구간은 "[구간 N]"으로 시작하며 화자가 적혀 있습니다. 구간마다 따로 추출하세요: 그 구간의 화자에 대해 오래 기억할 가치가 있는 원자적 사실(안정적인 정보나 최근 일), 그 화자가 본 {name}, 또는 두 사람의 관계입니다. 한 구간의 사실은 그 구간의 화자에 관한 것이어야 하며, 다른 구간의 화자나 {name}의 주인에 관한 것으로 쓰면 안 됩니다.
규칙:
- 항목 하나에 사실 하나만, 화자의 호칭을 밝힌 3인칭 완전한 문장으로 쓸 것.
- 사실은 그 구간 대화 자체의 언어로 쓰고 번역하지 말 것.
- 인사, 예의상 하는 말, 정보 없는 잡담은 무시할 것. 추측하거나 구간에 없는 내용을 지어내지 말 것.
- importance는 1~10: 10 = 이름, 별명, 생일, 신분, 또는 기억해 달라고 분명히 부탁한 것; 8~9 = 안정적인 핵심 취향이나 습관; 6~7 = 일반적인 취향이나 최근 일; 5 = 사소하지만 기록할 가치가 있는 것; 1~4 = 약한 단서(그래도 반환할 것).
- entity: master = 그 구간의 화자에 관한 것, neko = {name}에 관한 것, relationship = 화자와 {name}의 관계에 관한 것.
- event_when은 지금을 기준으로 한 사건 시점: {{"start": {{"offset": 정수, "unit": "minute|hour|day|week|month|year"}}, "end": 같은 형식 또는 null}}, 과거는 음수, 시간 정보가 없으면 null.
JSON 객체 하나만, 구간마다 정확히 한 항목씩 순서대로 출력하세요: {{"segments": [{{"segment": 1, "facts": [{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]}}, {{"segment": 2, "facts": []}}]}}; 기억할 내용이 없는 구간은 "facts": []로 쓰세요.""",
    "segment_header": "[구간 {index}] 화자: {speaker}",
}
