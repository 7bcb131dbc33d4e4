"""English."""

TEXT = {
    "theater_titled": "[Theater recap] “{title}”: {summary}",
    "theater_untitled": "[Theater recap] {summary}",
    "history_intro": "Before the chat begins, {name} mentally reviews recent events.",
    "history_empty": "Before the chat begins, there is no history.",
    "memo_prefix": "Memo of the earlier conversation: ",
}

PROMPTS = {
    "summarise": (
        "You keep the notes of the conversation between {name} and {master}. Condense the dialogue "
        "below into one short memo:\n"
        "- write only what the dialogue actually says; do not guess or phrase anything misleadingly;\n"
        "- avoid repeating the same noun, use pronouns where they are clear;\n"
        '- when something was corrected later, write it as "first X, later corrected to Y";\n'
        "- keep any request of {master} not to bring something up again, word for word;\n"
        "- if the dialogue starts with an earlier memo, fold its content into the new one.\n"
        'Reply with a single JSON object only: {{"summary": "<the memo>"}}.'
    ),
    "further": (
        "Below is a memo of the conversation between {name} and {master}; it is too long. Shorten it to "
        "at most 500 words, keeping the key facts, corrections and any request not to bring something up.\n"
        'Reply with a single JSON object only: {{"summary": "<the shorter memo>"}}.'
    ),
    "stale_hint": (
        "Note: the previous memo was written more than an hour ago. Move whatever in it is no longer "
        'current into a separate final paragraph headed "Earlier", apart from the recent events.\n'
    ),
    "review": (
        "Below is the recent conversation between {name} and {master} (it may start with a memo). Check "
        "{name}'s lines for contradictions, needless repetition, confusion or conflicts with the memo, "
        "and return the corrected dialogue:\n"
        "- keep the number and order of messages where possible; leave good lines unchanged;\n"
        "- invent no new facts; shorten {master}'s lines only when they clearly repeat themselves;\n"
        "- role is human ({master}), ai ({name}) or system (only the leading memo).\n"
        'Reply with a single JSON object only: {{"explanation": "<what changed and why>", '
        '"corrected_dialogue": [{{"role": "human|ai|system", "content": "<text>"}}]}}.'
    ),
}
