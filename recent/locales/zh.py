"""Simplified Chinese."""

TEXT = {
    "theater_titled": "【剧场回顾】《{title}》：{summary}",
    "theater_untitled": "【剧场回顾】{summary}",
    # /get_recent_history opens with the second half of the inner-thoughts sentence (reference §5.1).
    "history_intro": "开始聊天前，{name}又在脑海内整理了近期发生的事情。",
    "history_empty": "开始聊天前，没有历史记录。",
    "memo_prefix": "先前对话的备忘录: ",
}

PROMPTS = {
    "summarise": (
        "你负责为{name}整理和{master}之间的对话记录。请把下面的对话压缩成一段简洁的备忘录，要求：\n"
        "- 只写对话里真实出现的内容，不要推测，也不要写出会让人误解的句子；\n"
        "- 同一个名词不要反复出现，能用代词就用代词；\n"
        "- 如果某件事后来被更正了，写成「先是X，后来更正为Y」；\n"
        "- {master}明确要求不要再提的事情，要把这条要求原样保留下来；\n"
        "- 如果对话里已有旧的备忘录，把它的内容一并融入新的备忘录。\n"
        '只输出一个 JSON 对象：{{"summary": "<备忘录>"}}，不要输出别的内容。'
    ),
    "further": (
        "下面是{name}和{master}之间对话的备忘录，它太长了。请在不丢失关键信息（尤其是更正和「不要再提」"
        "的要求）的前提下，把它压缩到 500 字以内。\n"
        '只输出一个 JSON 对象：{{"summary": "<压缩后的备忘录>"}}。'
    ),
    "stale_hint": (
        "注意：上一次整理备忘录已经是一个多小时以前了。旧备忘录里已经过时的内容，请移到新备忘录末尾"
        "单独的一段「较早的事」里，不要和近期的内容混在一起。\n"
    ),
    "review": (
        "下面是{name}和{master}最近的对话记录（可能以一条备忘录开头）。请检查其中{name}的发言是否有前后"
        "矛盾、重复啰嗦、语义混乱或与备忘录冲突的地方，并给出修正后的对话。要求：\n"
        "- 条数和顺序尽量与原对话一致，没有问题的发言原样保留；\n"
        "- 不要编造新的事实，{master}的发言只在明显重复时才精简；\n"
        "- role 只能是 human（{master}）、ai（{name}）或 system（仅限开头的备忘录）。\n"
        '只输出一个 JSON 对象：{{"explanation": "<改了什么以及原因>", '
        '"corrected_dialogue": [{{"role": "human|ai|system", "content": "<文本>"}}]}}。'
    ),
}
