# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""English."""

PROMPTS = {
    "synthesis": """You help {name} form a long-term impression of {master}. Below are facts noted recently (and some older, already digested related facts, for background only).
Condense them into one higher-level impression: what does {name} see in these facts?
Rules:
- One to three sentences, under 150 words; name people ("{master}" for the master); do not add anything the facts do not say.
- Write the impression in the language of the facts themselves; do not translate.
- entity is one of master, neko, relationship.
- relation_type must fit the entity: master → preference|trait|habit|identity|emotional|boundary; neko → self_awareness|learned|role_note; relationship → dynamic|milestone|tension|shared_memory|agreement.
- temporal_scope is pattern (a lasting pattern), state (a state for a while), episode (one event) or past (over now).
- subject names the topic in a few words; event_when uses the facts' relative time shape, or null.
Answer with one JSON object only: {{"reflection": "...", "entity": "...", "relation_type": "...", "temporal_scope": "...", "subject": "...", "event_when": null}}

New facts:
{facts}

Related older facts:
{related}""",
    "feedback": """{name} recently brought up these impressions with {master}:
{items}
From {master}'s replies in the dialogue below, judge each one: confirmed (agrees, adds to it, or takes it as right), denied (rejects or corrects it), ignored (does not respond to it).
Answer with one JSON array only: [{{"reflection_id": "...", "feedback": "confirmed|denied|ignored"}}]""",
    "signals": """Below are {name}'s current impressions of {master} (observations) and facts newly extracted from recent dialogue.
For each new fact, say whether it supports (reinforces) or contradicts (negates) one of the impressions; leave out unrelated ones.
Impressions:
{observations}
New facts:
{facts}
Answer with one JSON object only: {{"signals": [{{"source_fact_id": "...", "target_id": "...", "target_type": "reflection|persona", "signal": "reinforces|negates", "reason": "..."}}]}}""",
    "keyword": """{master} just said something that sounds like a denial or a correction. Below are {master}'s latest messages and {name}'s current impressions.
Which impressions do {master}'s words deny? Answer an empty list when none.
{master}'s messages:
{messages}
Impressions:
{observations}
Answer with one JSON object only: {{"targets": [{{"target_id": "...", "reason": "..."}}]}}""",
    "rebuttal": """Below are the impressions {name} is fairly sure of about {master}, and {master}'s latest messages.
Does any message clearly overturn an impression? Answer denied only when it clearly does.
Impressions:
{observations}
{master}'s messages:
{messages}
Answer with one JSON object only: {{"verdicts": [{{"reflection_id": "...", "verdict": "denied|kept"}}]}}""",
    "rerank": """Below are {name}'s memories of {master}, numbered, and what is new about {master}. Which memories matter most for what is new? Each memory's evidence score is extra information only.
New:
{queries}
Memories:
{memories}
Answer with one JSON object only: {{"ranked": [the numbers of the most relevant memories, most relevant first, at most {budget}]}}""",
    "fact_line": "- {text} (importance: {importance})",
    "refine": """Below are {name}'s impressions of {master} that say nearly the same thing. Tidy them up so that each thing is said once, clearly:
- merge: several impressions say the same thing → one impression with the combined text;
- split: one impression mixes unrelated things → several impressions;
- modify: one impression is unclear or clumsy → a better wording with the same meaning;
- discard: one impression is wholly covered by the others, or says nothing.
Keep every concrete detail and add nothing they do not say; write in their own language. Leave out impressions that are fine; answer [] when all are fine.
Impressions:
{lines}
Answer with one JSON array only, for example: [{{"action": "merge", "ids": [0, 1], "text": "..."}}, {{"action": "split", "id": 2, "texts": ["...", "..."]}}, {{"action": "modify", "id": 3, "text": "..."}}, {{"action": "discard", "id": 4}}]""",
    "recheck_reflection": """{name} noted this impression of {master} on {date}:
{text}
Classify it again:
- temporal_scope: pattern (a lasting pattern), state (a state for a while), episode (one event) or past (over by now);
- event_when: when what it describes happened, relative to {date}: {{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": null}} with a negative offset for before that day, an "end" of the same shape when it gives one; null when it gives no time.
Answer with one JSON object only: {{"temporal_scope": "pattern|state|episode|past", "event_when": null}}""",
    "recheck_fact": """{name} noted this fact on {date}:
{text}
When did what it describes happen, relative to {date}? event_when is {{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": null}} with a negative offset for before that day, an "end" of the same shape when it gives one; null when it gives no time.
Answer with one JSON object only: {{"event_when": null}}""",
    "refine_line": "[{index}] {text} (evidence={score})",
}
