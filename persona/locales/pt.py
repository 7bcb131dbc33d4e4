# ruff: noqa: E501  prose the companion and the model read: wrapping it would scatter the sentences
"""Portuguese."""

TEXT = {
    "master": "### Sobre {master}",
    "neko": "### Sobre {ai}",
    "relationship": "### Dinâmica da relação",
    "scoped": "### Sobre {subject}",
    "other": "### {section}",
    "pending": "### Impressões recentes de {ai} (ainda incertas)",
    "confirmed": "### O que {ai} tem quase certeza",
    "past_open": "======Memórias mais antigas abaixo======",
    "past_note": "(Isto aconteceu há algum tempo e serve só de contexto; não mencione a menos que {master} toque no assunto.)",
    "past_close": "======Fim das memórias mais antigas======",
    "suppressed": "### Não mencionar por enquanto ({ai} se lembra, mas isso surgiu vezes demais ultimamente; não volte a puxar o assunto)",
    "now": "agora há pouco",
    "days": {"one": "há {n} dia", "few": "há {n} dias", "many": "há {n} dias", "other": "há {n} dias"},
    "weeks": {
        "one": "há {n} semana",
        "few": "há {n} semanas",
        "many": "há {n} semanas",
        "other": "há {n} semanas",
    },
    "months": {"one": "há {n} mês", "few": "há {n} meses", "many": "há {n} meses", "other": "há {n} meses"},
    "legacy": "{name} se lembra: {line}",
}

PROMPTS = {
    "merge": """{name} tem uma impressão nova e já bem estabelecida sobre {master}, prestes a entrar na persona de longo prazo. Abaixo estão as entradas existentes da persona do mesmo tipo e as impressões relacionadas.
Decida o que fazer com a nova impressão:
- promote_fresh: é informação nova; adicione-a como uma nova entrada;
- merge_into: diz o mesmo que uma entrada existente; junte as duas em uma só frase (target_id é o id dessa entrada entre colchetes, merged_text a redação combinada);
- reject: não é confiável, contradiz o que se sabe ou não tem valor duradouro.
Escreva merged_text no idioma em que a impressão e a entrada foram escritas; não as traduza.
Responda apenas com um objeto JSON: {{"action": "promote_fresh|merge_into|reject", "target_id": "persona.<entity>.<id> ou null", "merged_text": "... ou null", "reason": "um motivo curto"}}

Nova impressão ({entity}): {text}

Entradas existentes:
{pool}""",
    "none": "(nenhuma)",
    "corrections": """Na persona de longo prazo de {name}, algumas entradas existentes e observações novas falam quase da mesma coisa e podem se contradizer. Julgue cada par:
- merge: combine as duas em uma só frase (text é a redação combinada);
- keep_new: a observação nova substitui a entrada antiga (text é a redação da nova entrada);
- keep_old: a entrada antiga está certa; descarte a observação nova;
- keep_both: as duas valem; mantenha cada uma (text é a redação da nova entrada).
Escreva text no idioma em que as entradas foram escritas; não as traduza.
Responda apenas com um array JSON: [{{"index": 0, "action": "merge|keep_new|keep_old|keep_both", "text": "..."}}]

{lines}""",
    "correction_line": "[{index}] existente(trust={old_trust}): {old_text} | nova observação(trust={new_trust}): {new_text}",
    "import_fuse": "Abaixo estão lembranças sobre “{entity}” que o usuário trouxe de outro programa. Funda-as em poucas afirmações curtas e sem repetição, mantendo cada detalhe concreto e sem inventar nada. Fique abaixo de {cap} tokens no total. Responda apenas com um array JSON de strings.\n\n{items}",
    "refine": """Abaixo estão entradas da persona de longo prazo de {name} (secção «{section}») que dizem quase a mesma coisa. Organize-as para que cada coisa seja dita uma só vez, com clareza:
- merge: várias entradas dizem o mesmo → uma entrada com o texto combinado;
- split: uma entrada mistura coisas sem relação → várias entradas;
- modify: uma entrada é confusa ou desajeitada → uma redação melhor com o mesmo sentido;
- discard: uma entrada está totalmente coberta pelas outras ou não diz nada.
Mantenha cada detalhe concreto e não acrescente nada que as entradas não digam; escreva no idioma das próprias entradas. Deixe de fora as entradas que estão bem; responda [] se todas estiverem bem.
Entradas:
{lines}
Responda apenas com um array JSON, por exemplo: [{{"action": "merge", "ids": [0, 1], "text": "..."}}, {{"action": "split", "id": 2, "texts": ["...", "..."]}}, {{"action": "modify", "id": 3, "text": "..."}}, {{"action": "discard", "id": 4}}]""",
    "refine_line": "[{index}] {text} (evidence={score})",
}
