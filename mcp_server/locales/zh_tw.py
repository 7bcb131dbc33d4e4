"""Traditional Chinese."""

TEXT = {
    "no_messages": "沒有可記住的訊息：messages 至少要有一則。",
    "query_or_time": "請給出 query 或 time（或兩者）。",
    "not_found": "沒有 id 為 {id} 的記憶（事實、反思或人設條目）。",
    "read_only": "記憶 {id} 來自角色卡，只能隨角色卡修改。",
    "subject_or_time": "請給出 subject 或 time（或兩者）。",
    "time_unreadable": "無法理解時間表達「{time}」。",
    "too_many": "符合的記憶超過 {limit} 則；請把主題或時間範圍說得更具體。",
}
