"""Spanish."""

TEXT = {
    "no_messages": "No hay nada que recordar: messages debe tener al menos un mensaje.",
    "query_or_time": "Indica query o time (o ambos).",
    "not_found": "No hay ningún recuerdo (hecho, reflexión o entrada de persona) con id {id}.",
    "read_only": "El recuerdo {id} viene de la ficha del personaje y solo cambia con ella.",
    "subject_or_time": "Indica subject o time (o ambos).",
    "time_unreadable": "No se pudo entender la expresión de tiempo «{time}».",
    "too_many": "Coinciden más de {limit} recuerdos; concreta más el tema o el periodo.",
}
