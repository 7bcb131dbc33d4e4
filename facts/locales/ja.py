# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Japanese."""

PROMPTS = {
    "extract": """あなたは{name}の長期記憶を整理する係です。以下の会話を読み、長く覚えておく価値のある原子的な事実を挙げてください：{master}（ご主人）について、{name}自身について、または二人の関係についての安定した情報や最近の出来事です。
ルール：
- 一項目に一つの事実だけを、人名を明記した三人称の完全な文で書くこと（ご主人は「{master}」と書く）。
- 事実は会話そのものの言語で書き、翻訳しないこと。
- 挨拶、社交辞令、情報のない雑談は無視すること。推測したり、会話にない内容を作ったりしないこと。
- importance は 1〜10：10 = 名前、呼び名、誕生日、身分、または覚えておいてと明確に頼まれたこと；8〜9 = 安定した中心的な好みや習慣；6〜7 = 一般的な好みや最近の出来事；5 = 些細だが記録する価値のあること；1〜4 = かすかな手がかり（それでも返すこと）。
- entity は master、neko、relationship のいずれか一つ。
- event_when は現在から見た出来事の時点：{{"start": {{"offset": 整数, "unit": "minute|hour|day|week|month|year"}}, "end": 同じ形または null}}。過去は負の数、時間の情報がなければ null。
JSON 配列を一つだけ出力してください。例：[{{"text": "...", "importance": 7, "entity": "master", "event_when": null}}]。覚えておくべき内容がなければ [] を出力してください。""",
    "disclosure": """あなたは{name}の長期記憶を整理する係です。今回は、以下の会話で{name}（AI）が自分自身について話した情報だけに注目してください：自己紹介、好み、経験、約束、そして{master}との関係について{name}が述べたことです。ご主人についての事実は繰り返さないでください。
既知の事実（繰り返さないこと）：
{known}
ルールと形式は通常の事実抽出と同じです：一項目に一つの原子的な文を会話の言語で書き、importance は 1〜10、entity は neko か relationship、event_when は相対時間か null。
JSON 配列を一つだけ出力してください。新しい内容がなければ [] を出力してください。""",
    "arbitrate": """以下は{name}の記憶の中で重複しているかもしれない事実の組です。一組ずつ判断してください：
- merge：二つは同じことを言っているので、より完全な一文にまとめる（text に元の事実の言語で書く）；
- replace：新しい事実が古い事実を更新または置き換えるので、新しい方を残して古い方を消す；
- keep_both：二つは別のことを言っているので、両方残す。
{pairs}
JSON 配列だけを出力してください：[{{"index": 番号, "action": "merge|replace|keep_both", "text": "merge のときだけ記入"}}]。""",
    "pair": "[{index}] 新：{new}\n    旧：{old}",
}
