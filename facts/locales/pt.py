# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Portuguese."""

PROMPTS = {
    "extract": """Você cuida da memória de longo prazo de {name}. Leia o diálogo abaixo e liste os fatos atômicos que vale a pena lembrar por muito tempo: informações estáveis ou acontecimentos recentes sobre {master} (o mestre), sobre {name} ou sobre a relação dos dois.
Regras:
- Um fato por item, uma frase completa em terceira pessoa que nomeie as pessoas («{master}» para o mestre).
- Escreva cada fato no idioma do próprio diálogo; não traduza.
- Ignore cumprimentos, cortesias e conversa sem informação; não suponha nem acrescente nada que o diálogo não diga.
- importance de 1 a 10: 10 = nomes, apelidos, aniversários, identidade ou algo que pediram explicitamente para lembrar; 8-9 = preferências ou hábitos centrais e estáveis; 6-7 = preferências comuns ou acontecimentos recentes; 5 = menor, mas digno de guardar; 1-4 = indícios fracos (devolva-os mesmo assim).
- entity é exatamente um de master, neko, relationship.
- event_when situa o acontecimento em relação a agora: {{"start": {{"offset": inteiro, "unit": "minute|hour|day|week|month|year"}}, "end": a mesma forma ou null}}, deslocamentos negativos para o passado; null quando o diálogo não dá nenhum tempo.
Responda apenas com um array JSON, por exemplo [{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]; responda [] quando nada merecer ser guardado.""",
    "disclosure": """Você cuida da memória de longo prazo de {name}. Desta vez, atente apenas para o que {name} (a IA) revelou sobre si no diálogo abaixo: como se descreve, do que gosta, experiências, promessas e o que disse sobre a relação com {master}. Não repita fatos sobre o mestre.
Fatos conhecidos (não os repita):
{known}
Mesmas regras e formato da extração normal de fatos: uma afirmação atômica por item no idioma do diálogo, importance 1-10, entity neko ou relationship, event_when relativo ou null.
Responda apenas com um array JSON; responda [] quando não houver nada novo.""",
    "arbitrate": """Abaixo estão pares de fatos possivelmente duplicados da memória de {name}. Decida cada par:
- merge: os dois dizem a mesma coisa; escreva em text uma afirmação mais completa, no idioma dos próprios fatos;
- replace: o fato novo atualiza ou substitui o antigo; mantenha o novo e remova o antigo;
- keep_both: dizem coisas diferentes; mantenha os dois.
{pairs}
Responda apenas com um array JSON: [{{"index": número, "action": "merge|replace|keep_both", "text": "só para merge"}}].""",
    "pair": "[{index}] novo: {new}\n    antigo: {old}",
    "extract_batch": """Você cuida da memória de longo prazo de {name}, que está num chat de grupo. Abaixo há {count} segmentos numerados; cada um começa com um cabeçalho «[segmento N]» que nomeia quem fala. Extraia cada segmento separadamente: os fatos atômicos que vale a pena lembrar por muito tempo sobre quem fala naquele segmento (informações estáveis ou acontecimentos recentes), sobre {name} segundo essa pessoa, ou sobre a relação dos dois. Os fatos de um segmento tratam apenas de quem fala nele, nunca de quem fala em outro segmento e nunca do dono de {name}.
Regras:
- Um fato por item: uma afirmação completa em terceira pessoa que nomeie quem fala pelo seu rótulo.
- Escreva cada fato no idioma do próprio segmento; não traduza.
- Ignore cumprimentos, cortesias e conversa sem informação; não suponha nem acrescente nada que o segmento não diga.
- importance de 1 a 10: 10 = nomes, apelidos, aniversários, identidade ou algo que pedem explicitamente para lembrar; 8-9 = preferências ou hábitos centrais e estáveis; 6-7 = preferências comuns ou acontecimentos recentes; 5 = algo menor mas que vale guardar; 1-4 = indícios fracos (devolva-os mesmo assim).
- entity: master = sobre quem fala no segmento, neko = sobre {name}, relationship = sobre essa pessoa e {name}.
- event_when situa o acontecimento em relação a agora: {{"start": {{"offset": inteiro, "unit": "minute|hour|day|week|month|year"}}, "end": mesma forma ou null}}, deslocamentos negativos para o passado; null quando o segmento não dá tempo.
Responda apenas com um objeto JSON, com exatamente uma entrada por segmento e em ordem: {{"segments": [{{"segment": 1, "facts": [{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]}}, {{"segment": 2, "facts": []}}]}}; "facts": [] quando um segmento não tiver nada que valha guardar.""",
    "segment_header": "[segmento {index}] fala: {speaker}",
}
