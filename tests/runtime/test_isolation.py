"""No character ever sees another's rows: 50 characters with nearly identical memories.

Every character's turns, facts, archived facts, reflections (pending, confirmed and surfaced) and
persona entries say the same thing but for one marker (``M07Q`` for the eighth). Each route,
selector, recall pool, export and memory-browser page is asked for each character, and may only ever
return that character's own marker.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from facts.selectors import fact_list
from nekomem.characters.models import Character
from recall.selectors import recall_pools
from recent.selectors import raw_log_between, recent_window
from tests.facts.factories import make_fact
from tests.persona.factories import make_entry
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db

CHARACTERS = 50
MARKER = re.compile(r"M\d{2}Q")
SHARED = "主人说最喜欢草莓蛋糕和周末爬山"


def name_of(i: int) -> str:
    return f"猫娘{i:02d}"


def marker_of(i: int) -> str:
    return f"M{i:02d}Q"


# A page's CSRF token is random letters and digits, and now and then holds a marker-shaped run.
CSRF_TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')


def markers_in(text: str) -> set[str]:
    return set(MARKER.findall(CSRF_TOKEN.sub("", text)))


@pytest.fixture
def fifty_characters(client) -> list[tuple[str, str, int]]:
    made = []
    for i in range(CHARACTERS):
        name, marker = name_of(i), marker_of(i)
        turn = [
            {"type": "human", "data": {"content": f"{SHARED}，记号 {marker}"}},
            {"type": "ai", "data": {"content": f"记住了：{SHARED} {marker}"}},
        ]
        body = json.dumps({"input_history": json.dumps(turn, ensure_ascii=False)})
        assert client.post(f"/cache/{name}", data=body, content_type="application/json").status_code == 200
        character = Character.objects.get(name=name)
        make_fact(character=character, text=f"{SHARED}（{marker}）")
        make_fact(character=character, text=f"主人以前{SHARED}（{marker}）", archived=True)
        make_reflection(character=character, text=f"主人很在意{SHARED}（{marker}）")
        make_reflection(character=character, text=f"主人一直{SHARED}（{marker}）", status="confirmed")
        make_entry(character=character, text=f"主人的爱好：{SHARED}（{marker}）")
        made.append((name, marker, character.pk))
    return made


def test_no_route_selector_pool_or_export_returns_another_characters_row(client, fifty_characters, tmp_path):
    call_command("export_memory", str(tmp_path))
    for name, marker, character_id in fifty_characters:
        own = {marker}
        seen = {
            "new_dialog": client.get(f"/new_dialog/{name}").content.decode(),
            "get_recent_history": client.get(f"/get_recent_history/{name}").content.decode(),
            "query_memory": client.post(
                f"/query_memory/{name}",
                data=json.dumps({"query": "草莓蛋糕 爬山"}),
                content_type="application/json",
            ).content.decode(),
            "api facts": client.get(f"/api/v1/characters/{name}/facts/?limit=1000").content.decode(),
            "api raw": client.get(f"/api/v1/characters/{name}/raw/?limit=1000").content.decode(),
            "api recent": client.get(f"/api/v1/characters/{name}/recent/?limit=1000").content.decode(),
            "api window": client.get(f"/api/v1/characters/{name}/recent/window/").content.decode(),
            "fact_list": " ".join(f.text for f in fact_list(character_id=character_id)),
            "raw_log_between": " ".join(r.message for r in raw_log_between(character_id=character_id)),
            "recent_window": " ".join(json.dumps(m.data) for m in recent_window(character_id=character_id)),
            "recall_pools": " ".join(c.text for c in recall_pools(character_id=character_id, space=None)),
            "followup_topics": client.get(f"/followup_topics/{name}").content.decode(),
            "get_settings": client.get(f"/get_settings/{name}").json(),
            "get_persona": client.get(f"/get_persona/{name}").content.decode(),
            "api reflections": client.get(
                f"/api/v1/characters/{name}/reflections/?limit=1000"
            ).content.decode(),
            "api persona": client.get(f"/api/v1/characters/{name}/persona/entries/").content.decode(),
            "browse facts": client.get(f"/browse/{name}/facts/").content.decode(),
            "browse reflections": client.get(f"/browse/{name}/reflections/").content.decode(),
            "browse persona": client.get(f"/browse/{name}/persona/").content.decode(),
            "browse recent": client.get(f"/browse/{name}/recent/").content.decode(),
            "browse recall": client.get(f"/browse/{name}/recall/", {"q": "草莓蛋糕 爬山"}).content.decode(),
            "export": " ".join(
                path.read_text(encoding="utf-8") for path in sorted(Path(tmp_path / name).rglob("*.json"))
            ),
        }
        for where, text in seen.items():
            found = markers_in(text)
            assert found <= own, f"{where} of {name} returned {sorted(found - own)}"
        # Each check saw this character's own rows: an empty answer would pass the check above.
        for where in (
            "query_memory",
            "api facts",
            "api raw",
            "fact_list",
            "recall_pools",
            "export",
            "new_dialog",
            "get_persona",
            "api reflections",
            "api persona",
            "browse facts",
            "browse reflections",
            "browse persona",
            "browse recent",
            "browse recall",
        ):
            assert marker in seen[where], f"{where} of {name} lost its own rows"
