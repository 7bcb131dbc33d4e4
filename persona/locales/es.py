# ruff: noqa: E501  prose the companion and the model read: wrapping it would scatter the sentences
"""Spanish."""

TEXT = {
    "master": "### Sobre {master}",
    "neko": "### Sobre {ai}",
    "relationship": "### Dinámica de la relación",
    "scoped": "### Sobre {subject}",
    "other": "### {section}",
    "pending": "### Impresiones recientes de {ai} (aún no seguras)",
    "confirmed": "### Lo que {ai} tiene bastante claro",
    "past_open": "======Recuerdos más antiguos a continuación======",
    "past_note": "(Esto pasó hace tiempo y sirve solo de contexto; no lo menciones a menos que {master} lo saque.)",
    "past_close": "======Fin de los recuerdos más antiguos======",
    "suppressed": "### No sacar por ahora ({ai} lo recuerda, pero ha salido demasiadas veces últimamente; no lo vuelvas a mencionar por iniciativa propia)",
    "now": "hace un momento",
    "days": {
        "one": "hace {n} día",
        "few": "hace {n} días",
        "many": "hace {n} días",
        "other": "hace {n} días",
    },
    "weeks": {
        "one": "hace {n} semana",
        "few": "hace {n} semanas",
        "many": "hace {n} semanas",
        "other": "hace {n} semanas",
    },
    "months": {
        "one": "hace {n} mes",
        "few": "hace {n} meses",
        "many": "hace {n} meses",
        "other": "hace {n} meses",
    },
    "legacy": "{name} recuerda: {line}",
}

PROMPTS = {
    "merge": """{name} tiene una impresión nueva y ya bien asentada sobre {master} que está a punto de entrar en la persona a largo plazo. Abajo están las entradas existentes de la persona del mismo tipo y las impresiones relacionadas.
Decide qué hacer con la nueva impresión:
- promote_fresh: es información nueva; añádela como una entrada nueva;
- merge_into: dice lo mismo que una entrada existente; fusiona ambas en una sola frase (target_id es el id de esa entrada entre corchetes, merged_text la redacción fusionada);
- reject: no es fiable, contradice lo que se sabe o no tiene valor duradero.
Escribe merged_text en el idioma en que están escritas la impresión y la entrada; no las traduzcas.
Responde solo con un objeto JSON: {{"action": "promote_fresh|merge_into|reject", "target_id": "persona.<entity>.<id> o null", "merged_text": "... o null", "reason": "un motivo breve"}}

Nueva impresión ({entity}): {text}

Entradas existentes:
{pool}""",
    "none": "(ninguna)",
    "corrections": """En la persona a largo plazo de {name}, algunas entradas existentes y observaciones nuevas hablan casi de lo mismo y pueden contradecirse. Juzga cada par:
- merge: combina ambas en una sola frase (text es la redacción combinada);
- keep_new: la observación nueva sustituye a la entrada antigua (text es la redacción de la nueva entrada);
- keep_old: la entrada antigua es correcta; descarta la observación nueva;
- keep_both: ambas son ciertas; conserva cada una (text es la redacción de la nueva entrada).
Escribe text en el idioma en que están escritas las entradas; no las traduzcas.
Responde solo con un array JSON: [{{"index": 0, "action": "merge|keep_new|keep_old|keep_both", "text": "..."}}]

{lines}""",
    "correction_line": "[{index}] existente(trust={old_trust}): {old_text} | nueva observación(trust={new_trust}): {new_text}",
    "import_fuse": "A continuación hay recuerdos sobre «{entity}» que el usuario trajo de otro programa. Fúndelos en unas pocas afirmaciones breves y sin repeticiones, conservando cada dato concreto y sin inventar nada. No pases de {cap} tokens en total. Responde solo con un array JSON de cadenas.\n\n{items}",
    "refine": """Abajo hay entradas de la persona a largo plazo de {name} (sección «{section}») que dicen casi lo mismo. Ordénalas para que cada cosa se diga una sola vez y con claridad:
- merge: varias entradas dicen lo mismo → una entrada con el texto combinado;
- split: una entrada mezcla cosas sin relación → varias entradas;
- modify: una entrada es confusa o torpe → una redacción mejor con el mismo sentido;
- discard: una entrada está cubierta por completo por las demás o no dice nada.
Conserva cada detalle concreto y no añadas nada que las entradas no digan; escribe en el idioma de las propias entradas. Deja fuera las entradas que estén bien; responde [] si todas lo están.
Entradas:
{lines}
Responde solo con un array JSON, por ejemplo: [{{"action": "merge", "ids": [0, 1], "text": "..."}}, {{"action": "split", "id": 2, "texts": ["...", "..."]}}, {{"action": "modify", "id": 3, "text": "..."}}, {{"action": "discard", "id": 4}}]""",
    "refine_line": "[{index}] {text} (evidence={score})",
}
