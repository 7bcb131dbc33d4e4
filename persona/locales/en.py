# ruff: noqa: E501  prose the companion and the model read: wrapping it would scatter the sentences
"""English."""

TEXT = {
    "master": "### About {master}",
    "neko": "### About {ai}",
    "relationship": "### Relationship dynamics",
    "scoped": "### About {subject}",
    "other": "### {section}",
    "pending": "### {ai}'s recent impressions (not yet sure)",
    "confirmed": "### What {ai} is fairly sure of",
    "past_open": "======Older memories below======",
    "past_note": "(These are from a while ago, for background only; do not bring them up unless {master} does.)",
    "past_close": "======Older memories above======",
    "suppressed": "### Not to bring up for now ({ai} remembers these, but they came up too often lately; do not raise them again)",
    "now": "just now",
    "days": {"one": "{n} day ago", "few": "{n} days ago", "many": "{n} days ago", "other": "{n} days ago"},
    "weeks": {
        "one": "{n} week ago",
        "few": "{n} weeks ago",
        "many": "{n} weeks ago",
        "other": "{n} weeks ago",
    },
    "months": {
        "one": "{n} month ago",
        "few": "{n} months ago",
        "many": "{n} months ago",
        "other": "{n} months ago",
    },
    "legacy": "{name} remembers: {line}",
}

PROMPTS = {
    "merge": """{name} holds a new, well-established impression of {master} that is about to enter the long-term persona. Below are the persona's existing entries of the same kind and related impressions.
Decide what to do with the new impression:
- promote_fresh: it is new information; add it as a new entry;
- merge_into: it says the same as one existing persona entry; merge the two into one sentence (target_id is that entry's id in brackets, merged_text the merged wording);
- reject: it is unreliable, contradicts what is known, or has no lasting value.
Write merged_text in the language the impression and the entry were written in; do not translate them.
Answer with one JSON object only: {{"action": "promote_fresh|merge_into|reject", "target_id": "persona.<entity>.<id> or null", "merged_text": "... or null", "reason": "a short reason"}}

New impression ({entity}): {text}

Existing entries:
{pool}""",
    "none": "(none)",
    "corrections": """In {name}'s long-term persona, some existing entries and new observations talk about nearly the same thing and may contradict each other. Judge each pair:
- merge: combine both into one sentence (text is the merged wording);
- keep_new: the new observation replaces the old entry (text is the new entry's wording);
- keep_old: the old entry is right; drop the new observation;
- keep_both: both hold; keep each (text is the new entry's wording).
Write text in the language the entries were written in; do not translate them.
Answer with one JSON array only: [{{"index": 0, "action": "merge|keep_new|keep_old|keep_both", "text": "..."}}]

{lines}""",
    "correction_line": "[{index}] existing(trust={old_trust}): {old_text} | new observation(trust={new_trust}): {new_text}",
    "import_fuse": 'Below are memory entries about "{entity}" that the user brought from another program. Fuse them into a few concise, non-overlapping statements, keeping every concrete detail and inventing nothing. Stay under {cap} tokens in total. Answer with a JSON array of strings only.\n\n{items}',
    "refine": """Below are entries of {name}'s long-term persona (section "{section}") that say nearly the same thing. Tidy them up so that each thing is said once, clearly:
- merge: several entries say the same thing → one entry with the combined text;
- split: one entry mixes unrelated things → several entries;
- modify: one entry is unclear or clumsy → a better wording with the same meaning;
- discard: one entry is wholly covered by the others, or says nothing.
Keep every concrete detail and add nothing the entries do not say; write in the entries' own language. Leave out entries that are fine; answer [] when all are fine.
Entries:
{lines}
Answer with one JSON array only, for example: [{{"action": "merge", "ids": [0, 1], "text": "..."}}, {{"action": "split", "id": 2, "texts": ["...", "..."]}}, {{"action": "modify", "id": 3, "text": "..."}}, {{"action": "discard", "id": 4}}]""",
    "refine_line": "[{index}] {text} (evidence={score})",
}
