"""English."""

TEXT = {
    "no_messages": "Nothing to remember: messages must hold at least one message.",
    "query_or_time": "Give a query or a time expression (or both).",
    "not_found": "There is no memory (fact, reflection or persona entry) with id {id}.",
    "read_only": "Memory {id} comes from the character card and only changes with the card.",
    "subject_or_time": "Give a subject or a time range (or both).",
    "time_unreadable": "The time expression “{time}” could not be read.",
    "too_many": "More than {limit} memories match; name the subject or the time range more narrowly.",
}
