# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Spanish."""

PROMPTS = {
    "synthesis": """Ayudas a {name} a formarse una impresión duradera de {master}. Abajo hay hechos anotados recientemente (y algunos hechos relacionados más antiguos, ya asimilados, solo como contexto).
Resúmelos en una impresión de más alto nivel: ¿qué ve {name} en estos hechos?
Reglas:
- De una a tres frases, menos de 150 palabras; nombra a las personas («{master}» para el amo); no añadas nada que los hechos no digan.
- Escribe la impresión en el idioma de los propios hechos; no la traduzcas.
- entity es uno de master, neko, relationship.
- relation_type debe encajar con entity: master → preference|trait|habit|identity|emotional|boundary; neko → self_awareness|learned|role_note; relationship → dynamic|milestone|tension|shared_memory|agreement.
- temporal_scope es pattern (un patrón duradero), state (un estado durante un tiempo), episode (un suceso) o past (ya pasado).
- subject nombra el tema en pocas palabras; event_when usa la forma de tiempo relativo de los hechos, o null.
Responde solo con un objeto JSON: {{"reflection": "...", "entity": "...", "relation_type": "...", "temporal_scope": "...", "subject": "...", "event_when": null}}

Hechos nuevos:
{facts}

Hechos antiguos relacionados:
{related}""",
    "feedback": """{name} sacó hace poco estas impresiones con {master}:
{items}
Según las respuestas de {master} en el diálogo de abajo, juzga cada una: confirmed (está de acuerdo, añade algo o la da por buena), denied (la rechaza o la corrige), ignored (no responde a ella).
Responde solo con un array JSON: [{{"reflection_id": "...", "feedback": "confirmed|denied|ignored"}}]""",
    "signals": """Abajo están las impresiones actuales de {name} sobre {master} (observations) y hechos recién extraídos del diálogo reciente.
Para cada hecho nuevo, di si respalda (reinforces) o contradice (negates) alguna de las impresiones; omite los que no tengan relación.
Impresiones:
{observations}
Hechos nuevos:
{facts}
Responde solo con un objeto JSON: {{"signals": [{{"source_fact_id": "...", "target_id": "...", "target_type": "reflection|persona", "signal": "reinforces|negates", "reason": "..."}}]}}""",
    "keyword": """{master} acaba de decir algo que suena a negación o a corrección. Abajo están los últimos mensajes de {master} y las impresiones actuales de {name}.
¿Qué impresiones niegan las palabras de {master}? Responde con una lista vacía si ninguna.
Mensajes de {master}:
{messages}
Impresiones:
{observations}
Responde solo con un objeto JSON: {{"targets": [{{"target_id": "...", "reason": "..."}}]}}""",
    "rebuttal": """Abajo están las impresiones sobre {master} de las que {name} tiene bastante certeza, y los últimos mensajes de {master}.
¿Algún mensaje desmiente claramente una impresión? Responde denied solo cuando lo haga con claridad.
Impresiones:
{observations}
Mensajes de {master}:
{messages}
Responde solo con un objeto JSON: {{"verdicts": [{{"reflection_id": "...", "verdict": "denied|kept"}}]}}""",
    "rerank": """Abajo están los recuerdos numerados de {name} sobre {master} y lo nuevo sobre {master}. ¿Qué recuerdos importan más para lo nuevo? La puntuación de evidencia de cada recuerdo es solo información adicional.
Nuevo:
{queries}
Recuerdos:
{memories}
Responde solo con un objeto JSON: {{"ranked": [los números de los recuerdos más relevantes, el más relevante primero, como máximo {budget}]}}""",
    "fact_line": "- {text} (importancia: {importance})",
    "refine": """Abajo hay impresiones de {name} sobre {master} que dicen casi lo mismo. Ordénalas para que cada cosa se diga una sola vez y con claridad:
- merge: varias impresiones dicen lo mismo → una impresión con el texto combinado;
- split: una impresión mezcla cosas sin relación → varias impresiones;
- modify: una impresión es confusa o torpe → una redacción mejor con el mismo sentido;
- discard: una impresión está cubierta por completo por las demás o no dice nada.
Conserva cada detalle concreto y no añadas nada que no digan; escribe en su propio idioma. Deja fuera las impresiones que estén bien; responde [] si todas lo están.
Impresiones:
{lines}
Responde solo con un array JSON, por ejemplo: [{{"action": "merge", "ids": [0, 1], "text": "..."}}, {{"action": "split", "id": 2, "texts": ["...", "..."]}}, {{"action": "modify", "id": 3, "text": "..."}}, {{"action": "discard", "id": 4}}]""",
    "recheck_reflection": """{name} anotó esta impresión sobre {master} el {date}:
{text}
Clasifícala de nuevo:
- temporal_scope: pattern (un patrón duradero), state (un estado por un tiempo), episode (un suceso) o past (ya pasado);
- event_when: cuándo ocurrió lo que describe, respecto al {date}: {{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": null}}, offset negativo para antes de ese día, un "end" con la misma forma si lo indica; null si no da tiempo.
Responde solo con un objeto JSON: {{"temporal_scope": "pattern|state|episode|past", "event_when": null}}""",
    "recheck_fact": """{name} anotó este hecho el {date}:
{text}
¿Cuándo ocurrió lo que describe, respecto al {date}? event_when es {{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": null}}, offset negativo para antes de ese día, un "end" con la misma forma si lo indica; null si no da tiempo.
Responde solo con un objeto JSON: {{"event_when": null}}""",
    "refine_line": "[{index}] {text} (evidence={score})",
}
