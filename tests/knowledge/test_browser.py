"""The memory browser's Knowledge page: packs, the upload preview and its refusals in eight languages,
imports, the per-pack and per-entry switches, and the query box's context block with its ranks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils.html import escape

from knowledge import selectors
from knowledge.browser import reason_text
from knowledge.services import knowledge_pack_install
from nekomem.language.codes import SUPPORTED_LANGUAGES
from nekomem.language.tables import load_locale_tables, table_problems

pytestmark = pytest.mark.django_db

PACK_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "knowledge" / "browser-pack.json"
REMOTE: dict[str, Any] = {"REMOTE_ADDR": "192.0.2.7", "HTTP_HOST": "127.0.0.1"}


def pack_payload() -> dict[str, Any]:
    return json.loads(PACK_PATH.read_text(encoding="utf-8"))


def pack_bytes(payload: dict[str, Any] | None = None) -> bytes:
    return json.dumps(payload or pack_payload(), ensure_ascii=False).encode("utf-8")


def upload(raw: bytes, name: str = "pack.json") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, raw, content_type="application/json")


def install() -> None:
    knowledge_pack_install(raw=pack_bytes())


def told(answer: Any) -> str:
    """The last message the answer left for the next page (earlier ones wait unread in the session)."""
    return [str(message) for message in get_messages(answer.wsgi_request)][-1]


def test_every_locale_has_a_sentence_for_every_reason_the_store_refuses_with() -> None:
    from knowledge.packs import REJECTION_REASONS

    tables = load_locale_tables("knowledge.browser_locales")
    assert table_problems(tables) == []
    reasons = {
        *REJECTION_REASONS,
        "job_in_progress",
        "knowledge_busy",
        "knowledge_stopping",
        "knowledge_starting",
    }
    for language in SUPPORTED_LANGUAGES:
        missing = sorted(reasons - tables[language]["reasons"].keys())
        assert missing == [], (language, missing)


def test_the_page_is_linked_from_every_page_header_and_lists_the_installed_packs(client: Client) -> None:
    install()
    front = client.get("/").content.decode()
    assert 'href="/knowledge/"' in front
    page = client.get("/knowledge/")
    assert page.status_code == 200
    body = page.content.decode()
    row = body.split('data-pack-id="neko-memes"', 1)[1].split("</tr>", 1)[0]
    assert "猫娘梗百科 Neko meme notes" in row and "CC BY-SA 4.0" in row
    assert '<td data-testid="pack-entries">3' in row
    assert "生效 effective: knowledge" in row
    # The entries, each with its disable switch.
    assert body.count('data-testid="knowledge-entry"') == 3
    assert "喵喵拳" in body and "domain:meme" in body


def test_off_loopback_the_page_and_its_writes_ask_for_a_staff_login(client: Client) -> None:
    for answer in (
        client.get("/knowledge/", **REMOTE),
        client.post("/knowledge/settings/", {"enabled": "false"}, **REMOTE),
        client.post("/knowledge/preview/", {"pack": upload(pack_bytes())}, **REMOTE),
    ):
        assert answer.status_code == 302 and answer["Location"].startswith("/admin/login/")
    assert selectors.knowledge_store().enabled is True


def test_the_preview_of_a_new_pack_lists_what_it_adds_and_stores_nothing(client: Client) -> None:
    answer = client.post("/knowledge/preview/", {"pack": upload(pack_bytes())})
    body = answer.content.decode()
    assert answer.status_code == 200
    assert 'data-importable="true"' in body
    assert '<strong data-testid="preview-pack-id">neko-memes</strong>' in body
    assert '<span data-testid="preview-entry-count">3</span>' in body
    added = body.split('data-testid="preview-added">', 1)[1].split("</ul>", 1)[0]
    assert [t in added for t in ("猫猫拳", "Loaf mode", "呼噜声")] == [True, True, True]
    assert selectors.knowledge_packs_list() == [] and selectors.knowledge_jobs_list() == []


def test_the_preview_against_the_installed_version_says_what_is_new_changed_and_removed(
    client: Client,
) -> None:
    install()
    payload = pack_payload()
    payload["entries"][1]["content"] += " Some cats loaf for hours."
    del payload["entries"][2]
    payload["entries"].append({"title": "踩奶", "content": "猫咪用前爪交替按压柔软的东西。"})
    body = client.post("/knowledge/preview/", {"pack": upload(pack_bytes(payload))}).content.decode()
    section = {
        kind: body.split(f'data-testid="preview-{kind}">', 1)[1].split("</ul>", 1)[0]
        for kind in ("added", "changed", "removed")
    }
    assert "踩奶" in section["added"] and "猫猫拳" not in section["added"]
    assert "Loaf mode" in section["changed"] and "猫猫拳" not in section["changed"]
    assert "呼噜声" in section["removed"]


def test_the_preview_of_the_installed_pack_itself_says_there_is_nothing_to_import(client: Client) -> None:
    install()
    body = client.post("/knowledge/preview/", {"pack": upload(pack_bytes())}).content.decode()
    assert 'data-testid="preview-unchanged"' in body and 'data-importable="false"' in body


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_a_refused_pack_is_explained_in_the_chosen_language(client: Client, language: str) -> None:
    payload = pack_payload()
    payload["pack_id"] = "Not A Valid Id"
    answer = client.post("/knowledge/preview/", {"pack": upload(pack_bytes(payload)), "lang": language})
    body = answer.content.decode()
    assert 'data-testid="pack-refused"' in body and 'data-importable="false"' in body
    shown = body.split('data-testid="pack-refused-reason"', 1)[1].split("</p>", 1)[0]
    assert escape(reason_text("invalid_pack_id", language)) in shown
    assert "invalid_pack_id" in body


def test_without_a_choice_the_refusal_follows_the_browsers_language(client: Client) -> None:
    body = client.post(
        "/knowledge/preview/", {"pack": upload(b"{not json")}, HTTP_ACCEPT_LANGUAGE="ja-JP,ja;q=0.9,en;q=0.5"
    ).content.decode()
    assert "ファイルが正しい UTF-8 の JSON ではありません。" in body


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda p: p.update(extra=1), "unexpected_pack_field"),
        (lambda p: p.update(schema_version=2), "unsupported_schema_version"),
        (lambda p: p.update(material_type="memes"), "invalid_material_type"),
        (lambda p: p.update(source={"homepage": "x"}), "invalid_source"),
        (lambda p: p.update(entries=[]), "invalid_entries"),
        (lambda p: p["entries"][0].update(rating=5), "unexpected_entry_field"),
        (lambda p: p["entries"][1].update(title="猫猫拳"), "duplicate_title"),
        (lambda p: p["entries"][0].update(content=""), "invalid_entry"),
    ],
)
def test_each_refusal_reason_gets_its_own_sentence(client: Client, change: Any, reason: str) -> None:
    payload = pack_payload()
    change(payload)
    body = client.post(
        "/knowledge/preview/", {"pack": upload(pack_bytes(payload)), "lang": "en"}
    ).content.decode()
    assert escape(reason_text(reason, "en")) in body, reason


def test_two_files_or_none_are_refused_before_anything_is_read(client: Client) -> None:
    none = client.post("/knowledge/preview/", {"lang": "zh"}).content.decode()
    assert escape(reason_text("invalid_request", "zh")) in none
    two = client.post(
        "/knowledge/preview/", {"pack": [upload(pack_bytes()), upload(pack_bytes(), "b.json")], "lang": "zh"}
    ).content.decode()
    assert escape(reason_text("invalid_request", "zh")) in two


def test_importing_queues_a_job_that_the_page_lists_and_can_cancel(client: Client) -> None:
    answer = client.post("/knowledge/import/", {"pack": upload(pack_bytes()), "lang": "en"})
    assert answer.status_code == 302
    assert "import queued" in told(answer)
    [job] = selectors.knowledge_jobs_list()
    assert job["pack_id"] == "neko-memes" and job["state"] == "queued"
    page = client.get(answer["Location"]).content.decode()
    assert f'data-job-id="{job["job_id"]}"' in page and "排队 queued" in page
    cancelled = client.post("/knowledge/jobs/cancel/", {"job_id": job["job_id"]})
    assert cancelled.status_code == 302
    assert selectors.knowledge_jobs_list()[0]["state"] == "cancelled"
    client.post("/knowledge/jobs/discard/", {"job_id": job["job_id"]})
    assert selectors.knowledge_jobs_list() == []


def test_importing_the_same_pack_twice_while_it_waits_is_refused_in_words(client: Client) -> None:
    client.post("/knowledge/import/", {"pack": upload(pack_bytes())})
    payload = pack_payload()
    payload["entries"][0]["summary"] = "另一个版本"
    again = client.post("/knowledge/import/", {"pack": upload(pack_bytes(payload)), "lang": "ko"})
    assert told(again) == f"{reason_text('job_in_progress', 'ko')} (job_in_progress)"
    assert len(selectors.knowledge_jobs_list()) == 1


def test_an_entry_is_disabled_and_enabled_again_from_its_row(client: Client) -> None:
    install()
    back = "/knowledge/?q=%E7%8C%AB&lang=en"
    answer = client.post(
        "/knowledge/entry/disabled/",
        {"pack_id": "neko-memes", "title": "猫猫拳", "disabled": "true", "next": back},
    )
    assert answer.status_code == 302 and answer["Location"] == back
    [pack] = selectors.knowledge_packs_list()
    assert pack["disabled_entries"] == 1
    entry = selectors.knowledge_entry_get(pack_id="neko-memes", title="猫猫拳")
    assert entry is not None and entry["disabled"] is True
    row = client.get("/knowledge/").content.decode().split('data-title="猫猫拳"', 1)[1].split("</tr>", 1)[0]
    assert 'data-testid="entry-disabled"' in row and "启用 Enable" in row
    client.post(
        "/knowledge/entry/disabled/", {"pack_id": "neko-memes", "title": "猫猫拳", "disabled": "false"}
    )
    assert selectors.knowledge_packs_list()[0]["disabled_entries"] == 0


def test_a_form_cannot_send_the_user_outside_the_page(client: Client) -> None:
    install()
    answer = client.post(
        "/knowledge/entry/disabled/",
        {"pack_id": "neko-memes", "title": "猫猫拳", "disabled": "true", "next": "https://example.org/"},
    )
    assert answer["Location"].startswith("/knowledge/?")


def test_an_unknown_entry_is_refused_in_words_and_changes_nothing(client: Client) -> None:
    install()
    answer = client.post(
        "/knowledge/entry/disabled/",
        {"pack_id": "neko-memes", "title": "nope", "disabled": "true", "lang": "ru"},
    )
    assert told(answer) == f"{reason_text('not_found', 'ru')} (not_found)"
    assert selectors.knowledge_packs_list()[0]["disabled_entries"] == 0


def test_the_pack_switches_and_the_override_go_through_the_services(client: Client) -> None:
    install()
    client.post("/knowledge/packs/material-type/", {"pack_id": "neko-memes", "material_type": "corpus"})
    client.post("/knowledge/packs/auto-context/", {"pack_id": "neko-memes", "enabled": "true"})
    client.post("/knowledge/packs/index-policy/", {"pack_id": "neko-memes", "enabled": "false"})
    [pack] = selectors.knowledge_packs_list()
    assert (pack["material_type_override"], pack["effective_material_type"]) == ("corpus", "corpus")
    assert pack["auto_context"] is True and pack["local_embedding"] is False
    client.post("/knowledge/packs/material-type/", {"pack_id": "neko-memes", "material_type": ""})
    [pack] = selectors.knowledge_packs_list()
    assert (pack["material_type_override"], pack["effective_material_type"]) == (None, "knowledge")
    bad = client.post("/knowledge/packs/material-type/", {"pack_id": "neko-memes", "material_type": "memes"})
    assert told(bad).endswith("(invalid_request)")
    assert client.post("/knowledge/packs/rename/", {"pack_id": "neko-memes"}).status_code == 404


def test_the_global_switch_turns_the_tool_off(client: Client) -> None:
    install()
    assert selectors.knowledge_availability()["tool_available"] is True
    client.post("/knowledge/settings/", {"enabled": "false"})
    assert selectors.knowledge_availability() == {"ready": True, "enabled": False, "tool_available": False}
    body = client.get("/knowledge/").content.decode()
    assert "已关闭 Off" in body and "开启 Turn on" in body


def test_removing_a_pack_removes_its_entries(client: Client) -> None:
    install()
    body = client.get("/knowledge/").content.decode()
    assert "confirm(" in body.split('data-testid="pack-remove"', 1)[1].split(">", 1)[0]
    answer = client.post("/knowledge/packs/remove/", {"pack_id": "neko-memes"})
    assert "neko-memes" in told(answer)
    assert selectors.knowledge_packs_list() == []
    assert selectors.knowledge_entries_list()["items"] == []
    gone = client.post("/knowledge/packs/remove/", {"pack_id": "neko-memes", "lang": "es"})
    assert told(gone) == f"{reason_text('not_found', 'es')} (not_found)"


def test_entries_are_searched_filtered_and_paged(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    install()
    other = pack_payload()
    other["pack_id"] = "neko-corpus"
    other["material_type"] = "corpus"
    knowledge_pack_install(raw=pack_bytes(other))
    found = client.get("/knowledge/", {"q": "Loaf"}).content.decode()
    assert found.count('data-testid="knowledge-entry"') == 2
    one_pack = client.get("/knowledge/", {"pack": "neko-corpus"}).content.decode()
    assert one_pack.count('data-testid="knowledge-entry"') == 3
    monkeypatch.setattr("knowledge.browser.ENTRIES_PER_PAGE", 4)
    first = client.get("/knowledge/").content.decode()
    assert first.count('data-testid="knowledge-entry"') == 4 and "offset=4" in first
    second = client.get("/knowledge/", {"offset": 4}).content.decode()
    assert second.count('data-testid="knowledge-entry"') == 2 and "offset=0" in second


def test_the_entry_page_shows_the_whole_entry(client: Client) -> None:
    install()
    page = client.get("/knowledge/entry/", {"pack_id": "neko-memes", "title": "猫猫拳"})
    body = page.content.decode()
    assert page.status_code == 200
    assert pack_payload()["entries"][0]["content"] in body and "猫咪出拳" in body
    assert client.get("/knowledge/entry/", {"pack_id": "neko-memes", "title": "nope"}).status_code == 404


def test_the_query_box_shows_the_chats_context_block_and_each_paths_rank(client: Client) -> None:
    install()
    body = client.get("/knowledge/", {"ask": "猫猫拳是什么意思", "lang": "zh"}).content.decode()
    result = body.split('data-testid="knowledge-query-result"', 1)[1].split("</p>", 1)[0]
    assert "matched" in result
    context = body.split('data-testid="knowledge-context">', 1)[1].split("</pre>", 1)[0]
    assert "======以下为本地公共知识参考======" in context and "- [猫猫拳]" in context
    first = body.split('data-testid="knowledge-query-hit"', 1)[1].split("</tr>", 1)[0]
    assert "猫猫拳" in first and "#1" in first  # the exact path names it first


def test_a_disabled_entry_never_reaches_the_query_box(client: Client) -> None:
    install()
    client.post(
        "/knowledge/entry/disabled/", {"pack_id": "neko-memes", "title": "猫猫拳", "disabled": "true"}
    )
    body = client.get("/knowledge/", {"ask": "猫猫拳", "lang": "zh"}).content.decode()
    assert "- [猫猫拳]" not in body


def test_a_query_naming_an_entry_shows_it_first_on_the_exact_path(client: Client) -> None:
    install()
    body = client.get("/knowledge/", {"ask": "猫猫拳", "lang": "en"}).content.decode()
    first = body.split('data-testid="knowledge-query-hit"', 1)[1].split("</tr>", 1)[0]
    cells = [cell.split("</td>", 1)[0] for cell in first.split("<td>")[1:]]
    assert "猫猫拳" in cells[1]
    assert cells[3] == "#1"  # the exact column
    assert "- [猫猫拳]" in body.split('data-testid="knowledge-context">', 1)[1]


def test_the_wire_query_carries_no_ranks(client: Client) -> None:
    """Ranks are the query box's; the chat's answer keeps the original's fields."""
    from knowledge.services import knowledge_query

    install()
    assert "ranks" not in knowledge_query(query="猫猫拳", language="zh")
    assert knowledge_query(query="猫猫拳", language="zh", explain=True)["ranks"][0]["exact"] == 1


