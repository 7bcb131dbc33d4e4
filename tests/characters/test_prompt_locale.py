"""The character's durable prompt locale, as a current N.E.K.O. main server uses it (reference §1.7).

The main server's character page sends ``GET`` / ``PUT /prompt-locale/{name}`` with a JSON body
``{"language": …}`` and reads ``{success, language, order, previous_language, changed}``; the chat
path sends ``language`` on ``/cache`` (``input_history`` a JSON *string*) and on ``/new_dialog``.
"""

from __future__ import annotations

import json
import threading

import pytest
from django.db import connection, transaction

from nekomem.characters.language import character_language, language_arrival_stamp
from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.characters.services import character_language_offer
from tests.characters.factories import CharacterFactory
from tests.support.waits import WRITER_TURN_WAIT, LockWaitProbe

pytestmark = pytest.mark.django_db


def _put(client, name: str, language: object):
    return client.put(
        f"/prompt-locale/{name}", data=json.dumps({"language": language}), content_type="application/json"
    )


def _cache(client, name: str, *, language: str | None = None, render_language: str | None = None):
    body: dict = {
        "input_history": json.dumps(
            [
                {"type": "human", "data": {"content": "早上好", "additional_kwargs": {}}},
                {"type": "ai", "data": {"content": "早呀", "tool_calls": []}},
            ],
            ensure_ascii=False,
        )
    }
    if language is not None:
        body["language"] = language
    if render_language is not None:
        body["render_language"] = render_language
    return client.post(f"/cache/{name}", data=json.dumps(body), content_type="application/json")


def test_put_then_get_normalises_the_code_and_reports_the_previous_choice(client):
    CharacterFactory.create(name="小天")
    empty = client.get("/prompt-locale/小天").json()
    assert empty == {"success": True, "language": None, "order": 0, "effective_language": "zh"}

    first = _put(client, "小天", "tchinese")  # a Steam store name
    assert first.status_code == 200
    body = first.json()
    assert (body["success"], body["language"], body["previous_language"], body["changed"]) == (
        True,
        "zh-TW",
        None,
        True,
    )
    assert body["order"] > 0

    again = _put(client, "小天", "zh_Hant_HK").json()
    assert (again["language"], again["previous_language"], again["changed"]) == ("zh-TW", "zh-TW", False)
    assert again["order"] > body["order"]

    read = client.get("/prompt-locale/小天").json()
    assert read["language"] == "zh-TW" and read["order"] == again["order"]


def test_put_refuses_an_unsupported_code_and_changes_nothing(client):
    _put(client, "小天", "ja")
    for bad in ("fr", "", None, 7):
        response = _put(client, "小天", bad)
        assert response.status_code == 400 and response.json()["success"] is False
    assert client.get("/prompt-locale/小天").json()["language"] == "ja"


def test_put_for_an_invalid_name_is_a_400(client):
    assert _put(client, "..", "en").status_code == 400


@pytest.mark.django_db(transaction=True)
def test_of_two_concurrent_puts_the_older_one_finishing_late_gets_the_superseded_409(client):
    character = CharacterFactory.create(name="小天")
    answers: list = []

    waiting = LockWaitProbe(WRITER_TURN_WAIT)

    def older_put() -> None:
        waiting.install()
        try:
            answers.append(_put(client, "小天", "ja"))
        finally:
            connection.close()

    # A settle holds the character's row; the older PUT arrives (takes its stamp) and waits for it.
    with transaction.atomic():
        lock_character(character.pk)
        older = threading.Thread(target=older_put)
        older.start()
        assert waiting.wait(), "the older PUT never reached the character's row"
        assert not answers, "the older PUT must be waiting for the character's row"
        # The newer PUT arrives later and is served first (on the connection that holds the row).
        newer = _put(client, "小天", "ko")
        assert newer.status_code == 200 and newer.json()["language"] == "ko"
    older.join(timeout=20)
    assert answers, "the older PUT never answered"
    assert answers[0].status_code == 409
    assert answers[0].json()["detail"]["error_code"] == "language_preference_superseded"
    assert client.get("/prompt-locale/小天").json()["language"] == "ko"


