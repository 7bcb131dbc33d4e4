# ruff: noqa: E501  user-facing sentences: wrapping them only hides the text
"""Korean."""

TEXT = {
    "reasons": {
        "invalid_json": "파일이 올바른 UTF-8 JSON이 아닙니다.",
        "invalid_pack": "파일이 팩이 아닙니다. 최상위는 JSON 객체여야 합니다.",
        "unexpected_pack_field": "팩의 최상위에 허용되지 않는 필드가 있습니다.",
        "unsupported_schema_version": "팩의 schema_version이 1이 아닙니다. 이 서버는 버전 1만 읽습니다.",
        "invalid_pack_id": "pack_id는 영문 소문자, 숫자, 점, 밑줄, 하이픈으로 된 2~64자여야 하며 영문자나 숫자로 시작해야 합니다.",
        "invalid_material_type": "material_type은 knowledge 또는 corpus여야 합니다.",
        "invalid_source": "source에는 name(200자 이내)이 있어야 하고, 그 밖에는 homepage와 license(각 500자 이내)만 둘 수 있습니다.",
        "invalid_entries": "entries는 1~5000개 항목의 목록이어야 합니다.",
        "too_many_entries": "팩의 항목이 5000개를 넘습니다.",
        "invalid_entry": "형식이 잘못된 항목이 있습니다. 각 항목에는 한 줄짜리 title과 content가 있어야 하며 길이 제한을 지켜야 합니다.",
        "unexpected_entry_field": "허용되지 않는 필드가 있는 항목이 있습니다.",
        "duplicate_title": "제목이 같은 항목이 두 개 있습니다.",
        "pack_too_large": "파일이 10 MiB를 넘습니다.",
        "capacity_packs": "이미 팩이 200개 설치되어 있습니다. 먼저 하나를 삭제하세요.",
        "capacity_entries": "이 팩을 더하면 항목이 모두 20000개를 넘습니다. 먼저 팩을 삭제하세요.",
        "capacity_chunks": "이 팩을 더하면 청크가 모두 20000개를 넘습니다. 먼저 팩을 삭제하세요.",
        "capacity_bytes": "이 팩을 더하면 팩 파일이 64 MiB를 넘습니다. 먼저 팩을 삭제하세요.",
        "too_many_chunks": "이 팩의 항목은 10000개가 넘는 청크가 됩니다. 더 작은 팩으로 나누세요.",
        "job_in_progress": "이 팩은 이미 가져오는 중입니다. 끝날 때까지 기다려 주세요.",
        "knowledge_busy": "지식 저장소가 바쁩니다. 잠시 후 다시 시도하세요.",
        "knowledge_stopping": "서버가 종료되는 중입니다. 다시 시작된 뒤에 시도하세요.",
        "knowledge_starting": "지식 저장소가 아직 시작되는 중입니다. 잠시 후 다시 시도하세요.",
        "invalid_request": "업로드를 이해하지 못했습니다. 팩 파일을 하나만 고르세요.",
        "not_found": "그 팩이나 항목은 더 이상 없습니다.",
        "registry_invalid": "지식 폴더의 registry.json을 읽을 수 없습니다. 여기 표시된 팩은 계속 응답하지만, 파일을 고치거나 지울 때까지 폴더에서 읽어 오지도, 폴더에 다시 쓰지도 않습니다.",
        "knowledge_error": "서버에 문제가 생겼습니다. 아무것도 바뀌지 않았습니다.",
    },
    "unknown_reason": "팩이 거부되었습니다({reason}).",
}
