"""Isolation over random subjects and texts (issue 34): no unscoped route, selector, pool, browser page
or export returns a subject's row, and no subject's route or page returns another subject's."""

from __future__ import annotations

import itertools
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from facts.models import Fact
from nekomem.characters.models import Character
from nekomem.subjects import SUBJECT_KINDS
from persona.models import PersonaCorrection, PersonaEntry
from persona.services import persona_promote_tick
from reflections.models import Reflection
from reflections.services import reflections_subjects_synthesize
from tests.groupchat.test_scoped_routes import post, store
from tests.persona.factories import make_entry
from tests.reflections.test_synthesis import synthesis_reply

pytestmark = pytest.mark.django_db

_ids = st.integers(min_value=1, max_value=10**9).map(str)


@st.composite
def subjects(draw: Any) -> dict[str, str]:
    kind = draw(st.sampled_from(SUBJECT_KINDS))
    parts = [draw(_ids)] + ([draw(_ids)] if kind == "group_participant" else [])
    return {"subject_kind": kind, "subject_id": ":".join(["qq", *parts])}


_prose = st.text(st.characters(categories=["L", "N", "Zs", "P"]), min_size=0, max_size=30)
_markers = st.text(alphabet="bcdfghjkmnpqrstvwxz", min_size=8, max_size=12).map(lambda s: "zx" + s)


# Examples share the database, so each marker ends in a serial between two letters the alphabet lacks:
# no marker is then part of another (of this example or an earlier one).
_serial = itertools.count()


def unique(marker: str) -> str:
    return f"{marker}y{next(_serial):06d}y"


PRIVATE_PAGES = [
    "/browse/Mio/",
    *(f"/browse/Mio/{layer}/" for layer in ("facts", "reflections", "persona", "recent", "recall")),
]


def key_of(subject: dict[str, str]) -> str:
    return f"{subject['subject_kind']}:{subject['subject_id']}"


def recall(client: Any, body: dict[str, Any]) -> str:
    answer = client.post("/query_memory/Mio", data=json.dumps(body), content_type="application/json")
    assert answer.status_code == 200
    return json.dumps(answer.json()["results"], ensure_ascii=False)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(one=subjects(), other=subjects(), prose=_prose, marker=_markers, other_marker=_markers)
def test_no_route_leaks_a_subject(
    internal_client: Any,
    llm_server: Any,
    tmp_path: Path,
    one: dict,
    other: dict,
    prose: str,
    marker: str,
    other_marker: str,
) -> None:
    if key_of(one) == key_of(other):
        return
    marker, other_marker = unique(marker), unique(other_marker)
    assert store(internal_client, one, f"{prose} {marker}".strip()).status_code == 200
    assert store(internal_client, other, f"{other_marker} {prose}".strip()).status_code == 200
    mio = Character.objects.get(name="Mio")
    make_entry(character=mio, section=f"@subject/{key_of(one)}", text=f"persona {marker}")
    # Enough facts about ``one`` for a synthesised reflection (through the loopback LLM), which is then
    # promoted by age into its persona section: neither may reach an unscoped read or another subject.
    assert store(internal_client, one, *(f"{marker} 第{i}件事" for i in range(4))).status_code == 200

    def synthesis(request: Any) -> Any:
        prompt = request["messages"][0]["content"]
        return synthesis_reply(f"反思 {marker}" if marker in prompt else "群里的一个印象")

    llm_server.fallback = synthesis
    reflections_subjects_synthesize(character_id=mio.pk)
    assert Reflection.with_subjects.filter(text=f"反思 {marker}", subject_key=key_of(one)).exists()
    own = post(internal_client, "scoped_context", {"subjects": [one]}).content.decode()
    assert f"反思 {marker}" in own
    promoted = persona_promote_tick(character_id=mio.pk, now=timezone.now() + timedelta(days=8)).outcomes
    reflection_id = Reflection.with_subjects.get(text=f"反思 {marker}").reflection_id
    # Into the subject's own section, or (it shares the marker with "persona …") a correction kept there.
    assert promoted[reflection_id] in ("promoted", "queued_correction")
    assert not PersonaCorrection.objects.filter(new_text__contains=marker).exists()

    # Unscoped: routes, pools and selectors (the default managers) never see either subject.
    for leak in (marker, other_marker):
        assert leak not in internal_client.get("/new_dialog/Mio").content.decode()
        assert leak not in json.dumps(internal_client.get("/get_persona/Mio").json(), ensure_ascii=False)
        assert leak not in recall(internal_client, {"query": leak})
        assert not Fact.objects.filter(text__contains=leak).exists()
        assert not PersonaEntry.objects.filter(text__contains=leak).exists()
        assert not Reflection.objects.filter(text__contains=leak).exists()
        # The memory browser's pages in their default (private) view.
        for path in PRIVATE_PAGES:
            assert leak not in internal_client.get(path).content.decode(), path

    # A subject's routes see that subject only.
    assert marker in recall(internal_client, {"query": marker, "subjects": [key_of(one)]})
    assert marker not in recall(internal_client, {"query": marker, "subjects": [other]})
    assert other_marker not in recall(internal_client, {"query": other_marker, "subjects": [one]})
    context = post(internal_client, "scoped_context", {"subjects": [other]}).content.decode()
    assert marker not in context and other_marker not in context  # facts are never rendered there
    own = post(internal_client, "scoped_context", {"subjects": [one]}).content.decode()
    assert f"persona {marker}" in own and f"反思 {marker}" in own
    # A subject's view of a layer page holds that subject's rows, never the other's.
    for layer in ("facts", "persona"):
        mine = internal_client.get(f"/browse/Mio/{layer}/", {"subject": key_of(one)}).content.decode()
        theirs = internal_client.get(f"/browse/Mio/{layer}/", {"subject": key_of(other)}).content.decode()
        assert marker in mine and other_marker not in mine
        assert marker not in theirs

    # Export carries them, under their subject fields.
    out = tmp_path / marker
    call_command("export_memory", str(out), "--character", "Mio")
    exported = {f["text"]: f for f in json.loads((out / "Mio" / "facts.json").read_text(encoding="utf-8"))}
    row = next(f for text, f in exported.items() if marker in text)
    assert (row["subject_kind"], row["subject_id"]) == (one["subject_kind"], one["subject_id"])
