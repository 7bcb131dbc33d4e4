"""Portuguese."""

TEXT = {
    "no_messages": "Nada para lembrar: messages precisa ter pelo menos uma mensagem.",
    "query_or_time": "Informe query ou time (ou ambos).",
    "not_found": "Não há lembrança (fato, reflexão ou entrada de persona) com id {id}.",
    "read_only": "A lembrança {id} vem da ficha do personagem e só muda com ela.",
    "subject_or_time": "Informe subject ou time (ou ambos).",
    "time_unreadable": "Não foi possível entender a expressão de tempo “{time}”.",
    "too_many": "Mais de {limit} lembranças correspondem; especifique melhor o assunto ou o período.",
}
