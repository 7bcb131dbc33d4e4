# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Prompts of the reflections layer, in our own words (zh and en)."""

from __future__ import annotations

from facts.services import render_dialogue

_SYNTHESIS = {
    "zh": """你在帮{name}整理对{master}的长期印象。下面是最近记下的一些事实（以及一些更早、已经整理过的相关事实，仅作背景）。
请把它们归纳成一条更高层的印象：{name}从这些事实里看出了什么？
要求：
- 一句到三句话，少于 150 字；直接写人名（主人写作“{master}”）；不要编造事实中没有的内容。
- entity 只能是 master、neko、relationship。
- relation_type 必须与 entity 对应：master → preference|trait|habit|identity|emotional|boundary；neko → self_awareness|learned|role_note；relationship → dynamic|milestone|tension|shared_memory|agreement。
- temporal_scope 是 pattern（长期规律）、state（一段时间的状态）、episode（一次事件）或 past（已经过去）。
- subject 是这条印象的主题（几个字），event_when 同事实的相对时间格式或 null。
只输出一个 JSON 对象：{{"reflection": "...", "entity": "...", "relation_type": "...", "temporal_scope": "...", "subject": "...", "event_when": null}}

新事实：
{facts}

相关的旧事实：
{related}""",
    "en": """You help {name} form a long-term impression of {master}. Below are facts noted recently (and some older, already digested related facts, for background only).
Condense them into one higher-level impression: what does {name} see in these facts?
Rules:
- One to three sentences, under 150 words; name people ("{master}" for the master); do not add anything the facts do not say.
- entity is one of master, neko, relationship.
- relation_type must fit the entity: master → preference|trait|habit|identity|emotional|boundary; neko → self_awareness|learned|role_note; relationship → dynamic|milestone|tension|shared_memory|agreement.
- temporal_scope is pattern (a lasting pattern), state (a state for a while), episode (one event) or past (over now).
- subject names the topic in a few words; event_when uses the facts' relative time shape, or null.
Answer with one JSON object only: {{"reflection": "...", "entity": "...", "relation_type": "...", "temporal_scope": "...", "subject": "...", "event_when": null}}

New facts:
{facts}

Related older facts:
{related}""",
}

_FEEDBACK = {
    "zh": """{name}最近主动向{master}提起过下面这些印象：
{items}
请根据{master}在下面对话中的回应判断每一条：confirmed（认同、补充或默认是对的）、denied（否认、纠正）、ignored（没有回应这一条）。
只输出一个 JSON 数组：[{{"reflection_id": "...", "feedback": "confirmed|denied|ignored"}}]""",
    "en": """{name} recently brought up these impressions with {master}:
{items}
From {master}'s replies in the dialogue below, judge each one: confirmed (agrees, adds to it, or takes it as right), denied (rejects or corrects it), ignored (does not respond to it).
Answer with one JSON array only: [{{"reflection_id": "...", "feedback": "confirmed|denied|ignored"}}]""",
}

_SIGNALS = {
    "zh": """下面是{name}对{master}的现有印象（observations），以及从最近对话中新提取的事实。
请判断每条新事实是否支持（reinforces）或反驳（negates）某条现有印象；无关的不要输出。
现有印象：
{observations}
新事实：
{facts}
只输出一个 JSON 对象：{{"signals": [{{"source_fact_id": "...", "target_id": "...", "target_type": "reflection|persona", "signal": "reinforces|negates", "reason": "..."}}]}}""",
    "en": """Below are {name}'s current impressions of {master} (observations) and facts newly extracted from recent dialogue.
For each new fact, say whether it supports (reinforces) or contradicts (negates) one of the impressions; leave out unrelated ones.
Impressions:
{observations}
New facts:
{facts}
Answer with one JSON object only: {{"signals": [{{"source_fact_id": "...", "target_id": "...", "target_type": "reflection|persona", "signal": "reinforces|negates", "reason": "..."}}]}}""",
}

