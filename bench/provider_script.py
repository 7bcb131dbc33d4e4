"""A healthy scripted LLM provider for the benches: a valid answer for each prompt kind of §7.

The kind is told from the request's messages by the JSON shape the prompt asks for (the keys are the
same in every language), and the answer is built from what the prompt carries: a review returns the
dialogue it was sent, extraction one fact from the first line, arbitration and corrections a decision
for each numbered pair. ``answer`` plugs into ``ScriptedLLMServer.fallback``; ``kinds`` counts what was
asked, so a bench can tell which work ran. A prompt of no known kind is answered 500 and counted as
``unknown``: a new prompt shows up in the bench's output instead of failing quietly.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from tests.support.llm_server import Reply, error, json_content

DIALOGUE_START = "======以下为对话======"
DIALOGUE_END = "======以上为对话======"

_NUMBERED = re.compile(r"^\[(\d+)\]", re.MULTILINE)
_BRACKETED_ID = re.compile(r"^-? ?\[([^\]\n]+)\]", re.MULTILINE)
# A corrections line in any language: "[i] existing(trust=..): old | new observation(trust=..): new".
_NEW_OBSERVATION = re.compile(r"^\[(\d+)\].*\(trust=[^)]*\)[:：]\s*([^|]*)$", re.MULTILINE)
# A synthesis fact line in any language: "- text (importance: 6)" / "- text（重要度：6）".
_FACT_LINE = re.compile(r"^- (.*?)\s*[(（][^()（）]*?\d+\s*[)）]$", re.MULTILINE)
_CANDIDATE = re.compile(r"^\[(\d+)\] \(evidence", re.MULTILINE)


def prompt_text(body: Any) -> str:
    messages = body.get("messages") if isinstance(body, dict) else None
    return "\n".join(str(m.get("content", "")) for m in messages or [] if isinstance(m, dict))


def prompt_kind(text: str) -> str:
    """Which §7 task a prompt is, by the reply shape it asks for (most specific first)."""
    checks = (
        ('"action": "split"', "refine"),
        ('"temporal_scope": "pattern|state|episode|past", "event_when": null}', "recheck_reflection"),
        ('{"event_when": null}', "recheck_fact"),
        ('"corrected_dialogue"', "review"),
        ('"summary"', "summary" if DIALOGUE_START in text else "further_summary"),
        ('"ranked"', "rerank"),
        ('"signals"', "signals"),
        ('"targets"', "negative_targets"),
        ('"verdicts"', "rebuttal"),
        ('"feedback"', "feedback"),
        ("promote_fresh", "promotion_merge"),
        ("keep_new", "corrections"),
        ("keep_both", "arbitration"),
        ('"reflection":', "synthesis"),
    )
    for needle, kind in checks:
        if needle in text:
            return kind
    if '"importance"' in text:
        return "extraction"
    # The AI-disclosure prompt names no keys ("same shape as ordinary extraction"): its known-facts list,
    # or in any locale a dialogue with the entity values it allows (they stay English in every locale).
    if "Known facts" in text or "已知事实" in text:
        return "disclosure"
    if DIALOGUE_START in text and "neko" in text and "relationship" in text:
        return "disclosure"
    return "unknown"


def _dialogue(text: str) -> str:
    if DIALOGUE_START not in text or DIALOGUE_END not in text:
        return ""
    return text[text.index(DIALOGUE_START) + len(DIALOGUE_START) : text.rindex(DIALOGUE_END)].strip()


def _first_line(dialogue: str) -> str:
    for line in dialogue.splitlines():
        spoken = line.split(" | ", 1)[-1].strip()
        if spoken:
            return spoken
    return ""


def _snippet(text: str, size: int = 60) -> str:
    return " ".join(text.split())[:size]


def _zh(text: str) -> bool:
    return "只输出" in text  # every zh prompt ends with it


def _summary(text: str) -> Any:
    dialogue = _dialogue(text)
    lines, first = len(dialogue.splitlines()), _snippet(_first_line(dialogue))
    return {
        "summary": f"他们聊了{lines}句，从「{first}」开始。" if _zh(text) else f"{lines} lines from: {first}"
    }


def _further_summary(text: str) -> Any:
    return {"summary": _snippet(text.rsplit("\n", 1)[-1], 200) or "memo"}


def _review(text: str) -> Any:
    # Nothing to fix: the dialogue it was sent, verbatim.
    return {"explanation": "nothing to fix", "corrected_dialogue": json.loads(_dialogue(text))}


def _facts(entity: str) -> Any:
    def answer(text: str) -> Any:
        first = _snippet(_first_line(_dialogue(text)))
        if not first:
            return []
        who = {"master": "主人", "neko": "猫娘"}[entity] if _zh(text) else f"The {entity}"
        said = f"{who}提到：{first}" if _zh(text) else f"{who} said: {first}"
        return [{"text": said, "importance": 6, "entity": entity, "event_when": None}]

    return answer


def _arbitration(text: str) -> Any:
    return [{"index": int(i), "action": "keep_both"} for i in _NUMBERED.findall(text)]


def _corrections(text: str) -> Any:
    return [
        {"index": int(index), "action": "keep_both", "text": new.strip()}
        for index, new in _NEW_OBSERVATION.findall(text)
    ]


def _synthesis(text: str) -> Any:
    facts = _FACT_LINE.findall(text)
    first = _snippet(facts[0] if facts else "", 100) or "daily life"
    zh = _zh(text)
    return {
        "reflection": f"主人最近常提起：{first}"
        if zh
        else f"Lately the master keeps coming back to: {first}",
        "entity": "master",
        "relation_type": "preference",
        "temporal_scope": "state",
        "subject": "近况" if zh else "lately",
        "event_when": None,
    }


def _bracketed_runs(text: str) -> list[list[str]]:
    """The ids of each run of consecutive ``[id] ...`` lines (a heading line in any language ends a run)."""
    runs: list[list[str]] = []
    current: list[str] = []
    for line in text.splitlines():
        match = _BRACKETED_ID.match(line)
        if match:
            current.append(match.group(1))
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return runs


def _signals(text: str) -> Any:
    # The first new fact reinforces the first impression shown, so evidence keeps moving. The
    # impressions come first, then the new facts, each under a heading in the prompt's language.
    runs = _bracketed_runs(text)
    if len(runs) < 2:
        return {"signals": []}
    target, fact = runs[0][0], runs[-1][0]
    signal = {
        "source_fact_id": fact,
        "target_id": target,
        "target_type": "persona" if target.startswith("persona.") else "reflection",
        "signal": "reinforces",
        "reason": "same topic",
    }
    return {"signals": [signal]}


def _rebuttal(text: str) -> Any:
    return {"verdicts": [{"reflection_id": rid, "verdict": "kept"} for rid in _BRACKETED_ID.findall(text)]}


def _feedback(text: str) -> Any:
    return [{"reflection_id": rid, "feedback": "ignored"} for rid in _BRACKETED_ID.findall(text)]


def _promotion_merge(_text: str) -> Any:
    return {"action": "promote_fresh", "target_id": None, "merged_text": None, "reason": "new"}


_REFINE_LINE = re.compile(r"^\[(\d+)\] (.*) \(evidence=-?[\d.]+\)$", re.MULTILINE)


def _refine(text: str) -> Any:
    """Members that say the very same thing merge into the first of them; anything else is kept."""
    members = [(int(i), body) for i, body in _REFINE_LINE.findall(text)]
    by_text: dict[str, list[int]] = {}
    for index, body in members:
        by_text.setdefault(body.strip(), []).append(index)
    return [{"action": "merge", "ids": ids, "text": body} for body, ids in by_text.items() if len(ids) > 1]


def _rerank(text: str) -> Any:
    return {"ranked": [int(i) for i in _CANDIDATE.findall(text)]}


ANSWERS: dict[str, Callable[[str], Any]] = {
    "summary": _summary,
    "further_summary": _further_summary,
    "review": _review,
    "extraction": _facts("master"),
    "disclosure": _facts("neko"),
    "arbitration": _arbitration,
    "corrections": _corrections,
    "synthesis": _synthesis,
    "signals": _signals,
    "negative_targets": lambda _text: {"targets": []},
    "rebuttal": _rebuttal,
    "feedback": _feedback,
    "promotion_merge": _promotion_merge,
    "rerank": _rerank,
    "refine": _refine,
    "recheck_reflection": lambda _text: {"temporal_scope": "state", "event_when": None},
    "recheck_fact": lambda _text: {"event_when": None},
}


def reply_for(kind: str, text: str) -> Any:
    """The JSON value a healthy provider answers to a prompt of ``kind`` (KeyError: unknown kind)."""
    return ANSWERS[kind](text)


class HealthyProvider:
    """``fallback`` for ``ScriptedLLMServer``: answers by prompt kind and counts the kinds asked."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self._lock = threading.Lock()

    def answer(self, body: Any) -> Reply:
        text = prompt_text(body)
        kind = prompt_kind(text)
        try:
            reply = json_content(reply_for(kind, text))
        except (ValueError, KeyError, TypeError) as exc:
            kind, reply = (
                f"{kind} (unanswerable)",
                error(500, message=f"bench provider: {type(exc).__name__}"),
            )
        with self._lock:
            self.kinds[kind] += 1
        return reply

    def counts(self) -> str:
        with self._lock:
            return ", ".join(f"{kind} {n}" for kind, n in sorted(self.kinds.items())) or "-"
