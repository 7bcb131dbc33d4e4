"""Japanese."""

TEXT = {
    "no_messages": "記憶するメッセージがありません。messages には少なくとも一件必要です。",
    "query_or_time": "query か time（または両方）を指定してください。",
    "not_found": "id が {id} の記憶（事実・振り返り・人物設定の項目）はありません。",
    "read_only": "記憶 {id} はキャラクターカード由来のため、カードを変更したときだけ変わります。",
    "subject_or_time": "subject か time（または両方）を指定してください。",
    "time_unreadable": "時間の表現「{time}」を読み取れませんでした。",
    "too_many": "一致する記憶が {limit} 件を超えています。話題か期間をもっと絞ってください。",
}
