# ruff: noqa: E501  user-facing sentences: wrapping them only hides the text
"""Portuguese."""

TEXT = {
    "reasons": {
        "invalid_json": "O arquivo não é JSON válido em UTF-8.",
        "invalid_pack": "O arquivo não é um pacote: seu nível superior deve ser um objeto JSON.",
        "unexpected_pack_field": "O pacote tem no nível superior um campo que não é permitido.",
        "unsupported_schema_version": "O schema_version do pacote não é 1, a única versão que este servidor lê.",
        "invalid_pack_id": "O pack_id deve ter de 2 a 64 letras minúsculas, dígitos, pontos, sublinhados ou hífens, começando por uma letra ou um dígito.",
        "invalid_material_type": "O material_type deve ser knowledge ou corpus.",
        "invalid_source": "O source deve ter um name (no máximo 200 caracteres) e, além dele, apenas homepage e license (no máximo 500 caracteres cada).",
        "invalid_entries": "As entries devem ser uma lista de 1 a 5000 entradas.",
        "too_many_entries": "O pacote tem mais de 5000 entradas.",
        "invalid_entry": "Há uma entrada malformada: cada uma precisa de um title de uma linha e de um content, dentro do limite de tamanho.",
        "unexpected_entry_field": "Uma entrada tem um campo que não é permitido.",
        "duplicate_title": "Duas entradas têm o mesmo título.",
        "pack_too_large": "O arquivo passa de 10 MiB.",
        "capacity_packs": "Já há 200 pacotes instalados: remova um primeiro.",
        "capacity_entries": "Com este pacote haveria mais de 20 000 entradas no total: remova um pacote primeiro.",
        "capacity_chunks": "Com este pacote haveria mais de 20 000 fragmentos no total: remova um pacote primeiro.",
        "capacity_bytes": "Com este pacote os arquivos de pacotes ocupariam mais de 64 MiB: remova um pacote primeiro.",
        "too_many_chunks": "As entradas do pacote geram mais de 10 000 fragmentos: divida-o em pacotes menores.",
        "job_in_progress": "Este pacote já está sendo importado: aguarde o fim da importação.",
        "knowledge_busy": "O armazém de conhecimento está ocupado: tente de novo em instantes.",
        "knowledge_stopping": "O servidor está sendo desligado: tente de novo depois que ele reiniciar.",
        "knowledge_starting": "O armazém de conhecimento ainda está iniciando: tente de novo em instantes.",
        "invalid_request": "O envio não foi entendido: escolha exatamente um arquivo de pacote.",
        "not_found": "Esse pacote ou entrada não está mais instalado.",
        "registry_invalid": "Não é possível ler o registry.json da pasta de conhecimento: os pacotes mostrados aqui continuam respondendo, mas nada é lido da pasta nem gravado nela até que o arquivo seja reparado ou removido.",
        "knowledge_error": "Algo deu errado no servidor; nada foi alterado.",
    },
    "unknown_reason": "O pacote foi recusado ({reason}).",
}
