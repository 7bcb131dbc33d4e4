"""Korean."""

TEXT = {
    "no_messages": "기억할 메시지가 없습니다. messages에 메시지가 하나 이상 있어야 합니다.",
    "query_or_time": "query나 time(또는 둘 다)을 지정해 주세요.",
    "not_found": "id가 {id}인 기억(사실, 회고 또는 페르소나 항목)이 없습니다.",
    "read_only": "기억 {id}은 캐릭터 카드에서 온 것이라 카드를 바꿀 때만 바뀝니다.",
    "subject_or_time": "subject나 time(또는 둘 다)을 지정해 주세요.",
    "time_unreadable": "시간 표현 「{time}」을 이해하지 못했습니다.",
    "too_many": "일치하는 기억이 {limit}개를 넘습니다. 주제나 기간을 더 좁혀 주세요.",
}
