"""The complete /new_dialog (reference §5.1): section order, budgets, caps, and the chat server's split."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from persona.models import PersonaEntry
from tests.characters.factories import CharacterFactory
from tests.persona.factories import make_entry
from tests.persona.layout import build
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db

# The chat server's templates (the original's prompt table); it builds one pattern per locale with
# {time} and {name} as lazy wildcards and cuts after the first match.
INNER_THOUGHTS_TEMPLATES = {
    "zh": "现在时间是{time}。开始聊天前，{name}又在脑海内整理了近期发生的事情。",
    "en": "The current time is {time}. Before the conversation begins, {name} is mentally reviewing "
    "recent events.",
}


def chat_server_split(text: str) -> tuple[str, str] | None:
    for template in INNER_THOUGHTS_TEMPLATES.values():
        pattern = (
            re.escape(template).replace(re.escape("{time}"), "(.*?)").replace(re.escape("{name}"), "(.*?)")
        )
        match = re.search(pattern, text)
        if match:
            return text[: match.end()], text[match.end() :]
    return None


@pytest.mark.parametrize(
    ("language", "name", "master", "turn"),
    [
        ("zh", "小天", "阿凛", ("今天好累", "辛苦啦～")),
        ("en", "Tian", "Rin", ("Long day today", "Rest well!")),
    ],
)
def test_the_chat_server_split_finds_the_history(client, post_history, language, name, master, turn):
    character = CharacterFactory(name=name, master_name=master, card={"master": {"nickname": master}})
    make_entry(character=character, text="likes iced coffee 喜欢冰美式")
    post_history("cache", name, ("human", turn[0]), ("ai", turn[1]), language=language)
    text = client.get(f"/new_dialog/{name}", {"language": language}).content.decode()
    split = chat_server_split(text)
    assert split is not None
    inner, history = split
    assert "likes iced coffee" in inner and f"nickname: {master}" in inner
    assert history.strip().splitlines() == [f"{master} | {turn[0]}", f"{name} | {turn[1]}"]


def headers_in(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("###", "======"))]


def test_an_original_directory_renders_in_the_originals_order(client, tmp_path: Path):
    call_command("import_memory", str(build(tmp_path, "小天")))
    text = client.get("/new_dialog/小天", {"language": "zh"}).content.decode()
    assert headers_in(text) == [
        "======小天的长期记忆======",
        "### 关于主人",
        "### 关于小天",
        "### 关系动态",
        "### 小天最近的印象（还不太确定）",
        "### 小天比较确定的印象",
        "======以下为较久远的记忆======",
        "======以上为较久远的记忆======",
        "### 暂不主动提及的内容（小天记得，但最近提到太多次了，不要再主动提起）",
        "======以下是小天的内心活动======",
    ]
    master = text[text.index("### 关于主人") : text.index("### 关于小天")]
    assert master.splitlines()[1:3] == ["- 昵称: 阿凛", "- 主人喜欢喝冰美式"]  # protected first
    assert "团子" not in master  # suppressed: only in the don't-volunteer section
    assert "- 主人那阵子在搬家" not in text and re.search(r"- \[\d+周前\] 主人那阵子在搬家", text)
    suppressed = text[text.index("### 暂不主动提及") : text.index("======以下是小天的内心活动")]
    assert "- 主人养了一只叫团子的猫" in suppressed
    assert "主人以前喜欢集邮" not in text  # archived
    assert PersonaEntry.objects.filter(source="settings").count() == 1  # settings.json was migrated already


def test_english_headers_and_age_labels(client):
    character = CharacterFactory(name="Tian", master_name="Rin", language="en")
    make_entry(character=character, section="neko", text="Tian hums when happy")
    long_ago = timezone.now() - timedelta(days=65)
    make_reflection(
        character=character,
        text="Rin was moving house",
        status="confirmed",
        temporal_scope="episode",
        created_at=long_ago,
    )
    make_reflection(character=character, text="Rin seems to be studying", reinforcement=0.3)
    text = client.get("/new_dialog/Tian").content.decode()
    assert headers_in(text)[:5] == [
        "======Tian's long-term memory======",
        "### About Tian",
        "### Tian's recent impressions (not yet sure)",
        "======Older memories below======",
        "======Older memories above======",
    ]
    assert "- [2 months ago] Rin was moving house" in text


def test_protected_entries_are_capped_and_the_rest_fit_the_budget(client):
    card = {"master": {f"field{n:03d}": f"value {n}" for n in range(100)}}
    character = CharacterFactory(name="小天", card=card)
    now = timezone.now()
    for n in range(300):
        make_entry(
            character=character,
            text=f"主人的第{n}个习惯是" + "认真地" * 20,
            reinforcement=n / 100,
            rein_last_signal_at=now,
        )
    text = client.get("/new_dialog/小天").content.decode()
    assert text.count("- field") == 80
    assert "field079" in text and "field080" not in text
    rendered = [int(m) for m in re.findall(r"主人的第(\d+)个习惯", text)]
    assert rendered and rendered == sorted(rendered, reverse=True) and rendered[0] == 299
    assert len(rendered) < 300  # the 2000-token budget dropped the lowest scores


def test_get_settings_and_get_persona(client, tmp_path: Path):
    call_command("import_memory", str(build(tmp_path, "小天")))
    response = client.get("/get_settings/小天")
    assert response["Content-Type"] == "application/json"
    settings_text = response.json()  # a JSON string, as the original answers
    assert settings_text.startswith("### 关于主人") and "长期记忆" not in settings_text
    persona = client.get("/get_persona/小天").json()
    assert list(persona) == ["master", "neko", "relationship", "__meta__"]
    assert persona["master"]["facts"][0]["protected"] is True
    assert client.get("/get_persona/nobody").json() == {}


def test_get_settings_falls_back_to_the_legacy_settings(client, tmp_path: Path):
    folder = tmp_path / "Mio"
    folder.mkdir()
    (folder / "settings.json").write_text('{"master": {"生日": "三月"}}', encoding="utf-8")
    call_command("import_memory", str(tmp_path))
    assert client.get("/get_persona/Mio").json()["master"]["facts"][0]["source"] == "settings"
    PersonaEntry.objects.all().delete()  # the migrated entry went away by hand; nothing else is left
    assert client.get("/get_settings/Mio").json() == "Mio记得：生日: 三月"
