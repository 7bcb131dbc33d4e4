# ruff: noqa: E501  prose the companion reads: wrapping it would only scatter the sentences
"""Portuguese."""

TEXT = {
    "persona_header": "\n======Memória de longo prazo de {name}======\n",
    # Wire format, word for word (reference §5.1).
    "inner_thoughts_header": "\n\n======Pensamentos internos de {name}======\n",
    "inner_thoughts": "A hora atual é {time}. Antes de iniciar a conversa, {name} revisa mentalmente os "
    "acontecimentos recentes.",
    "system_label": "SYSTEM",
    "gap": "Já se passaram {elapsed} desde a última conversa com {master}.",
    "gap_now": "A hora atual é {time}.",
    "gap_long": "{name} percebe que faz muito tempo que não fala com {master} e se pergunta como {master} tem passado.",
    "holiday": "Hoje é {holiday}.",
    "holiday_join": " e ",
    "elapsed": {
        "days": {"one": "{n} dia", "few": "{n} dias", "many": "{n} dias", "other": "{n} dias"},
        "hours": {"one": "{n} hora", "few": "{n} horas", "many": "{n} horas", "other": "{n} horas"},
        "minutes": {"one": "{n} minuto", "few": "{n} minutos", "many": "{n} minutos", "other": "{n} minutos"},
    },
    "elapsed_join": " ",
    "recall_header": "Memórias relacionadas a esta consulta:",
    "recall_none": "Nenhuma memória relacionada foi encontrada.",
    "recall_loosen": "Nada correspondeu ao mesmo tempo à consulta e ao período; tente de novo com apenas um dos dois.",
    "today": "hoje",
    "days_ago": {"one": "há {n} dia", "few": "há {n} dias", "many": "há {n} dias", "other": "há {n} dias"},
    "in_days": {
        "one": "daqui a {n} dia",
        "few": "daqui a {n} dias",
        "many": "daqui a {n} dias",
        "other": "daqui a {n} dias",
    },
    "tier": {
        "fact": "fato",
        "reflection": "impressão",
        "fact_archive": "fato antigo",
        "persona": "persona",
        "raw_turn": "fala",
    },
    "entity": {"master": "sobre o mestre", "neko": "sobre si", "relationship": "relação"},
    "search_placeholder": "======{name} tenta se lembrar======\n{query}\n\n"
    "(A memória semântica está desativada nesta rota; use POST /query_memory/{name}.)",
}

HOLIDAYS = {
    "01-01": "o Dia da Confraternização Universal",
    "02-14": "o Dia de São Valentim",
    "04-21": "o Dia de Tiradentes",
    "04-25": "o Dia da Liberdade",
    "05-01": "o Dia do Trabalhador",
    "06-10": "o Dia de Portugal",
    "06-12": "o Dia dos Namorados",
    "09-07": "o Dia da Independência do Brasil",
    "10-12": "o Dia das Crianças",
    "11-02": "o Dia de Finados",
    "11-15": "o Dia da Proclamação da República",
    "12-24": "a véspera de Natal",
    "12-25": "o Natal",
    "12-31": "a véspera de Ano-Novo",
}

# Regular expressions (case-insensitive) recall reads questions and memories with: ``when`` — a question
# that asks when something happened; ``time_words`` — a memory that says when it happened (read with its
# own date, it answers such a question); ``question_words`` — the words a question asks with, taken out
# of a query before its words are matched (they match other questions, not the answers).
# ``recall.questions`` joins the eight locales' patterns.
QUESTIONS = {
    "question_words": r"\b(o que|que|quando|onde|aonde|quem|qual|quais|como|quanto|quanta|quantos|quantas|por que|porque)\b",
    "when": r"^\W*quando\b|\bque dia\b|\bem que (ano|data|mês)\b|\bhá quanto tempo\b",
    "time_words": (
        r"\b(ontem|hoje|amanhã|anteontem|recentemente|ultimamente|há \w+|fim de semana|"
        r"semana passada|mês passado|ano passado|semana que vem|próxima semana|(na|"
        r"no) (segunda|terça|quarta|quinta|sexta|sábado|domingo)|\d\d\d\d)\b"
    ),
}
