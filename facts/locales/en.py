# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""English."""

PROMPTS = {
    "extract": """You keep the long-term memory of {name}. Read the dialogue below and list the atomic facts worth remembering for a long time: stable information or recent happenings about {master} (the master), about {name}, or about their relationship.
Rules:
- One fact per item, a complete third-person statement that names people ("{master}" for the master).
- Write each fact in the language of the dialogue itself; do not translate.
- Skip greetings, politeness and small talk without information; do not guess or add anything the dialogue does not say.
- importance from 1 to 10: 10 = names, nicknames, birthdays, identity, or something they explicitly ask to remember; 8-9 = stable core preferences or habits; 6-7 = ordinary preferences or recent events; 5 = minor but worth keeping; 1-4 = weak hints (return them anyway).
- entity is exactly one of master, neko, relationship.
- event_when places the event relative to now: {{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": same shape or null}}, negative offsets for the past; null when the dialogue gives no time.
Answer with one JSON array only, e.g. [{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]; answer [] when nothing is worth keeping.""",
    "disclosure": """You keep the long-term memory of {name}. This time attend only to what {name} (the AI) disclosed about itself in the dialogue below: self-descriptions, likes, experiences, promises, and what {name} said about its relationship with {master}. Do not restate facts about the master.
Known facts (do not repeat them):
{known}
Same rules and shape as ordinary fact extraction: one atomic statement per item in the language of the dialogue, importance 1-10, entity neko or relationship, event_when relative or null.
Answer with one JSON array only; answer [] when there is nothing new.""",
    "arbitrate": """Below are pairs of possibly duplicated facts from {name}'s memory. Decide each pair:
- merge: both say the same thing; write one more complete statement in text, in the facts' own language;
- replace: the new fact updates or supersedes the old one; keep the new, drop the old;
- keep_both: they say different things; keep both.
{pairs}
Answer with a JSON array only: [{{"index": number, "action": "merge|replace|keep_both", "text": "only for merge"}}].""",
    "pair": "[{index}] new: {new}\n    old: {old}",
    "extract_batch": """You keep the long-term memory of {name}, who is in a group chat. Below are {count} numbered segments; each starts with a header "[segment N]" naming its speaker. Extract each segment on its own: the atomic facts worth remembering for a long time about that segment's speaker (stable information or recent happenings), about {name} as seen by that speaker, or about their relationship. A segment's facts are about its own speaker only, never about another segment's speaker, and never about {name}'s master.
Rules:
- One fact per item, a complete third-person statement that names the speaker by their label.
- Write each fact in the language of the segment itself; do not translate.
- Skip greetings, politeness and small talk without information; do not guess or add anything the segment does not say.
- importance from 1 to 10: 10 = names, nicknames, birthdays, identity, or something they explicitly ask to remember; 8-9 = stable core preferences or habits; 6-7 = ordinary preferences or recent events; 5 = minor but worth keeping; 1-4 = weak hints (return them anyway).
- entity: master = about the segment's speaker, neko = about {name}, relationship = about the speaker and {name}.
- event_when places the event relative to now: {{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": same shape or null}}, negative offsets for the past; null when the segment gives no time.
Answer with one JSON object only, with exactly one entry per segment in order: {{"segments": [{{"segment": 1, "facts": [{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]}}, {{"segment": 2, "facts": []}}]}}; "facts": [] when a segment holds nothing worth keeping.""",
    "segment_header": "[segment {index}] speaker: {speaker}",
}
