"""``POST /internal/memory/{name}/repetition_insights``: the anti-repetition panel's local analysis
(reference §1.7), on real companion replies with a phrase planted in some of them."""

from __future__ import annotations

import json

import pytest

from recent.repetition import repetition_analyse
from tests.support.dataset import conversation

pytestmark = pytest.mark.django_db

URL = "/internal/memory/{name}/repetition_insights"


def _replies(dataset: str) -> list[str]:
    return [t["text"] for t in conversation(dataset) if t["role"] == "assistant"]


def _store(client, name: str, dataset: str, planted: str, every: int, language: str) -> list[str]:
    """Cache the conversation turn by turn, the planted phrase added to every ``every``-th reply."""
    rows = conversation(dataset)
    replies: list[str] = []
    for index in range(0, len(rows) - 1, 2):
        user, reply = rows[index], rows[index + 1]
        text = reply["text"]
        if len(replies) % every == 0:
            text = f"{text} {planted}"
        replies.append(text)
        messages = [
            {"type": "human", "data": {"content": user["text"]}},
            {"type": "ai", "data": {"content": text}},
        ]
        body = {"input_history": json.dumps(messages, ensure_ascii=False), "language": language}
        client.post(f"/cache/{name}", data=json.dumps(body), content_type="application/json")
    return replies


def _ask(internal_client, name: str, **body):
    return internal_client.post(URL.format(name=name), data=json.dumps(body), content_type="application/json")


def test_an_english_planted_phrase_is_found_with_its_count_and_an_example(client, internal_client):
    planted = "Remember that I am always here for you, no matter what."
    replies = _store(client, "Mel", "memorybank-en", planted, every=3, language="en")
    response = _ask(internal_client, "Mel", language="en", assistant_message_limit=30)
    assert response.status_code == 200
    body = response.json()
    assert (body["success"], body["artifact_type"], body["character_name"], body["language"]) == (
        True,
        "repetition_insights",
        "Mel",
        "en",
    )
    assert isinstance(body["schema_version"], int)
    assert body["parameters"]["assistant_message_limit"] == 30
    assert body["summary"]["assistant_messages_analyzed"] == min(30, len(replies))
    top = body["candidates"][0]
    newest_30 = replies[::-1][:30]
    expected = sum(planted.lower().rstrip(".") in r.lower() for r in newest_30)
    assert top["phrase"] == "remember that i am always here for you no matter what"
    assert top["reply_count"] == expected >= 2
    assert "always here for you" in top["example"].lower()


def test_a_chinese_planted_phrase_is_found_by_character_ngrams(client, internal_client):
    planted = "不管发生什么，我都会一直陪着你哦。"
    replies = _store(client, "小天", "memorybank-cn", planted, every=2, language="zh")
    body = _ask(internal_client, "小天", language="zh-CN").json()
    assert body["language"] == "zh-CN"
    phrases = [c["phrase"] for c in body["candidates"]]
    assert "我都会一直陪着你哦" in phrases
    count = next(c["reply_count"] for c in body["candidates"] if c["phrase"] == "我都会一直陪着你哦")
    assert count == sum(planted in r for r in replies[::-1][:100])


def test_the_limit_is_checked_and_the_default_is_one_hundred(client, internal_client):
    _store(client, "Mel", "memorybank-en", "always here for you my friend", every=2, language="en")
    for bad in (2, 101, "10", True, 10.5, None):
        refused = _ask(internal_client, "Mel", language="en", assistant_message_limit=bad)
        assert refused.status_code == 422
        assert refused.json()["error_code"] == "invalid_request"
        assert "assistant_message_limit" in refused.json()["message"]
    body = _ask(internal_client, "Mel", language="en").json()
    assert body["parameters"]["assistant_message_limit"] == 100
    assert _ask(internal_client, "nobody", language="en").status_code == 404


def test_the_language_is_required_and_one_of_the_eight_codes_without_a_fallback(client, internal_client):
    # The character's stored locale (en, from /cache) is no fallback for a missing language.
    _store(client, "Mel", "memorybank-en", "always here for you my friend", every=2, language="en")
    for body in (
        {},
        {"language": None},
        {"language": "fr"},
        {"language": "zh"},
        {"language": "EN"},
        {"language": 7},
    ):
        refused = _ask(internal_client, "Mel", **body)
        assert refused.status_code == 422, body
        assert refused.json() == {
            "status": "error",
            "message": "language is required and must be one of en, es, pt, ru, ja, ko, zh-CN, zh-TW",
            "error_code": "invalid_request",
        }
    for code in ("en", "es", "pt", "ru", "ja", "ko", "zh-CN", "zh-TW"):
        answer = _ask(internal_client, "Mel", language=code, assistant_message_limit=3)
        assert (answer.status_code, answer.json()["language"]) == (200, code)
    # The refusal comes before the lookup, as the original validates its body first.
    assert _ask(internal_client, "nobody").status_code == 422


def test_a_phrase_inside_a_longer_one_repeated_as_often_is_left_out():
    replies = [f"reply {i} says see you tomorrow at the lake" for i in range(4)] + ["nothing repeats"]
    result = repetition_analyse(replies=replies, language="en")
    phrases = [c["phrase"] for c in result["candidates"]]
    assert phrases[0] == "says see you tomorrow at the lake"
    assert "see you tomorrow" not in phrases
    assert result["summary"]["replies_with_repetition"] == 4


def test_korean_keeps_its_spaces():
    replies = ["오늘도 정말 수고했어요 주인님", "정말 수고했어요 주인님 내일 봐요", "안녕"]
    phrases = [c["phrase"] for c in repetition_analyse(replies=replies, language="ko")["candidates"]]
    assert "정말 수고했어요 주인님" in phrases
