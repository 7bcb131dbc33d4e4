# ruff: noqa: E501  prose the companion and the model read: wrapping it would scatter the sentences
"""Portuguese."""

TEXT = {
    "theater_titled": "[Resumo da história] “{title}”: {summary}",
    "theater_untitled": "[Resumo da história] {summary}",
    "history_intro": "Antes de iniciar a conversa, {name} revisa mentalmente os acontecimentos recentes.",
    "history_empty": "Antes de iniciar a conversa, não há histórico.",
    "memo_prefix": "Nota da conversa anterior: ",
}

PROMPTS = {
    "summarise": (
        "Você cuida das anotações da conversa entre {name} e {master}. Resuma o diálogo abaixo em uma nota curta:\n"
        "- escreva só o que o diálogo realmente diz; não suponha nem redija nada de forma enganosa;\n"
        "- não repita o mesmo substantivo; use pronomes quando ficar claro;\n"
        "- se algo foi corrigido depois, escreva «primeiro X, depois corrigido para Y»;\n"
        "- mantenha palavra por palavra qualquer pedido de {master} para não voltar a mencionar algo;\n"
        "- se o diálogo começar com uma nota anterior, incorpore o conteúdo dela à nova.\n"
        'Responda apenas com um objeto JSON: {{"summary": "<a nota>"}}.'
    ),
    "further": (
        "Abaixo está uma nota da conversa entre {name} e {master}; ela está longa demais. Encurte-a para no máximo "
        "500 palavras, mantendo os fatos principais, as correções e qualquer pedido para não voltar a mencionar algo.\n"
        'Responda apenas com um objeto JSON: {{"summary": "<a nota mais curta>"}}.'
    ),
    "stale_hint": (
        "Observação: a nota anterior foi escrita há mais de uma hora. O que nela não for mais atual, mova para um "
        "parágrafo final separado chamado «Antes», longe dos acontecimentos recentes.\n"
    ),
    "review": (
        "Abaixo está a conversa recente entre {name} e {master} (pode começar com uma nota). Verifique as falas de "
        "{name} em busca de contradições, repetições desnecessárias, confusão ou conflitos com a nota, e devolva o "
        "diálogo corrigido:\n"
        "- mantenha o número e a ordem das mensagens quando possível; deixe as falas boas sem mudanças;\n"
        "- não invente fatos novos; encurte as falas de {master} só quando elas se repetirem claramente;\n"
        "- role é human ({master}), ai ({name}) ou system (apenas a nota inicial).\n"
        'Responda apenas com um objeto JSON: {{"explanation": "<o que mudou e por quê>", '
        '"corrected_dialogue": [{{"role": "human|ai|system", "content": "<texto>"}}]}}.'
    ),
}
