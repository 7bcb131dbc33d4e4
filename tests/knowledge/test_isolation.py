"""Knowledge is not memory: none of its text reaches /new_dialog, /query_memory or a character's export."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledge import services
from tests.characters.factories import CharacterFactory
from tests.knowledge.factories import pack_bytes, pack_dict

NAME = "Mio"
# A marker that cannot occur by chance in any rendered memory: letters only, long.
markers = st.text(alphabet=string.ascii_lowercase, min_size=12, max_size=20).map(lambda s: "kq" + s)


def folder_text(folder: Path) -> str:
    return "".join(
        path.read_text(encoding="utf-8", errors="replace") for path in folder.rglob("*") if path.is_file()
    )


@pytest.mark.django_db
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(marker=markers)
def test_no_knowledge_text_reaches_memory(
    marker: str, tmp_path_factory, django_capture_on_commit_callbacks
) -> None:
    character = CharacterFactory.create(name=f"{NAME}{len(marker)}{marker[2:5]}")
    pack = pack_dict(pack_id="iso.pack")
    pack["entries"] = [
        {
            "title": f"{marker} title",
            "summary": f"{marker} summary",
            "content": f"{marker} content",
            "terms": {"alias": [marker]},
            "tags": [f"tag:{marker}"],
        }
    ]
    with django_capture_on_commit_callbacks(execute=True):  # the index is refreshed as on a commit
        services.knowledge_pack_install(raw=pack_bytes(pack))
    assert services.knowledge_query(query=marker)["result"] == "matched"
    client = Client()
    dialog = client.get(f"/new_dialog/{character.name}")
    assert dialog.status_code == 200 and marker not in dialog.content.decode()
    recalled = client.post(
        f"/query_memory/{character.name}", data=json.dumps({"query": marker}), content_type="application/json"
    )
    # The answer echoes nothing of the query but its results: none may carry the pack's text.
    assert recalled.status_code == 200 and marker not in json.dumps(recalled.json()["results"])
    out = tmp_path_factory.mktemp("export")
    call_command("export_memory", str(out), "--character", character.name, verbosity=0)
    assert any(out.rglob("*")) and marker not in folder_text(out)
    with django_capture_on_commit_callbacks(execute=True):
        services.knowledge_pack_remove(pack_id="iso.pack")
