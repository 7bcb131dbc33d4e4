"""characters.json → characters, the master's name and protected card entries (reference §12)."""

from __future__ import annotations

import json
import os

import pytest

from install.characters import card_value, parse_characters
from nekomem.characters.models import Character
from persona.models import PersonaEntry
from persona.services.records import card_entry_id

pytestmark = pytest.mark.django_db


def characters_file(root):
    return root / "config" / "characters.json"


def edit_characters(root, change) -> None:
    path = characters_file(root)
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def card_order(character) -> list[str | None]:
    cards = PersonaEntry.objects.filter(character=character, section="neko", source="character_card")
    return [e.source_id for e in cards.order_by("position")]


def new_dialog(client, name="小天") -> str:
    response = client.get(f"/new_dialog/{name}")
    assert response.status_code == 200
    return response.content.decode()


def test_card_values_follow_the_originals_rules():
    assert card_value(["晒太阳", " ", "读书"]) == "晒太阳、读书"
    assert card_value({"a": 1}) is None and card_value(set()) is None and card_value("  ") is None
    install = parse_characters({"猫娘": {"小天": {"name": "x", "描述": "y", "性格": "温柔"}}})
    assert install.cards == {"小天": {"性格": "温柔"}} and install.master_name == "主人"


def test_every_character_of_the_file_exists_with_its_card(client, neko_root):
    text = new_dialog(client)
    assert set(Character.objects.values_list("name", flat=True)) == {"小天", "小白"}
    xiaotian = Character.objects.get(name="小天")
    assert xiaotian.master_name == "阿凛"
    for line in (
        "性格: 温柔又有点傲娇",
        "爱好: 晒太阳、读推理小说",
        "口头禅: 喵呜",
        "昵称: 凛凛、小凛",
        "性别: 女",
    ):
        assert line in text
    assert "小天和阿凛从小一起长大" in text and "__ai_context" not in text
    for hidden in ("xiaotian", "voice-123", "你是小天", "一只橘猫娘", "发色", "生日", "档案名"):
        assert hidden not in text
    entry = PersonaEntry.objects.get(character=xiaotian, entry_id=card_entry_id("neko", "性格"))
    assert entry.protected and entry.source == "character_card"
    neko_cards = PersonaEntry.objects.filter(character=xiaotian, section="neko", source="character_card")
    assert [e.source_id for e in neko_cards.order_by("position")] == [
        "性格",
        "爱好",
        "口头禅",
        "__ai_context.关系",
    ]
    assert "喜欢的食物: 鱼干、牛奶" in new_dialog(client, "小白")


def test_an_edited_card_and_a_removed_field_show_in_the_next_new_dialog(client, neko_root):
    new_dialog(client)
    xiaotian = Character.objects.get(name="小天")
    entry = PersonaEntry.objects.get(character=xiaotian, entry_id=card_entry_id("neko", "性格"))
    PersonaEntry.objects.filter(pk=entry.pk).update(
        token_count=7, token_count_text_sha256="stale", embedding="AAAA", embedding_text_sha256="old"
    )

    def change(data):
        card = data["猫娘"]["小天"]
        card["性格"] = "开朗活泼"
        del card["口头禅"]
        card = {"新字段": "在中间", **card}
        data["猫娘"]["小天"] = card

    edit_characters(neko_root, change)
    text = new_dialog(client)
    assert "性格: 开朗活泼" in text and "温柔又有点傲娇" not in text
    assert "口头禅" not in text and "喵呜" not in text
    entry.refresh_from_db()
    assert entry.text == "性格: 开朗活泼" and entry.token_count_text_sha256 != "stale"
    assert entry.embedding == "" and entry.embedding_text_sha256 == ""
    assert not PersonaEntry.objects.filter(
        character=xiaotian, entry_id=card_entry_id("neko", "口头禅")
    ).exists()
    neko_cards = PersonaEntry.objects.filter(character=xiaotian, section="neko", source="character_card")
    assert [e.source_id for e in neko_cards.order_by("position")] == [
        "新字段",
        "性格",
        "爱好",
        "__ai_context.关系",
    ]