def test_a_language_on_cache_is_remembered_for_the_next_new_dialog(client):
    assert _cache(client, "Mio", language="en-US").json() == {"status": "cached", "count": 2}
    assert Character.objects.get(name="Mio").language == "en"
    text = client.get("/new_dialog/Mio").content.decode()
    assert "======Mio's Inner Thoughts======" in text
    # Without a stored choice the server default (zh) renders.
    _cache(client, "Rin")
    assert "======以下是Rin的内心活动======" in client.get("/new_dialog/Rin").content.decode()


def test_render_language_renders_only_and_is_never_stored(client):
    _cache(client, "Mio", render_language="en")
    assert Character.objects.get(name="Mio").language == ""
    assert "Mio's Inner Thoughts" in client.get("/new_dialog/Mio?render_language=en").content.decode()
    assert "以下是Mio的内心活动" in client.get("/new_dialog/Mio").content.decode()
    # The stored choice comes before render_language; the request's language before both.
    _put(client, "Mio", "zh")
    assert "以下是Mio的内心活动" in client.get("/new_dialog/Mio?render_language=en").content.decode()
    assert "Mio's Inner Thoughts" in client.get("/new_dialog/Mio?language=en").content.decode()
    # ... and that explicit language on /new_dialog is now the stored one.
    assert client.get("/prompt-locale/Mio").json()["language"] == "en"


def test_an_unsupported_request_language_is_not_stored(client):
    _put(client, "Mio", "ru")
    _cache(client, "Mio", language="fr")
    assert client.get("/prompt-locale/Mio").json()["language"] == "ru"


def test_query_memory_remembers_its_language(client):
    _cache(client, "Mio")
    response = client.post(
        "/query_memory/Mio",
        data=json.dumps({"query": "早上", "language": "japanese"}),
        content_type="application/json",
    )
    assert response.status_code == 200
    assert client.get("/prompt-locale/Mio").json()["language"] == "ja"


def test_a_choice_that_arrived_earlier_never_overrides_a_newer_one():
    character = CharacterFactory.create(name="小天")
    earlier, later = language_arrival_stamp(), language_arrival_stamp()
    assert character_language_offer(character_id=character.pk, language="en", order=later)
    # The earlier request finishes late: the conditional UPDATE keeps the newer choice.
    assert not character_language_offer(character_id=character.pk, language="ja", order=earlier)
    character.refresh_from_db()
    assert (character.language, character.language_order) == ("en", later)


def test_a_late_cache_turn_does_not_override_a_newer_put(client):
    character = CharacterFactory.create(name="小天")
    from recent.services import turn_record

    arrived_first = language_arrival_stamp()
    _put(client, "小天", "ko")
    turn_record(
        name="小天",
        messages=[{"type": "human", "data": {"content": "hi"}}],
        language="en",
        language_order=arrived_first,
    )
    character.refresh_from_db()
    assert character.language == "ko"


def test_resolution_order(settings):
    settings.NEKOMEM_DEFAULT_LANGUAGE = "zh"
    character = CharacterFactory.create(name="小天", language="en", language_order=1)
    assert character_language(character) == "en"
    assert character_language(character, request_language="zh-CN") == "zh"
    assert character_language(character, request_language="fr", render_language="zh") == "en"
    blank = CharacterFactory.create(name="Mio")
    assert character_language(blank, render_language="en") == "en"
    assert character_language(blank) == "zh"
    assert character_language(None) == "zh"


def test_the_rest_api_shows_and_changes_the_locale(client, admin_client):
    CharacterFactory.create(name="小天")
    response = admin_client.patch(
        "/api/v1/characters/小天/", data=json.dumps({"language": "pt-BR"}), content_type="application/json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["language"] == "pt" and response.json()["language_order"] > 0
    bad = admin_client.patch(
        "/api/v1/characters/小天/", data=json.dumps({"language": "xx"}), content_type="application/json"
    )
    assert bad.status_code == 400
    assert client.get("/prompt-locale/小天").json()["language"] == "pt"


def test_the_browser_page_shows_and_changes_the_locale(admin_client, client):
    CharacterFactory.create(name="小天")
    response = admin_client.post("/browse/小天/language/", {"language": "ko"})
    assert response.status_code == 302
    page = admin_client.get("/browse/小天/").content.decode()
    assert 'data-testid="language">ko<' in page
    assert client.get("/prompt-locale/小天").json()["language"] == "ko"
