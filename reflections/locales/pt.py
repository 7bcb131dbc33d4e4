# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Portuguese."""

PROMPTS = {
    "synthesis": """Você ajuda {name} a formar uma impressão duradoura de {master}. Abaixo estão fatos anotados recentemente (e alguns fatos relacionados mais antigos, já assimilados, só como contexto).
Condense-os em uma impressão de nível mais alto: o que {name} enxerga nesses fatos?
Regras:
- De uma a três frases, menos de 150 palavras; nomeie as pessoas («{master}» para o mestre); não acrescente nada que os fatos não digam.
- Escreva a impressão no idioma dos próprios fatos; não traduza.
- entity é um de master, neko, relationship.
- relation_type deve combinar com entity: master → preference|trait|habit|identity|emotional|boundary; neko → self_awareness|learned|role_note; relationship → dynamic|milestone|tension|shared_memory|agreement.
- temporal_scope é pattern (um padrão duradouro), state (um estado por um tempo), episode (um acontecimento) ou past (já passou).
- subject nomeia o tema em poucas palavras; event_when usa a forma de tempo relativo dos fatos, ou null.
Responda apenas com um objeto JSON: {{"reflection": "...", "entity": "...", "relation_type": "...", "temporal_scope": "...", "subject": "...", "event_when": null}}

Fatos novos:
{facts}

Fatos antigos relacionados:
{related}""",
    "feedback": """{name} comentou recentemente estas impressões com {master}:
{items}
Pelas respostas de {master} no diálogo abaixo, julgue cada uma: confirmed (concorda, acrescenta algo ou aceita como certa), denied (rejeita ou corrige), ignored (não responde a ela).
Responda apenas com um array JSON: [{{"reflection_id": "...", "feedback": "confirmed|denied|ignored"}}]""",
    "signals": """Abaixo estão as impressões atuais de {name} sobre {master} (observations) e fatos recém-extraídos do diálogo recente.
Para cada fato novo, diga se ele reforça (reinforces) ou contradiz (negates) alguma das impressões; deixe de fora os que não têm relação.
Impressões:
{observations}
Fatos novos:
{facts}
Responda apenas com um objeto JSON: {{"signals": [{{"source_fact_id": "...", "target_id": "...", "target_type": "reflection|persona", "signal": "reinforces|negates", "reason": "..."}}]}}""",
    "keyword": """{master} acabou de dizer algo que soa como uma negação ou uma correção. Abaixo estão as últimas mensagens de {master} e as impressões atuais de {name}.
Quais impressões as palavras de {master} negam? Responda com uma lista vazia se nenhuma.
Mensagens de {master}:
{messages}
Impressões:
{observations}
Responda apenas com um objeto JSON: {{"targets": [{{"target_id": "...", "reason": "..."}}]}}""",
    "rebuttal": """Abaixo estão as impressões sobre {master} das quais {name} tem quase certeza, e as últimas mensagens de {master}.
Alguma mensagem derruba claramente uma impressão? Responda denied só quando derrubar com clareza.
Impressões:
{observations}
Mensagens de {master}:
{messages}
Responda apenas com um objeto JSON: {{"verdicts": [{{"reflection_id": "...", "verdict": "denied|kept"}}]}}""",
    "rerank": """Abaixo estão as memórias numeradas de {name} sobre {master} e o que há de novo sobre {master}. Quais memórias importam mais para o que é novo? A pontuação de evidência de cada memória é só informação extra.
Novo:
{queries}
Memórias:
{memories}
Responda só com um objeto JSON: {{"ranked": [os números das memórias mais relevantes, a mais relevante primeiro, no máximo {budget}]}}""",
    "fact_line": "- {text} (importância: {importance})",
    "refine": """Abaixo estão impressões de {name} sobre {master} que dizem quase a mesma coisa. Organize-as para que cada coisa seja dita uma só vez, com clareza:
- merge: várias impressões dizem o mesmo → uma impressão com o texto combinado;
- split: uma impressão mistura coisas sem relação → várias impressões;
- modify: uma impressão é confusa ou desajeitada → uma redação melhor com o mesmo sentido;
- discard: uma impressão está totalmente coberta pelas outras ou não diz nada.
Mantenha cada detalhe concreto e não acrescente nada que não digam; escreva no idioma delas. Deixe de fora as impressões que estão bem; responda [] se todas estiverem bem.
Impressões:
{lines}
Responda apenas com um array JSON, por exemplo: [{{"action": "merge", "ids": [0, 1], "text": "..."}}, {{"action": "split", "id": 2, "texts": ["...", "..."]}}, {{"action": "modify", "id": 3, "text": "..."}}, {{"action": "discard", "id": 4}}]""",
    "recheck_reflection": """{name} anotou esta impressão sobre {master} em {date}:
{text}
Classifique-a de novo:
- temporal_scope: pattern (um padrão duradouro), state (um estado por um tempo), episode (um acontecimento) ou past (já passado);
- event_when: quando aconteceu o que descreve, em relação a {date}: {{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": null}}, offset negativo para antes desse dia, um "end" com a mesma forma se o indicar; null se não der tempo.
Responda apenas com um objeto JSON: {{"temporal_scope": "pattern|state|episode|past", "event_when": null}}""",
    "recheck_fact": """{name} anotou este facto em {date}:
{text}
Quando aconteceu o que descreve, em relação a {date}? event_when é {{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": null}}, offset negativo para antes desse dia, um "end" com a mesma forma se o indicar; null se não der tempo.
Responda apenas com um objeto JSON: {{"event_when": null}}""",
    "refine_line": "[{index}] {text} (evidence={score})",
}