_KEYWORD = {
    "zh": """{master}刚刚说了一些像是否定或纠正的话。下面是{master}最近的消息，以及{name}现有的印象。
哪些印象被{master}的话否定了？没有就输出空列表。
{master}的消息：
{messages}
现有印象：
{observations}
只输出一个 JSON 对象：{{"targets": [{{"target_id": "...", "reason": "..."}}]}}""",
    "en": """{master} just said something that sounds like a denial or a correction. Below are {master}'s latest messages and {name}'s current impressions.
Which impressions do {master}'s words deny? Answer an empty list when none.
{master}'s messages:
{messages}
Impressions:
{observations}
Answer with one JSON object only: {{"targets": [{{"target_id": "...", "reason": "..."}}]}}""",
}

_REBUTTAL = {
    "zh": """下面是{name}比较确定的关于{master}的印象，以及{master}最近的消息。
有没有哪条印象被这些消息明确推翻了？只有明确推翻时才判 denied。
印象：
{observations}
{master}的消息：
{messages}
只输出一个 JSON 对象：{{"verdicts": [{{"reflection_id": "...", "verdict": "denied|kept"}}]}}""",
    "en": """Below are the impressions {name} is fairly sure of about {master}, and {master}'s latest messages.
Does any message clearly overturn an impression? Answer denied only when it clearly does.
Impressions:
{observations}
{master}'s messages:
{messages}
Answer with one JSON object only: {{"verdicts": [{{"reflection_id": "...", "verdict": "denied|kept"}}]}}""",
}

# Words that suggest the master is correcting or denying something (§3.4's keyword hook).
NEGATIVE_KEYWORDS: dict[str, tuple[str, ...]] = {
    "zh": ("不是", "不对", "没有", "错了", "才不", "并不", "不再", "别再", "不喜欢", "搞错", "误会", "瞎说"),
    "en": (
        "not true",
        "wrong",
        "no longer",
        "don't",
        "do not",
        "never",
        "isn't",
        "not really",
        "stop saying",
        "that's not",
        "i'm not",
        "doesn't",
    ),
}


def _lang(language: str | None) -> str:
    return "zh" if not language or language.lower().startswith("zh") else "en"


def _user(content: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": content}]


def synthesis_messages(
    *, name: str, master: str, facts: list[tuple[str, int]], related: list[str], language: str | None
) -> list[dict[str, str]]:
    fact_lines = "\n".join(f"- {text} (importance: {importance})" for text, importance in facts)
    related_lines = "\n".join(f"- {text}" for text in related) or "-"
    return _user(
        _SYNTHESIS[_lang(language)].format(name=name, master=master, facts=fact_lines, related=related_lines)
    )


def feedback_messages(
    *,
    name: str,
    master: str,
    items: list[tuple[str, str]],
    lines: list[tuple[str, str]],
    language: str | None,
) -> list[dict[str, str]]:
    rendered = "\n".join(f"- [{rid}] {text}" for rid, text in items)
    system = _FEEDBACK[_lang(language)].format(name=name, master=master, items=rendered)
    return [{"role": "system", "content": system}, {"role": "user", "content": render_dialogue(lines)}]


def signal_messages(
    *, name: str, master: str, observations: list[str], facts: list[str], language: str | None
) -> list[dict[str, str]]:
    return _user(
        _SIGNALS[_lang(language)].format(
            name=name, master=master, observations="\n".join(observations) or "-", facts="\n".join(facts)
        )
    )


def keyword_messages(
    *, name: str, master: str, messages: list[str], observations: list[str], language: str | None
) -> list[dict[str, str]]:
    return _user(
        _KEYWORD[_lang(language)].format(
            name=name,
            master=master,
            messages="\n".join(f"- {m}" for m in messages),
            observations="\n".join(observations) or "-",
        )
    )


def rebuttal_messages(
    *, name: str, master: str, observations: list[str], messages: list[str], language: str | None
) -> list[dict[str, str]]:
    return _user(
        _REBUTTAL[_lang(language)].format(
            name=name,
            master=master,
            observations="\n".join(observations),
            messages="\n".join(f"- {m}" for m in messages),
        )
    )


def has_negative_keyword(texts: list[str]) -> bool:
    lowered = " ".join(texts).lower()
    return any(word in lowered for words in NEGATIVE_KEYWORDS.values() for word in words)
