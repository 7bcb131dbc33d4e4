# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Prompts of the facts layer, in our own words (zh and en).

The dialogue sits between the original's delimiters, kept in Simplified Chinese in every language
because downstream tooling matches them as a watermark (reference §7).
"""

from __future__ import annotations

from nekomem.locale import language_of  # noqa: F401  re-exported: the layer's prompts choose by it

DIALOGUE_OPEN = "======以下为对话======"
DIALOGUE_CLOSE = "======以上为对话======"

_EXTRACT = {
    "zh": """你负责为{name}整理长期记忆。请阅读下面的对话，找出值得长期记住的原子事实：关于{master}（主人）、关于{name}自己、或关于两人关系的稳定信息或近期发生的事。
规则：
- 每条事实只说一件事，用第三人称完整陈述，直接写出人名（主人写作“{master}”）。
- 忽略寒暄、客套和没有信息量的闲聊；不要推测，不要编造对话里没有的内容。
- importance 取 1–10：10 = 名字、昵称、生日、身份，或对方明确要求记住的事；8–9 = 稳定的核心偏好或习惯；6–7 = 一般偏好或最近发生的事；5 = 次要但值得记录；1–4 = 微弱线索（也照样返回）。
- entity 只能是 master、neko 或 relationship。
- event_when 描述事件相对于现在的时间：{{"start": {{"offset": 整数, "unit": "minute|hour|day|week|month|year"}}, "end": 同样格式或 null}}，过去用负数；没有时间信息就写 null。
只输出一个 JSON 数组，例如 [{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]；没有值得记住的内容就输出 []。""",
    "en": """You keep the long-term memory of {name}. Read the dialogue below and list the atomic facts worth remembering for a long time: stable information or recent happenings about {master} (the master), about {name}, or about their relationship.
Rules:
- One fact per item, a complete third-person statement that names people ("{master}" for the master).
- Skip greetings, politeness and small talk without information; do not guess or add anything the dialogue does not say.
- importance from 1 to 10: 10 = names, nicknames, birthdays, identity, or something they explicitly ask to remember; 8-9 = stable core preferences or habits; 6-7 = ordinary preferences or recent events; 5 = minor but worth keeping; 1-4 = weak hints (return them anyway).
- entity is exactly one of master, neko, relationship.
- event_when places the event relative to now: {{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": same shape or null}}, negative offsets for the past; null when the dialogue gives no time.
Answer with one JSON array only, e.g. [{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]; answer [] when nothing is worth keeping.""",
}

_DISCLOSURE = {
    "zh": """你负责为{name}整理长期记忆。这次只关注{name}（AI）在下面对话中关于自己说出的信息：自我介绍、喜好、经历、承诺，以及{name}对与{master}关系的表态。只在主人参与的对话里提取；不要重复主人的信息。
已知事实（不要重复）：
{known}
规则与格式同普通事实提取：每条一个原子陈述，importance 1–10，entity 为 neko 或 relationship，event_when 为相对时间或 null。
只输出一个 JSON 数组；没有新内容就输出 []。""",
    "en": """You keep the long-term memory of {name}. This time attend only to what {name} (the AI) disclosed about itself in the dialogue below: self-descriptions, likes, experiences, promises, and what {name} said about its relationship with {master}. Do not restate facts about the master.
Known facts (do not repeat them):
{known}
Same rules and shape as ordinary fact extraction: one atomic statement per item, importance 1-10, entity neko or relationship, event_when relative or null.
Answer with one JSON array only; answer [] when there is nothing new.""",
}

_ARBITRATE = {
    "zh": """下面是{name}记忆中可能重复的事实对。逐对判断：
- merge：两条说的是同一件事，合并成一条更完整的陈述（写在 text 里）；
- replace：新事实更新或取代了旧事实，保留新事实、删除旧事实；
- keep_both：两条说的是不同的事，都保留。
{pairs}
只输出 JSON 数组：[{{"index": 序号, "action": "merge|replace|keep_both", "text": "仅 merge 时填写"}}]。""",
    "en": """Below are pairs of possibly duplicated facts from {name}'s memory. Decide each pair:
- merge: both say the same thing; write one more complete statement in text;
- replace: the new fact updates or supersedes the old one; keep the new, drop the old;
- keep_both: they say different things; keep both.
{pairs}
Answer with a JSON array only: [{{"index": number, "action": "merge|replace|keep_both", "text": "only for merge"}}].""",
}


def _lang(language: str | None) -> str:
    return "zh" if not language or language.lower().startswith("zh") else "en"


def render_dialogue(lines: list[tuple[str, str]]) -> str:
    body = "\n".join(f"{role} | {content}" for role, content in lines)
    return f"{DIALOGUE_OPEN}\n{body}\n{DIALOGUE_CLOSE}"


def extraction_messages(
    *, name: str, master: str, lines: list[tuple[str, str]], language: str | None
) -> list[dict[str, str]]:
    system = _EXTRACT[_lang(language)].format(name=name, master=master)
    return [{"role": "system", "content": system}, {"role": "user", "content": render_dialogue(lines)}]


def disclosure_messages(
    *, name: str, master: str, lines: list[tuple[str, str]], known: list[str], language: str | None
) -> list[dict[str, str]]:
    known_text = "\n".join(f"- {k}" for k in known) or "-"
    system = _DISCLOSURE[_lang(language)].format(name=name, master=master, known=known_text)
    return [{"role": "system", "content": system}, {"role": "user", "content": render_dialogue(lines)}]


def arbitration_messages(
    *, name: str, pairs: list[tuple[int, str, str]], language: str | None
) -> list[dict[str, str]]:
    if _lang(language) == "zh":
        rendered = "\n".join(f"[{i}] 新：{new}\n    旧：{old}" for i, new, old in pairs)
    else:
        rendered = "\n".join(f"[{i}] new: {new}\n    old: {old}" for i, new, old in pairs)
    return [{"role": "user", "content": _ARBITRATE[_lang(language)].format(name=name, pairs=rendered)}]
