# ruff: noqa: E501  prose the companion and the model read: wrapping it would scatter the sentences
"""Spanish."""

TEXT = {
    "theater_titled": "[Resumen de la historia] «{title}»: {summary}",
    "theater_untitled": "[Resumen de la historia] {summary}",
    "history_intro": "Antes de iniciar la conversación, {name} repasa mentalmente los acontecimientos recientes.",
    "history_empty": "Antes de iniciar la conversación, no hay historial.",
    "memo_prefix": "Nota de la conversación anterior: ",
}

PROMPTS = {
    "summarise": (
        "Llevas las notas de la conversación entre {name} y {master}. Resume el diálogo de abajo en una nota breve:\n"
        "- escribe solo lo que el diálogo dice de verdad; no supongas ni redactes nada de forma engañosa;\n"
        "- no repitas el mismo sustantivo; usa pronombres cuando quede claro;\n"
        "- si algo se corrigió después, escríbelo como «primero X, luego corregido a Y»;\n"
        "- conserva palabra por palabra cualquier petición de {master} de no volver a mencionar algo;\n"
        "- si el diálogo empieza con una nota anterior, integra su contenido en la nueva.\n"
        'Responde solo con un objeto JSON: {{"summary": "<la nota>"}}.'
    ),
    "further": (
        "Abajo hay una nota de la conversación entre {name} y {master}; es demasiado larga. Acórtala a 500 palabras "
        "como máximo, conservando los datos clave, las correcciones y cualquier petición de no volver a mencionar algo.\n"
        'Responde solo con un objeto JSON: {{"summary": "<la nota más corta>"}}.'
    ),
    "stale_hint": (
        "Nota: la nota anterior se escribió hace más de una hora. Lo que en ella ya no sea actual, pásalo a un "
        "párrafo final aparte titulado «Antes», separado de lo reciente.\n"
    ),
    "review": (
        "Abajo está la conversación reciente entre {name} y {master} (puede empezar con una nota). Revisa las "
        "frases de {name} en busca de contradicciones, repeticiones innecesarias, confusión o choques con la nota, "
        "y devuelve el diálogo corregido:\n"
        "- mantén el número y el orden de los mensajes cuando se pueda; deja sin cambios las frases correctas;\n"
        "- no inventes hechos nuevos; acorta las frases de {master} solo cuando se repitan claramente;\n"
        "- role es human ({master}), ai ({name}) o system (solo la nota inicial).\n"
        'Responde solo con un objeto JSON: {{"explanation": "<qué cambió y por qué>", '
        '"corrected_dialogue": [{{"role": "human|ai|system", "content": "<texto>"}}]}}.'
    ),
}
