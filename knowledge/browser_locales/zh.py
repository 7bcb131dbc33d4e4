# ruff: noqa: E501  user-facing sentences: wrapping them only hides the text
"""Simplified Chinese."""

TEXT = {
    "reasons": {
        "invalid_json": "文件不是有效的 UTF-8 JSON。",
        "invalid_pack": "文件不是知识包：顶层必须是一个 JSON 对象。",
        "unexpected_pack_field": "知识包顶层有不允许的字段。",
        "unsupported_schema_version": "知识包的 schema_version 不是 1，本服务器只读取版本 1。",
        "invalid_pack_id": "pack_id 必须是 2 到 64 个小写字母、数字、点、下划线或连字符，并以字母或数字开头。",
        "invalid_material_type": "material_type 必须是 knowledge 或 corpus。",
        "invalid_source": "source 必须有 name（最多 200 个字符），此外只能有 homepage 和 license（各最多 500 个字符）。",
        "invalid_entries": "entries 必须是包含 1 到 5000 个条目的列表。",
        "too_many_entries": "知识包的条目超过 5000 个。",
        "invalid_entry": "有条目格式不对：每个条目需要单行的 title 和 content，且都不超过长度限制。",
        "unexpected_entry_field": "有条目含有不允许的字段。",
        "duplicate_title": "有两个条目的标题相同。",
        "pack_too_large": "文件超过 10 MiB。",
        "capacity_packs": "已经安装了 200 个知识包：请先移除一个。",
        "capacity_entries": "加上这个知识包，条目总数将超过 20000：请先移除一个知识包。",
        "capacity_chunks": "加上这个知识包，分块总数将超过 20000：请先移除一个知识包。",
        "capacity_bytes": "加上这个知识包，知识包文件将超过 64 MiB：请先移除一个知识包。",
        "too_many_chunks": "这个知识包的条目会切成超过 10000 个分块：请拆成几个较小的知识包。",
        "job_in_progress": "这个知识包正在导入中：请等待导入完成。",
        "knowledge_busy": "知识库正忙：请稍后再试。",
        "knowledge_stopping": "服务器正在关闭：请在重启后再试。",
        "knowledge_starting": "知识库还在启动中：请稍后再试。",
        "invalid_request": "无法识别这次上传：请只选择一个知识包文件。",
        "not_found": "这个知识包或条目已不存在。",
        "registry_invalid": "知识文件夹中的 registry.json 无法读取：这里列出的知识包照常回答，但在修复或删除该文件之前，既不会从文件夹读入，也不会写回文件夹。",
        "knowledge_error": "服务器出错了，没有做任何更改。",
    },
    "unknown_reason": "知识包被拒绝（{reason}）。",
}
