# ruff: noqa: E501  user-facing sentences: wrapping them only hides the text
"""Traditional Chinese."""

TEXT = {
    "reasons": {
        "invalid_json": "檔案不是有效的 UTF-8 JSON。",
        "invalid_pack": "檔案不是知識包：頂層必須是一個 JSON 物件。",
        "unexpected_pack_field": "知識包頂層有不允許的欄位。",
        "unsupported_schema_version": "知識包的 schema_version 不是 1，本伺服器只讀取版本 1。",
        "invalid_pack_id": "pack_id 必須是 2 到 64 個小寫字母、數字、點、底線或連字號，並以字母或數字開頭。",
        "invalid_material_type": "material_type 必須是 knowledge 或 corpus。",
        "invalid_source": "source 必須有 name（最多 200 個字元），此外只能有 homepage 和 license（各最多 500 個字元）。",
        "invalid_entries": "entries 必須是包含 1 到 5000 個條目的清單。",
        "too_many_entries": "知識包的條目超過 5000 個。",
        "invalid_entry": "有條目格式不對：每個條目需要單行的 title 和 content，且都不超過長度限制。",
        "unexpected_entry_field": "有條目含有不允許的欄位。",
        "duplicate_title": "有兩個條目的標題相同。",
        "pack_too_large": "檔案超過 10 MiB。",
        "capacity_packs": "已經安裝了 200 個知識包：請先移除一個。",
        "capacity_entries": "加上這個知識包，條目總數將超過 20000：請先移除一個知識包。",
        "capacity_chunks": "加上這個知識包，分塊總數將超過 20000：請先移除一個知識包。",
        "capacity_bytes": "加上這個知識包，知識包檔案將超過 64 MiB：請先移除一個知識包。",
        "too_many_chunks": "這個知識包的條目會切成超過 10000 個分塊：請拆成幾個較小的知識包。",
        "job_in_progress": "這個知識包正在匯入中：請等待匯入完成。",
        "knowledge_busy": "知識庫正忙：請稍後再試。",
        "knowledge_stopping": "伺服器正在關閉：請在重新啟動後再試。",
        "knowledge_starting": "知識庫還在啟動中：請稍後再試。",
        "invalid_request": "無法識別這次上傳：請只選擇一個知識包檔案。",
        "not_found": "這個知識包或條目已不存在。",
        "registry_invalid": "知識資料夾中的 registry.json 無法讀取：這裡列出的知識包照常回答，但在修復或刪除該檔案之前，既不會從資料夾讀入，也不會寫回資料夾。",
        "knowledge_error": "伺服器出錯了，沒有做任何變更。",
    },
    "unknown_reason": "知識包被拒絕（{reason}）。",
}