def test_a_new_master_name_reaches_every_character(client, neko_root):
    new_dialog(client)
    edit_characters(neko_root, lambda data: data["主人"].update({"档案名": "小凛"}))
    new_dialog(client)
    assert set(Character.objects.values_list("master_name", flat=True)) == {"小凛"}


def test_a_half_written_file_keeps_the_last_good_copy_and_says_so(client, internal_client, neko_root):
    new_dialog(client)
    stored = {c.name: (c.card, c.master_name) for c in Character.objects.all()}
    path = characters_file(neko_root)
    whole = path.read_text(encoding="utf-8")
    path.write_text(whole[: len(whole) // 2], encoding="utf-8")
    text = new_dialog(client)
    assert "性格: 温柔又有点傲娇" in text
    assert {c.name: (c.card, c.master_name) for c in Character.objects.all()} == stored
    install = internal_client.get("/api/v1/status/").json()["install"]
    assert install["characters_ok"] is False and "JSONDecodeError" in install["characters_error"]
    assert install["characters"] == ["小天", "小白"]

    path.write_text(whole.replace("温柔又有点傲娇", "终于写完了"), encoding="utf-8")
    assert "性格: 终于写完了" in new_dialog(client)
    assert internal_client.get("/api/v1/status/").json()["install"]["characters_ok"] is True


def test_a_character_that_left_the_file_is_kept_and_reported(client, internal_client, neko_root):
    new_dialog(client, "小白")
    edit_characters(neko_root, lambda data: data["猫娘"].pop("小白"))
    new_dialog(client)
    assert Character.objects.filter(name="小白").exists()
    install = internal_client.get("/api/v1/status/").json()["install"]
    assert install["vanished"] == ["小白"] and install["characters"] == ["小天"]
    page = client.get("/").content.decode()
    assert 'data-testid="install-vanished"' in page and "小白" in page


def rename_character(data, old, new):
    data["猫娘"] = {(new if name == old else name): card for name, card in data["猫娘"].items()}


def test_a_rename_in_the_main_server_takes_the_memory_along(client, internal_client, neko_root):
    new_dialog(client, "小白")
    xiaobai = Character.objects.get(name="小白")
    edit_characters(neko_root, lambda data: rename_character(data, "小白", "小黑"))
    assert "喜欢的食物: 鱼干、牛奶" in new_dialog(client, "小黑")
    assert Character.objects.get(name="小黑").pk == xiaobai.pk
    assert not Character.objects.filter(name="小白").exists()
    assert internal_client.get("/api/v1/status/").json()["install"]["vanished"] == []


def test_a_removal_then_a_new_character_is_no_rename(client, neko_root):
    new_dialog(client)
    edit_characters(neko_root, lambda data: data["猫娘"].pop("小白"))
    new_dialog(client)
    edit_characters(neko_root, lambda data: data["猫娘"].update({"小黑": {"性格": "好奇"}}))
    new_dialog(client)
    assert set(Character.objects.values_list("name", flat=True)) == {"小天", "小白", "小黑"}


def test_a_rename_onto_a_name_we_already_hold_merges_nothing(client, neko_root):
    new_dialog(client)
    other = Character.objects.create(name="小黑")
    edit_characters(neko_root, lambda data: rename_character(data, "小白", "小黑"))
    new_dialog(client)
    assert Character.objects.filter(name="小白").exists()
    assert Character.objects.get(name="小黑").pk == other.pk


def test_an_unchanged_file_is_not_read_again(client, neko_root):
    new_dialog(client)
    path = characters_file(neko_root)
    Character.objects.filter(name="小天").update(master_name="手改的")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    new_dialog(client)
    assert Character.objects.get(name="小天").master_name == "手改的"


def test_get_persona_shows_an_edited_card(client, neko_root):
    client.get("/get_persona/小天")
    edit_characters(neko_root, lambda data: data["猫娘"]["小天"].update({"性格": "开朗活泼"}))
    persona = json.dumps(client.get("/get_persona/小天").json(), ensure_ascii=False)
    assert "性格: 开朗活泼" in persona and "温柔又有点傲娇" not in persona


def test_standalone_reads_no_install(client, settings):
    assert settings.NEKOMEM_NEKO_ROOT is None
    assert client.get("/api/v1/status/").json()["install"] is None
