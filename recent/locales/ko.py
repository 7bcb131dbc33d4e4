# ruff: noqa: E501  prose the companion and the model read: wrapping it would scatter the sentences
"""Korean."""

TEXT = {
    "theater_titled": "[극장 회고] 「{title}」: {summary}",
    "theater_untitled": "[극장 회고] {summary}",
    "history_intro": "대화를 시작하기 전에 {name}은 최근 있었던 일들을 마음속으로 정리하고 있습니다.",
    "history_empty": "대화를 시작하기 전에, 기록이 없습니다.",
    "memo_prefix": "이전 대화의 메모: ",
}

PROMPTS = {
    "summarise": (
        "당신은 {name}와(과) {master}의 대화 기록을 정리하는 역할입니다. 아래 대화를 간결한 메모 하나로 압축하세요:\n"
        "- 대화에 실제로 나온 내용만 쓰고, 추측하거나 오해를 부를 만한 문장은 쓰지 마세요;\n"
        "- 같은 명사를 반복하지 말고, 분명할 때는 대명사를 쓰세요;\n"
        "- 나중에 정정된 일은 「처음에는 X, 나중에 Y로 정정」처럼 쓰세요;\n"
        "- {master}이(가) 다시 꺼내지 말라고 한 일은 그 요청을 원문 그대로 남기세요;\n"
        "- 대화가 이전 메모로 시작하면 그 내용도 새 메모에 합치세요.\n"
        'JSON 객체 하나만 출력하세요: {{"summary": "<메모>"}}. 다른 내용은 출력하지 마세요.'
    ),
    "further": (
        "아래는 {name}와(과) {master}의 대화 메모인데 너무 깁니다. 핵심 정보(특히 정정 내용과 「다시 꺼내지 말라」는 "
        "요청)를 잃지 않도록 하면서 500자 이내로 줄이세요.\n"
        'JSON 객체 하나만 출력하세요: {{"summary": "<줄인 메모>"}}.'
    ),
    "stale_hint": (
        "참고: 마지막으로 메모를 정리한 지 한 시간이 넘었습니다. 이전 메모에서 더 이상 현재의 일이 아닌 내용은 "
        "새 메모 끝의 「예전 일」이라는 별도 문단으로 옮기고, 최근 내용과 섞지 마세요.\n"
    ),
    "review": (
        "아래는 {name}와(과) {master}의 최근 대화 기록입니다(메모로 시작할 수 있습니다). {name}의 발언에 앞뒤 모순, "
        "불필요한 반복, 의미의 혼란, 메모와의 충돌이 있는지 확인하고 수정한 대화를 돌려주세요:\n"
        "- 메시지 수와 순서는 가능한 한 그대로 두고, 문제없는 발언은 그대로 남기세요;\n"
        "- 새로운 사실을 지어내지 말고, {master}의 발언은 분명히 반복될 때만 줄이세요;\n"
        "- role은 human({master}), ai({name}), system(맨 앞의 메모만) 중 하나입니다.\n"
        'JSON 객체 하나만 출력하세요: {{"explanation": "<무엇을 왜 고쳤는지>", '
        '"corrected_dialogue": [{{"role": "human|ai|system", "content": "<텍스트>"}}]}}.'
    ),
}
