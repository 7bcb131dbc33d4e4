# ruff: noqa: E501  prompt prose: wrapping it would put stray newlines into what the model reads
"""Japanese."""

PROMPTS = {
    "synthesis": """あなたは{name}が{master}について長期的な印象をまとめるのを手伝っています。以下は最近記録された事実です（背景として、以前に整理済みの関連する事実もいくつかあります）。
それらを一つの、より高いレベルの印象にまとめてください：{name}はこれらの事実から何を読み取りますか？
ルール：
- 一〜三文、150字未満。人名を明記すること（ご主人は「{master}」と書く）。事実にない内容を付け加えないこと。
- 印象は事実そのものの言語で書き、翻訳しないこと。
- entity は master、neko、relationship のいずれか。
- relation_type は entity に合わせること：master → preference|trait|habit|identity|emotional|boundary；neko → self_awareness|learned|role_note；relationship → dynamic|milestone|tension|shared_memory|agreement。
- temporal_scope は pattern（長く続く傾向）、state（しばらく続く状態）、episode（一度の出来事）、past（もう過ぎたこと）のいずれか。
- subject はこの印象の話題を数語で、event_when は事実と同じ相対時間の形か null。
JSON オブジェクトを一つだけ出力してください：{{"reflection": "...", "entity": "...", "relation_type": "...", "temporal_scope": "...", "subject": "...", "event_when": null}}

新しい事実：
{facts}

関連する以前の事実：
{related}""",
    "feedback": """{name}は最近、{master}に次の印象を自分から話しました：
{items}
以下の会話での{master}の反応から、一つずつ判断してください：confirmed（同意した、付け加えた、または正しいものとして受け取った）、denied（否定した、訂正した）、ignored（反応しなかった）。
JSON 配列を一つだけ出力してください：[{{"reflection_id": "...", "feedback": "confirmed|denied|ignored"}}]""",
    "signals": """以下は{name}が{master}について持っている現在の印象（observations）と、最近の会話から新しく抽出された事実です。
新しい事実それぞれについて、どれかの印象を裏付ける（reinforces）か、否定する（negates）かを答えてください。関係のないものは出力しないでください。
印象：
{observations}
新しい事実：
{facts}
JSON オブジェクトを一つだけ出力してください：{{"signals": [{{"source_fact_id": "...", "target_id": "...", "target_type": "reflection|persona", "signal": "reinforces|negates", "reason": "..."}}]}}""",
    "keyword": """{master}がたった今、否定や訂正のように聞こえることを言いました。以下は{master}の最新のメッセージと、{name}の現在の印象です。
{master}の言葉で否定された印象はどれですか？なければ空のリストを返してください。
{master}のメッセージ：
{messages}
印象：
{observations}
JSON オブジェクトを一つだけ出力してください：{{"targets": [{{"target_id": "...", "reason": "..."}}]}}""",
    "rebuttal": """以下は{name}が{master}についてかなり確かだと思っている印象と、{master}の最新のメッセージです。
はっきりと覆された印象はありますか？明確に覆された場合だけ denied としてください。
印象：
{observations}
{master}のメッセージ：
{messages}
JSON オブジェクトを一つだけ出力してください：{{"verdicts": [{{"reflection_id": "...", "verdict": "denied|kept"}}]}}""",
    "rerank": """以下は{name}が持つ{master}についての記憶（番号付き）と、{master}についての新しい内容です。新しい内容に最も関係する記憶はどれですか？各記憶の証拠スコアは参考情報にすぎません。
新しい内容：
{queries}
記憶：
{memories}
JSON オブジェクトを一つだけ出力してください：{{"ranked": [最も関係する記憶の番号、関係の強い順、最大 {budget} 個]}}""",
    "fact_line": "- {text}（重要度：{importance}）",
    "refine": """以下は{name}が{master}について抱いている、ほぼ同じことを言っている印象です。それぞれの事柄が一度だけ明確に述べられるよう整理してください：
- merge：複数の印象が同じことを言っている → 一つにまとめる；
- split：一つの印象に無関係な内容が混ざっている → 複数に分ける；
- modify：一つの印象が分かりにくい・ぎこちない → 意味を変えずに言い直す；
- discard：一つの印象が他に完全に含まれている、または中身がない。
具体的な細部はすべて残し、元にないことは加えないでください。元の言語で書いてください。問題のない印象は答えに含めず、すべて問題なければ [] と答えてください。
印象：
{lines}
JSON 配列だけで答えてください。例：[{{"action": "merge", "ids": [0, 1], "text": "..."}}, {{"action": "split", "id": 2, "texts": ["...", "..."]}}, {{"action": "modify", "id": 3, "text": "..."}}, {{"action": "discard", "id": 4}}]""",
    "recheck_reflection": """{name}は {date} に{master}についてこの印象を記しました：
{text}
改めて分類してください：
- temporal_scope：pattern（続いている傾向）、state（しばらく続く状態）、episode（一度の出来事）、past（もう過ぎたこと）のいずれか；
- event_when：描かれていることがいつ起きたか、{date} を基準に：{{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": null}}。その日より前は負の offset、終わりがあれば "end" も同じ形で；時間の手がかりがなければ null。
JSON オブジェクト一つだけで答えてください：{{"temporal_scope": "pattern|state|episode|past", "event_when": null}}""",
    "recheck_fact": """{name}は {date} にこの事実を記しました：
{text}
描かれていることはいつ起きたか、{date} を基準に答えてください。event_when は {{"start": {{"offset": integer, "unit": "minute|hour|day|week|month|year"}}, "end": null}}。その日より前は負の offset、終わりがあれば "end" も同じ形で；時間の手がかりがなければ null。
JSON オブジェクト一つだけで答えてください：{{"event_when": null}}""",
    "refine_line": "[{index}] {text} (evidence={score})",
}
