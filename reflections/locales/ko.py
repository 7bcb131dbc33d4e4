# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Korean."""

PROMPTS = {
    "synthesis": """당신은 {name}이(가) {master}에 대한 장기적인 인상을 정리하도록 돕고 있습니다. 아래는 최근에 기록된 사실들입니다(배경 참고용으로, 이미 정리된 예전 관련 사실도 몇 개 있습니다).
이것들을 한 단계 높은 인상 하나로 정리하세요: {name}은(는) 이 사실들에서 무엇을 보았나요?
규칙:
- 한 문장에서 세 문장, 150단어 미만; 사람 이름을 밝히세요(주인은 "{master}"로 씁니다); 사실에 없는 내용을 덧붙이지 마세요.
- 인상은 사실 자체의 언어로 쓰고 번역하지 마세요.
- entity는 master, neko, relationship 중 하나입니다.
- relation_type은 entity에 맞아야 합니다: master → preference|trait|habit|identity|emotional|boundary; neko → self_awareness|learned|role_note; relationship → dynamic|milestone|tension|shared_memory|agreement.
- temporal_scope는 pattern(오래가는 경향), state(한동안의 상태), episode(한 번의 사건), past(이미 지난 일) 중 하나입니다.
- subject는 이 인상의 주제를 몇 단어로, event_when은 사실과 같은 상대 시간 형식 또는 null입니다.
JSON 객체 하나만 출력하세요: {{"reflection": "...", "entity": "...", "relation_type": "...", "temporal_scope": "...", "subject": "...", "event_when": null}}

새로운 사실:
{facts}

관련된 예전 사실:
{related}""",
    "feedback": """{name}은(는) 최근 {master}에게 다음 인상들을 먼저 꺼냈습니다:
{items}
아래 대화에서 {master}의 반응을 보고 하나씩 판단하세요: confirmed(동의하거나, 덧붙이거나, 맞다고 받아들임), denied(부정하거나 정정함), ignored(반응하지 않음).
JSON 배열 하나만 출력하세요: [{{"reflection_id": "...", "feedback": "confirmed|denied|ignored"}}]""",
    "signals": """아래는 {name}이(가) {master}에 대해 가진 현재 인상(observations)과 최근 대화에서 새로 추출한 사실입니다.
새로운 사실마다 어떤 인상을 뒷받침하는지(reinforces) 또는 반박하는지(negates) 말하세요. 관련 없는 것은 출력하지 마세요.
인상:
{observations}
새로운 사실:
{facts}
JSON 객체 하나만 출력하세요: {{"signals": [{{"source_fact_id": "...", "target_id": "...", "target_type": "reflection|persona", "signal": "reinforces|negates", "reason": "..."}}]}}""",
    "keyword": """{master}이(가) 방금 부정이나 정정처럼 들리는 말을 했습니다. 아래는 {master}의 최근 메시지와 {name}의 현재 인상입니다.
{master}의 말로 부정된 인상은 무엇인가요? 없으면 빈 목록을 출력하세요.
{master}의 메시지:
{messages}
인상:
{observations}
JSON 객체 하나만 출력하세요: {{"targets": [{{"target_id": "...", "reason": "..."}}]}}""",
    "rebuttal": """아래는 {name}이(가) {master}에 대해 꽤 확신하는 인상과 {master}의 최근 메시지입니다.
분명하게 뒤집힌 인상이 있나요? 분명히 뒤집혔을 때만 denied로 판단하세요.
인상:
{observations}
{master}의 메시지:
{messages}
JSON 객체 하나만 출력하세요: {{"verdicts": [{{"reflection_id": "...", "verdict": "denied|kept"}}]}}""",
    "rerank": """아래는 {name}이(가) 가진 {master}에 대한 기억(번호 포함)과 {master}에 대한 새로운 내용입니다. 새로운 내용과 가장 관련 있는 기억은 무엇인가요? 각 기억의 증거 점수는 참고 정보일 뿐입니다.
새로운 내용:
{queries}
기억:
{memories}
JSON 객체 하나만 출력하세요: {{"ranked": [가장 관련 있는 기억의 번호, 관련 높은 순, 최대 {budget}개]}}""",
    "fact_line": "- {text} (중요도: {importance})",
    "refine": """아래는 {name}이(가) {master}에 대해 가진 인상 중 거의 같은 내용을 말하는 것들입니다. 각 내용이 한 번만 분명하게 말해지도록 정리하세요:
- merge: 여러 인상이 같은 내용 → 하나로 합치기;
- split: 한 인상에 서로 무관한 내용이 섞임 → 여러 개로 나누기;
- modify: 한 인상이 불분명하거나 어색함 → 뜻은 그대로 두고 더 잘 고쳐 쓰기;
- discard: 한 인상이 다른 인상에 완전히 포함되거나 내용이 없음.
구체적인 세부 사항은 모두 남기고 원문에 없는 내용은 더하지 마세요. 원문의 언어로 쓰세요. 문제없는 인상은 답에서 빼고, 모두 문제없으면 []로 답하세요.
인상:
{lines}
JSON 배열 하나로만 답하세요. 예: [{{"action": "merge", "ids": [0, 1], "text": "..."}}, {{"action": "split", "id": 2, "texts": ["...", "..."]}}, {{"action": "modify", "id": 3, "text": "..."}}, {{"action": "discard", "id": 4}}]""",
    "recheck_reflection": """{name}은(는) {date}에 {master}에 대한 이 인상을 적었습니다:
{text}
다시 분류하세요:
- temporal_scope: pattern(지속되는 패턴), state(한동안의 상태), episode(한 번의 사건), past(이미 지나간 일) 중 하나;
- event_when: 묘사된 일이 언제 일어났는지, {date} 기준: {{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": null}}. 그날 이전이면 음수 offset, 끝이 있으면 "end"도 같은 형식; 시간 정보가 없으면 null.
JSON 객체 하나로만 답하세요: {{"temporal_scope": "pattern|state|episode|past", "event_when": null}}""",
    "recheck_fact": """{name}은(는) {date}에 이 사실을 적었습니다:
{text}
묘사된 일이 언제 일어났나요? {date} 기준입니다. event_when은 {{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": null}}. 그날 이전이면 음수 offset, 끝이 있으면 "end"도 같은 형식; 시간 정보가 없으면 null.
JSON 객체 하나로만 답하세요: {{"event_when": null}}""",
    "refine_line": "[{index}] {text} (evidence={score})",
}
