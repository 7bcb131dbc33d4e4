# ruff: noqa: E501  prose the companion and the model read: wrapping it would scatter the sentences
"""Japanese."""

TEXT = {
    "master": "### {master}について",
    "neko": "### {ai}について",
    "relationship": "### 二人の関係",
    "scoped": "### {subject}について",
    "other": "### {section}",
    "pending": "### {ai}の最近の印象（まだはっきりしない）",
    "confirmed": "### {ai}がかなり確かだと思っている印象",
    "past_open": "======ここから少し前の記憶======",
    "past_note": "（これは少し前のことで、背景として参考にするだけです。{master}から話題にしない限り、自分からは触れないでください。）",
    "past_close": "======ここまで少し前の記憶======",
    "suppressed": "### 今は自分から触れない話題（{ai}は覚えているが、最近何度も話題にしたので、もう自分からは持ち出さない）",
    "now": "ついさっき",
    "days": {"one": "{n}日前", "few": "{n}日前", "many": "{n}日前", "other": "{n}日前"},
    "weeks": {"one": "{n}週間前", "few": "{n}週間前", "many": "{n}週間前", "other": "{n}週間前"},
    "months": {"one": "{n}か月前", "few": "{n}か月前", "many": "{n}か月前", "other": "{n}か月前"},
    "legacy": "{name}が覚えていること：{line}",
}

PROMPTS = {
    "merge": """{name}は{master}について、かなり確かな新しい印象を持っており、それを長期的な人物像に書き加えようとしています。以下は人物像にある同じ種類の既存の項目と、関連する印象です。
この新しい印象をどう扱うか決めてください：
- promote_fresh：新しい情報なので、新しい項目として追加する；
- merge_into：既存の人物像の項目と同じことを言っているので、二つを一文にまとめる（target_id にはその項目の角括弧内の id、merged_text にはまとめた文を書く）；
- reject：信頼できない、既存の内容と矛盾する、または長く覚えておく価値がない。
merged_text は印象と項目が書かれている元の言語で書き、翻訳しないでください。
JSON オブジェクトを一つだけ出力してください：{{"action": "promote_fresh|merge_into|reject", "target_id": "persona.<entity>.<id> または null", "merged_text": "... または null", "reason": "短い理由"}}

新しい印象（{entity}）：{text}

既存の項目：
{pool}""",
    "none": "（なし）",
    "corrections": """{name}の長期的な人物像には、既存の項目と新しい観察がほぼ同じことについて述べていて、互いに矛盾しているかもしれないものがあります。一組ずつ判断してください：
- merge：二つを一文にまとめる（text にまとめた文を書く）；
- keep_new：新しい観察で古い項目を置き換える（text に新しい項目の文を書く）；
- keep_old：古い項目が正しいので、新しい観察は捨てる；
- keep_both：どちらも成り立つので、両方残す（text に新しい項目の文を書く）。
text は項目が書かれている元の言語で書き、翻訳しないでください。
JSON 配列を一つだけ出力してください：[{{"index": 0, "action": "merge|keep_new|keep_old|keep_both", "text": "..."}}]

{lines}""",
    "correction_line": "[{index}] 既存(trust={old_trust}): {old_text} | 新しい観察(trust={new_trust}): {new_text}",
    "import_fuse": "以下は、ユーザーが別のプログラムから持ち込んだ「{entity}」についての記憶の項目です。確かな情報はすべて残し、何も作り足さずに、重複のない簡潔な文少数にまとめてください。全体で {cap} トークン以内にしてください。JSON の文字列配列だけを出力してください。\n\n{items}",
    "refine": """以下は{name}の長期ペルソナ（区分「{section}」）のうち、ほぼ同じことを言っている項目です。それぞれの事柄が一度だけ明確に述べられるよう整理してください：
- merge：複数の項目が同じことを言っている → 一つの項目にまとめる；
- split：一つの項目に無関係な内容が混ざっている → 複数の項目に分ける；
- modify：一つの項目が分かりにくい・ぎこちない → 意味を変えずに言い直す；
- discard：一つの項目が他の項目に完全に含まれている、または中身がない。
具体的な細部はすべて残し、項目にないことは加えないでください。項目自身の言語で書いてください。問題のない項目は答えに含めず、すべて問題なければ [] と答えてください。
項目：
{lines}
JSON 配列だけで答えてください。例：[{{"action": "merge", "ids": [0, 1], "text": "..."}}, {{"action": "split", "id": 2, "texts": ["...", "..."]}}, {{"action": "modify", "id": 3, "text": "..."}}, {{"action": "discard", "id": 4}}]""",
    "refine_line": "[{index}] {text} (evidence={score})",
}
