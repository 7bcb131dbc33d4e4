# ruff: noqa: E501  user-facing sentences: wrapping them only hides the text
"""Japanese."""

TEXT = {
    "reasons": {
        "invalid_json": "ファイルが正しい UTF-8 の JSON ではありません。",
        "invalid_pack": "ファイルはパックではありません。最上位は JSON オブジェクトでなければなりません。",
        "unexpected_pack_field": "パックの最上位に使えないフィールドがあります。",
        "unsupported_schema_version": "パックの schema_version が 1 ではありません。このサーバーが読めるのはバージョン 1 だけです。",
        "invalid_pack_id": "pack_id は英小文字・数字・ドット・下線・ハイフンの 2〜64 文字で、英字か数字で始まる必要があります。",
        "invalid_material_type": "material_type は knowledge か corpus でなければなりません。",
        "invalid_source": "source には name（200 文字以内）が必要で、ほかには homepage と license（各 500 文字以内）しか持てません。",
        "invalid_entries": "entries は 1〜5000 件の項目のリストでなければなりません。",
        "too_many_entries": "パックの項目が 5000 件を超えています。",
        "invalid_entry": "形式の正しくない項目があります。各項目には一行の title と content が必要で、どちらも長さの上限内でなければなりません。",
        "unexpected_entry_field": "使えないフィールドを持つ項目があります。",
        "duplicate_title": "同じタイトルの項目が二つあります。",
        "pack_too_large": "ファイルが 10 MiB を超えています。",
        "capacity_packs": "すでに 200 個のパックが入っています。先に一つ削除してください。",
        "capacity_entries": "このパックを加えると項目が合計 20000 件を超えます。先にパックを削除してください。",
        "capacity_chunks": "このパックを加えるとチャンクが合計 20000 個を超えます。先にパックを削除してください。",
        "capacity_bytes": "このパックを加えるとパックファイルが 64 MiB を超えます。先にパックを削除してください。",
        "too_many_chunks": "このパックの項目は 10000 個を超えるチャンクになります。小さなパックに分けてください。",
        "job_in_progress": "このパックは取り込み中です。完了までお待ちください。",
        "knowledge_busy": "ナレッジストアが混み合っています。少し待ってからやり直してください。",
        "knowledge_stopping": "サーバーが停止中です。再起動後にやり直してください。",
        "knowledge_starting": "ナレッジストアはまだ起動中です。少し待ってからやり直してください。",
        "invalid_request": "アップロードを解釈できませんでした。パックファイルを一つだけ選んでください。",
        "not_found": "そのパックまたは項目はもうありません。",
        "registry_invalid": "ナレッジフォルダの registry.json を読み取れません。ここに表示されているパックは引き続き応答しますが、ファイルを修復または削除するまで、フォルダからの読み込みもフォルダへの書き戻しも行いません。",
        "knowledge_error": "サーバーで問題が起きました。何も変更されていません。",
    },
    "unknown_reason": "パックは受け付けられませんでした（{reason}）。",
}
