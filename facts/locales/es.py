# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Spanish."""

PROMPTS = {
    "extract": """Llevas la memoria a largo plazo de {name}. Lee el diálogo de abajo y enumera los hechos atómicos que merece la pena recordar durante mucho tiempo: información estable o sucesos recientes sobre {master} (el amo), sobre {name} o sobre su relación.
Reglas:
- Un hecho por elemento, una frase completa en tercera persona que nombre a las personas («{master}» para el amo).
- Escribe cada hecho en el idioma del propio diálogo; no lo traduzcas.
- Omite saludos, cortesías y charla sin información; no supongas ni añadas nada que el diálogo no diga.
- importance de 1 a 10: 10 = nombres, apodos, cumpleaños, identidad o algo que piden recordar explícitamente; 8-9 = preferencias o hábitos centrales y estables; 6-7 = preferencias corrientes o sucesos recientes; 5 = menor pero digno de guardar; 1-4 = indicios débiles (devuélvelos igualmente).
- entity es exactamente uno de master, neko, relationship.
- event_when sitúa el suceso respecto a ahora: {{"start": {{"offset": entero, "unit": "minute|hour|day|week|month|year"}}, "end": la misma forma o null}}, desplazamientos negativos para el pasado; null si el diálogo no da ningún tiempo.
Responde solo con un array JSON, p. ej. [{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]; responde [] si no hay nada que merezca guardarse.""",
    "disclosure": """Llevas la memoria a largo plazo de {name}. Esta vez fíjate solo en lo que {name} (la IA) contó sobre sí en el diálogo de abajo: cómo se describe, lo que le gusta, sus experiencias, sus promesas y lo que dijo sobre su relación con {master}. No repitas hechos sobre el amo.
Hechos conocidos (no los repitas):
{known}
Mismas reglas y forma que en la extracción normal de hechos: una afirmación atómica por elemento en el idioma del diálogo, importance 1-10, entity neko o relationship, event_when relativo o null.
Responde solo con un array JSON; responde [] si no hay nada nuevo.""",
    "arbitrate": """Abajo hay pares de hechos posiblemente duplicados de la memoria de {name}. Decide cada par:
- merge: ambos dicen lo mismo; escribe en text una afirmación más completa, en el idioma de los propios hechos;
- replace: el hecho nuevo actualiza o sustituye al antiguo; conserva el nuevo y elimina el antiguo;
- keep_both: dicen cosas distintas; conserva ambos.
{pairs}
Responde solo con un array JSON: [{{"index": número, "action": "merge|replace|keep_both", "text": "solo para merge"}}].""",
    "pair": "[{index}] nuevo: {new}\n    antiguo: {old}",
    "extract_batch": """Llevas la memoria a largo plazo de {name}, que está en un chat de grupo. Abajo hay {count} segmentos numerados; cada uno empieza con una cabecera «[segmento N]» que nombra a quien habla. Extrae cada segmento por separado: los hechos atómicos que vale la pena recordar a largo plazo sobre quien habla en ese segmento (información estable o sucesos recientes), sobre {name} según esa persona, o sobre su relación. Los hechos de un segmento tratan solo de quien habla en él, nunca de quien habla en otro segmento y nunca del dueño de {name}.
Reglas:
- Un hecho por elemento: una afirmación completa en tercera persona que nombre a quien habla por su etiqueta.
- Escribe cada hecho en el idioma del propio segmento; no traduzcas.
- Omite saludos, cortesías y charla sin información; no supongas ni añadas nada que el segmento no diga.
- importance de 1 a 10: 10 = nombres, apodos, cumpleaños, identidad o algo que piden recordar explícitamente; 8-9 = preferencias o hábitos centrales y estables; 6-7 = preferencias comunes o sucesos recientes; 5 = algo menor pero digno de guardar; 1-4 = indicios débiles (devuélvelos igualmente).
- entity: master = sobre quien habla en el segmento, neko = sobre {name}, relationship = sobre esa persona y {name}.
- event_when sitúa el suceso respecto a ahora: {{"start": {{"offset": entero, "unit": "minute|hour|day|week|month|year"}}, "end": misma forma o null}}, desplazamientos negativos para el pasado; null si el segmento no da tiempo.
Responde solo con un objeto JSON, con exactamente una entrada por segmento y en orden: {{"segments": [{{"segment": 1, "facts": [{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]}}, {{"segment": 2, "facts": []}}]}}; "facts": [] cuando un segmento no tiene nada que valga la pena guardar.""",
    "segment_header": "[segmento {index}] habla: {speaker}",
}
