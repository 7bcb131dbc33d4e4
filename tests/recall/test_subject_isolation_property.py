"""Isolation over random subjects and texts (issue 34): no unscoped route, selector, pool, browser page
or export returns a subject's row, and no subject's route or page returns another subject's."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from facts.models import Fact
from nekomem.characters.models import Character
from nekomem.subjects import SUBJECT_KINDS
from persona.models import PersonaEntry
from reflections.models import Reflection
from tests.persona.factories import make_entry
from tests.recall.test_scoped_routes import post, store

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
    internal_client: Any, tmp_path: Path, one: dict, other: dict, prose: str, marker: str, other_marker: str
) -> None:
    if key_of(one) == key_of(other):
        return
    marker, other_marker = unique(marker), unique(other_marker)
    assert store(internal_client, one, f"{prose} {marker}".strip()).status_code == 200
    assert store(internal_client, other, f"{other_marker} {prose}".strip()).status_code == 200
    mio = Character.objects.get(name="Mio")
    make_entry(character=mio, section=f"@subject/{key_of(one)}", text=f"persona {marker}")

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
    assert f"persona {marker}" in own
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