def test_the_preview_says_when_the_store_has_no_room_for_the_pack(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    install()
    monkeypatch.setattr("knowledge.services.validation.MAX_PACKS", 1)
    other = pack_payload()
    other["pack_id"] = "neko-more"
    body = client.post(
        "/knowledge/preview/", {"pack": upload(pack_bytes(other)), "lang": "zh"}
    ).content.decode()
    assert escape(reason_text("capacity_packs", "zh")) in body and 'data-importable="false"' in body
    # A new version of an installed pack takes its place: no room is needed.
    payload = pack_payload()
    payload["entries"][0]["summary"] = "新的摘要"
    again = client.post("/knowledge/preview/", {"pack": upload(pack_bytes(payload))}).content.decode()
    assert 'data-importable="true"' in again and "猫猫拳" in again.split('data-testid="preview-changed">')[1]


def test_the_preview_says_when_the_same_pack_is_already_being_imported(client: Client) -> None:
    client.post("/knowledge/import/", {"pack": upload(pack_bytes())})
    payload = pack_payload()
    payload["entries"][0]["summary"] = "新的摘要"
    body = client.post(
        "/knowledge/preview/", {"pack": upload(pack_bytes(payload)), "lang": "pt"}
    ).content.decode()
    assert escape(reason_text("job_in_progress", "pt")) in body


def test_a_hostile_page_cannot_switch_knowledge_off() -> None:
    install()
    guarded = Client(enforce_csrf_checks=True)
    cross_site = guarded.post(
        "/knowledge/settings/", {"enabled": "false"}, HTTP_ORIGIN="https://evil.example"
    )
    assert cross_site.status_code == 403
    no_token = guarded.post("/knowledge/settings/", {"enabled": "false"})
    assert no_token.status_code == 403
    assert selectors.knowledge_store().enabled is True


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["knowledge", "Knowledge", "KNOWLEDGE"])
def test_a_character_cannot_be_named_like_the_knowledge_page(internal_client: Client, name: str) -> None:
    """The page keeps the original's top-level ``/knowledge/``: the name is reserved, with a 4xx that
    says why, so no character's routes or folder can shadow it."""
    answer = internal_client.get(f"/new_dialog/{name}")
    assert answer.status_code == 400
    assert answer.json()["error_code"] == "invalid_character_name" and "reserved" in answer.json()["message"]
    assert internal_client.get(f"/browse/{name}/").status_code == 404
    assert Client().get("/knowledge/").status_code == 200
