# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Simplified Chinese."""

PROMPTS = {
    "synthesis": """你在帮{name}整理对{master}的长期印象。下面是最近记下的一些事实（以及一些更早、已经整理过的相关事实，仅作背景）。
请把它们归纳成一条更高层的印象：{name}从这些事实里看出了什么？
要求：
- 一句到三句话，少于 150 字；直接写人名（主人写作“{master}”）；不要编造事实中没有的内容。
- 用这些事实本身的语言书写印象，不要翻译。
- entity 只能是 master、neko、relationship。
- relation_type 必须与 entity 对应：master → preference|trait|habit|identity|emotional|boundary；neko → self_awareness|learned|role_note；relationship → dynamic|milestone|tension|shared_memory|agreement。
- temporal_scope 是 pattern（长期规律）、state（一段时间的状态）、episode（一次事件）或 past（已经过去）。
- subject 是这条印象的主题（几个字），event_when 同事实的相对时间格式或 null。
只输出一个 JSON 对象：{{"reflection": "...", "entity": "...", "relation_type": "...", "temporal_scope": "...", "subject": "...", "event_when": null}}

新事实：
{facts}

相关的旧事实：
{related}""",
    "feedback": """{name}最近主动向{master}提起过下面这些印象：
{items}
请根据{master}在下面对话中的回应判断每一条：confirmed（认同、补充或默认是对的）、denied（否认、纠正）、ignored（没有回应这一条）。
只输出一个 JSON 数组：[{{"reflection_id": "...", "feedback": "confirmed|denied|ignored"}}]""",
    "signals": """下面是{name}对{master}的现有印象（observations），以及从最近对话中新提取的事实。
请判断每条新事实是否支持（reinforces）或反驳（negates）某条现有印象；无关的不要输出。
现有印象：
{observations}
新事实：
{facts}
只输出一个 JSON 对象：{{"signals": [{{"source_fact_id": "...", "target_id": "...", "target_type": "reflection|persona", "signal": "reinforces|negates", "reason": "..."}}]}}""",
    "keyword": """{master}刚刚说了一些像是否定或纠正的话。下面是{master}最近的消息，以及{name}现有的印象。
哪些印象被{master}的话否定了？没有就输出空列表。
{master}的消息：
{messages}
现有印象：
{observations}
只输出一个 JSON 对象：{{"targets": [{{"target_id": "...", "reason": "..."}}]}}""",
    "rebuttal": """下面是{name}比较确定的关于{master}的印象，以及{master}最近的消息。
有没有哪条印象被这些消息明确推翻了？只有明确推翻时才判 denied。
印象：
{observations}
{master}的消息：
{messages}
只输出一个 JSON 对象：{{"verdicts": [{{"reflection_id": "...", "verdict": "denied|kept"}}]}}""",
    "rerank": """下面是{name}关于{master}的记忆（带编号），以及关于{master}的新内容。哪些记忆与新内容最相关？每条记忆的证据分只作参考。
新内容：
{queries}
记忆：
{memories}
只输出一个 JSON 对象：{{"ranked": [最相关记忆的编号，最相关的在前，最多 {budget} 个]}}""",
    "fact_line": "- {text}（重要程度：{importance}）",
    "refine": """下面是{name}对{master}的几条意思几乎相同的印象。请整理它们，让每件事只清楚地说一次：
- merge：几条说的是同一件事 → 合成一条；
- split：一条里混了互不相关的内容 → 拆成几条；
- modify：一条表述不清或别扭 → 改写得更好，意思不变；
- discard：一条完全被其他印象覆盖，或没有内容。
保留所有具体细节，不要添加原文没有的内容；沿用原文的语言。没问题的印象不要写进答案；全都没问题时回答 []。
印象：
{lines}
只回答一个 JSON 数组，例如：[{{"action": "merge", "ids": [0, 1], "text": "..."}}, {{"action": "split", "id": 2, "texts": ["...", "..."]}}, {{"action": "modify", "id": 3, "text": "..."}}, {{"action": "discard", "id": 4}}]""",
    "recheck_reflection": """{name}在 {date} 记下了对{master}的这条印象：
{text}
请重新分类：
- temporal_scope：pattern（长期模式）、state（一段时间的状态）、episode（一次事件）或 past（现在已经过去）；
- event_when：它描述的事发生在什么时候，相对 {date}：{{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": null}}，早于那天用负数 offset，有结束时间时 "end" 用同样的格式；没有时间信息时为 null。
只回答一个 JSON 对象：{{"temporal_scope": "pattern|state|episode|past", "event_when": null}}""",
    "recheck_fact": """{name}在 {date} 记下了这条事实：
{text}
它描述的事发生在什么时候，相对 {date}？event_when 为 {{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": null}}，早于那天用负数 offset，有结束时间时 "end" 用同样的格式；没有时间信息时为 null。
只回答一个 JSON 对象：{{"event_when": null}}""",
    "refine_line": "[{index}] {text} (evidence={score})",
}
