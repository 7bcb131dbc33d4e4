# ruff: noqa: E501  user-facing sentences: wrapping them only hides the text
"""Spanish."""

TEXT = {
    "reasons": {
        "invalid_json": "El archivo no es JSON válido en UTF-8.",
        "invalid_pack": "El archivo no es un paquete: su nivel superior debe ser un objeto JSON.",
        "unexpected_pack_field": "El paquete tiene en su nivel superior un campo que no está permitido.",
        "unsupported_schema_version": "El schema_version del paquete no es 1, la única versión que lee este servidor.",
        "invalid_pack_id": "El pack_id debe tener de 2 a 64 letras minúsculas, dígitos, puntos, guiones bajos o guiones, y empezar por una letra o un dígito.",
        "invalid_material_type": "El material_type debe ser knowledge o corpus.",
        "invalid_source": "El source debe tener un name (200 caracteres como máximo) y, aparte de eso, solo homepage y license (500 caracteres cada uno como máximo).",
        "invalid_entries": "Las entries deben ser una lista de 1 a 5000 entradas.",
        "too_many_entries": "El paquete tiene más de 5000 entradas.",
        "invalid_entry": "Hay una entrada mal formada: cada una necesita un title de una sola línea y un content, dentro de su límite de longitud.",
        "unexpected_entry_field": "Una entrada tiene un campo que no está permitido.",
        "duplicate_title": "Dos entradas tienen el mismo título.",
        "pack_too_large": "El archivo supera los 10 MiB.",
        "capacity_packs": "Ya hay 200 paquetes instalados: quita uno primero.",
        "capacity_entries": "Con este paquete habría más de 20 000 entradas en total: quita un paquete primero.",
        "capacity_chunks": "Con este paquete habría más de 20 000 fragmentos en total: quita un paquete primero.",
        "capacity_bytes": "Con este paquete los archivos de paquetes ocuparían más de 64 MiB: quita un paquete primero.",
        "too_many_chunks": "Las entradas del paquete dan más de 10 000 fragmentos: divídelo en paquetes más pequeños.",
        "job_in_progress": "Este paquete ya se está importando: espera a que termine.",
        "knowledge_busy": "El almacén de conocimiento está ocupado: inténtalo de nuevo en un momento.",
        "knowledge_stopping": "El servidor se está deteniendo: inténtalo de nuevo cuando se reinicie.",
        "knowledge_starting": "El almacén de conocimiento aún se está iniciando: inténtalo de nuevo en un momento.",
        "invalid_request": "No se entendió la subida: elige exactamente un archivo de paquete.",
        "not_found": "Ese paquete o entrada ya no está instalado.",
        "registry_invalid": "No se puede leer el registry.json de la carpeta de conocimiento: los paquetes que se muestran aquí siguen respondiendo, pero no se lee ni se escribe nada en la carpeta hasta que el archivo se repare o se elimine.",
        "knowledge_error": "Algo falló en el servidor; no se cambió nada.",
    },
    "unknown_reason": "El paquete fue rechazado ({reason}).",
}
