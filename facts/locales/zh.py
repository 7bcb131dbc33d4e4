# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Simplified Chinese."""

PROMPTS = {
    "extract": """你负责为{name}整理长期记忆。请阅读下面的对话，找出值得长期记住的原子事实：关于{master}（主人）、关于{name}自己、或关于两人关系的稳定信息或近期发生的事。
规则：
- 每条事实只说一件事，用第三人称完整陈述，直接写出人名（主人写作“{master}”）。
- 用对话本身的语言书写事实，不要翻译。
- 忽略寒暄、客套和没有信息量的闲聊；不要推测，不要编造对话里没有的内容。
- importance 取 1–10：10 = 名字、昵称、生日、身份，或对方明确要求记住的事；8–9 = 稳定的核心偏好或习惯；6–7 = 一般偏好或最近发生的事；5 = 次要但值得记录；1–4 = 微弱线索（也照样返回）。
- entity 只能是 master、neko 或 relationship。
- event_when 描述事件相对于现在的时间：{{"start": {{"offset": 整数, "unit": "minute|hour|day|week|month|year"}}, "end": 同样格式或 null}}，过去用负数；没有时间信息就写 null。
只输出一个 JSON 数组，例如 [{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]；没有值得记住的内容就输出 []。""",
    "disclosure": """你负责为{name}整理长期记忆。这次只关注{name}（AI）在下面对话中关于自己说出的信息：自我介绍、喜好、经历、承诺，以及{name}对与{master}关系的表态。只在主人参与的对话里提取；不要重复主人的信息。
已知事实（不要重复）：
{known}
规则与格式同普通事实提取：每条一个原子陈述，用对话本身的语言书写，importance 1–10，entity 为 neko 或 relationship，event_when 为相对时间或 null。
只输出一个 JSON 数组；没有新内容就输出 []。""",
    "arbitrate": """下面是{name}记忆中可能重复的事实对。逐对判断：
- merge：两条说的是同一件事，合并成一条更完整的陈述（写在 text 里，用原事实的语言）；
- replace：新事实更新或取代了旧事实，保留新事实、删除旧事实；
- keep_both：两条说的是不同的事，都保留。
{pairs}
只输出 JSON 数组：[{{"index": 序号, "action": "merge|replace|keep_both", "text": "仅 merge 时填写"}}]。""",
    "pair": "[{index}] 新：{new}\n    旧：{old}",
    "extract_batch": """你负责为{name}整理长期记忆，{name}正在一个群聊里。下面有 {count} 段编号的对话，每段以“[第N段]”开头并写明说话人。请逐段单独提取：关于该段说话人的值得长期记住的原子事实（稳定信息或近期发生的事）、该说话人眼中的{name}、或两人的关系。每段的事实只关于该段自己的说话人，不要写到别的段的说话人身上，也绝不要写成{name}的主人的事。
规则：
- 每条事实只说一件事，用第三人称完整陈述，用说话人的称呼写出是谁。
- 用该段对话本身的语言书写事实，不要翻译。
- 忽略寒暄、客套和没有信息量的闲聊；不要推测，不要编造该段里没有的内容。
- importance 取 1–10：10 = 名字、昵称、生日、身份，或对方明确要求记住的事；8–9 = 稳定的核心偏好或习惯；6–7 = 一般偏好或最近发生的事；5 = 次要但值得记录；1–4 = 微弱线索（也照样返回）。
- entity：master = 关于该段说话人，neko = 关于{name}，relationship = 关于说话人与{name}的关系。
- event_when 描述事件相对于现在的时间：{{"start": {{"offset": 整数, "unit": "minute|hour|day|week|month|year"}}, "end": 同样格式或 null}}，过去用负数；没有时间信息就写 null。
只输出一个 JSON 对象，按顺序每段恰好一项：{{"segments": [{{"segment": 1, "facts": [{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]}}, {{"segment": 2, "facts": []}}]}}；某段没有值得记住的内容就写 "facts": []。""",
    "segment_header": "[第{index}段] 说话人：{speaker}",
}
