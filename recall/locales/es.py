# ruff: noqa: E501  prose the companion reads: wrapping it would only scatter the sentences
"""Spanish."""

TEXT = {
    "persona_header": "\n======Memoria a largo plazo de {name}======\n",
    # Wire format, word for word (reference §5.1).
    "inner_thoughts_header": "\n\n======Pensamientos internos de {name}======\n",
    "inner_thoughts": "La hora actual es {time}. Antes de iniciar la conversación, {name} repasa mentalmente "
    "los acontecimientos recientes.",
    "system_label": "SYSTEM",
    "gap": "Han pasado {elapsed} desde la última conversación con {master}.",
    "gap_now": "La hora actual es {time}.",
    "gap_long": "{name} se da cuenta de que hace mucho que no habla con {master} y se pregunta cómo le ha ido.",
    "holiday": "Hoy es {holiday}.",
    "holiday_join": " y ",
    "elapsed": {
        "days": {"one": "{n} día", "few": "{n} días", "many": "{n} días", "other": "{n} días"},
        "hours": {"one": "{n} hora", "few": "{n} horas", "many": "{n} horas", "other": "{n} horas"},
        "minutes": {"one": "{n} minuto", "few": "{n} minutos", "many": "{n} minutos", "other": "{n} minutos"},
    },
    "elapsed_join": " ",
    "recall_header": "Recuerdos relacionados con esta consulta:",
    "recall_none": "No se encontraron recuerdos relacionados.",
    "recall_loosen": "Nada coincide a la vez con la consulta y con el tiempo; inténtalo de nuevo con solo uno "
    "de los dos.",
    "today": "hoy",
    "days_ago": {
        "one": "hace {n} día",
        "few": "hace {n} días",
        "many": "hace {n} días",
        "other": "hace {n} días",
    },
    "in_days": {
        "one": "dentro de {n} día",
        "few": "dentro de {n} días",
        "many": "dentro de {n} días",
        "other": "dentro de {n} días",
    },
    "tier": {
        "fact": "hecho",
        "reflection": "impresión",
        "fact_archive": "hecho antiguo",
        "persona": "persona",
        "raw_turn": "dicho",
    },
    "entity": {"master": "sobre el amo", "neko": "sobre sí", "relationship": "relación"},
    "search_placeholder": "======{name} intenta recordar======\n{query}\n\n"
    "(La memoria semántica está desactivada en esta ruta; usa POST /query_memory/{name}.)",
}

HOLIDAYS = {
    "01-01": "Año Nuevo",
    "01-06": "el Día de Reyes",
    "02-14": "San Valentín",
    "05-01": "el Día del Trabajo",
    "10-12": "el Día de la Hispanidad",
    "11-01": "el Día de Todos los Santos",
    "11-02": "el Día de Muertos",
    "12-24": "Nochebuena",
    "12-25": "Navidad",
    "12-31": "Nochevieja",
}

# Regular expressions (case-insensitive) recall reads questions and memories with: ``when`` — a question
# that asks when something happened; ``time_words`` — a memory that says when it happened (read with its
# own date, it answers such a question); ``question_words`` — the words a question asks with, taken out
# of a query before its words are matched (they match other questions, not the answers).
# ``recall.questions`` joins the eight locales' patterns.
QUESTIONS = {
    "question_words": r"\b(qué|cuándo|dónde|adónde|quién|quiénes|cuál|cuáles|cómo|cuánto|cuánta|cuántos|cuántas|por qué)(?!\w)",
    "when": (
        r"(^|¿)\W*cu[áa]ndo\b|\bcuándo\b|\bqué día\b|\ben qué (año|fecha|mes)\b|"
        r"\bhace cuánto\b"
    ),
    "time_words": (
        r"\b(ayer|anoche|hoy|mañana|anteayer|recientemente|últimamente|hace \w+|"
        r"fin de semana|la semana pasada|el mes pasado|el año pasado|la próxima semana|"
        r"el (lunes|martes|miércoles|jueves|viernes|sábado|domingo)|\d\d\d\d)\b"
    ),
}
