# ruff: noqa: E501  prose the companion and the model read: wrapping it would scatter the sentences
"""Korean."""

TEXT = {
    "master": "### {master}에 대해",
    "neko": "### {ai}에 대해",
    "relationship": "### 관계의 흐름",
    "scoped": "### {subject}에 대해",
    "other": "### {section}",
    "pending": "### {ai}의 최근 인상 (아직 확실하지 않음)",
    "confirmed": "### {ai}이(가) 꽤 확신하는 인상",
    "past_open": "======여기부터 조금 오래된 기억======",
    "past_note": "(조금 예전 일이라 배경으로만 참고하세요. {master}이(가) 먼저 꺼내지 않는 한 언급하지 마세요.)",
    "past_close": "======여기까지 조금 오래된 기억======",
    "suppressed": "### 당분간 먼저 꺼내지 않을 내용 ({ai}은(는) 기억하지만 최근에 너무 자주 언급했으니 다시 먼저 꺼내지 마세요)",
    "now": "방금",
    "days": {"one": "{n}일 전", "few": "{n}일 전", "many": "{n}일 전", "other": "{n}일 전"},
    "weeks": {"one": "{n}주 전", "few": "{n}주 전", "many": "{n}주 전", "other": "{n}주 전"},
    "months": {"one": "{n}개월 전", "few": "{n}개월 전", "many": "{n}개월 전", "other": "{n}개월 전"},
    "legacy": "{name}이(가) 기억하는 것: {line}",
}

PROMPTS = {
    "merge": """{name}은(는) {master}에 대해 꽤 확실해진 새로운 인상을 가지고 있으며, 이를 장기 페르소나에 기록하려고 합니다. 아래는 페르소나에 있는 같은 종류의 기존 항목과 관련된 인상입니다.
이 새로운 인상을 어떻게 처리할지 결정하세요:
- promote_fresh: 새로운 정보이므로 새 항목으로 추가합니다;
- merge_into: 기존 페르소나 항목 하나와 같은 내용을 말하므로 둘을 한 문장으로 합칩니다 (target_id에는 그 항목의 대괄호 안 id를, merged_text에는 합친 문장을 씁니다);
- reject: 신뢰할 수 없거나, 기존 내용과 모순되거나, 오래 기억할 가치가 없습니다.
merged_text는 인상과 항목이 원래 쓰인 언어로 쓰고 번역하지 마세요.
JSON 객체 하나만 출력하세요: {{"action": "promote_fresh|merge_into|reject", "target_id": "persona.<entity>.<id> 또는 null", "merged_text": "... 또는 null", "reason": "짧은 이유"}}

새로운 인상 ({entity}): {text}

기존 항목:
{pool}""",
    "none": "(없음)",
    "corrections": """{name}의 장기 페르소나에서 일부 기존 항목과 새로운 관찰이 거의 같은 것에 대해 말하고 있어 서로 모순될 수 있습니다. 한 쌍씩 판단하세요:
- merge: 둘을 한 문장으로 합칩니다 (text에 합친 문장을 씁니다);
- keep_new: 새로운 관찰이 기존 항목을 대신합니다 (text에 새 항목의 문장을 씁니다);
- keep_old: 기존 항목이 맞으므로 새로운 관찰은 버립니다;
- keep_both: 둘 다 성립하므로 각각 유지합니다 (text에 새 항목의 문장을 씁니다).
text는 항목이 원래 쓰인 언어로 쓰고 번역하지 마세요.
JSON 배열 하나만 출력하세요: [{{"index": 0, "action": "merge|keep_new|keep_old|keep_both", "text": "..."}}]

{lines}""",
    "correction_line": "[{index}] 기존(trust={old_trust}): {old_text} | 새로운 관찰(trust={new_trust}): {new_text}",
    "import_fuse": "아래는 사용자가 다른 프로그램에서 가져온 「{entity}」에 관한 기억 항목입니다. 구체적인 정보는 모두 남기고 아무것도 지어내지 말고, 겹치지 않는 간결한 문장 몇 개로 합쳐 주세요. 전체 길이는 {cap} 토큰 이내로 해 주세요. JSON 문자열 배열만 출력하세요.\n\n{items}",
    "refine": """아래는 {name}의 장기 페르소나(구역 "{section}") 중 거의 같은 내용을 말하는 항목들입니다. 각 내용이 한 번만 분명하게 말해지도록 정리하세요:
- merge: 여러 항목이 같은 내용 → 하나의 항목으로 합치기;
- split: 한 항목에 서로 무관한 내용이 섞임 → 여러 항목으로 나누기;
- modify: 한 항목이 불분명하거나 어색함 → 뜻은 그대로 두고 더 잘 고쳐 쓰기;
- discard: 한 항목이 다른 항목에 완전히 포함되거나 내용이 없음.
구체적인 세부 사항은 모두 남기고 항목에 없는 내용은 더하지 마세요. 항목 자체의 언어로 쓰세요. 문제없는 항목은 답에서 빼고, 모두 문제없으면 []로 답하세요.
항목:
{lines}
JSON 배열 하나로만 답하세요. 예: [{{"action": "merge", "ids": [0, 1], "text": "..."}}, {{"action": "split", "id": 2, "texts": ["...", "..."]}}, {{"action": "modify", "id": 3, "text": "..."}}, {{"action": "discard", "id": 4}}]""",
    "refine_line": "[{index}] {text} (evidence={score})",
}
