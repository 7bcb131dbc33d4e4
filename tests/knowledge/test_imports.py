"""Import jobs: queued → building → active | failed | cancelled; the previous version keeps answering."""

from __future__ import annotations

import pytest

from knowledge import search_selectors, selectors, services
from knowledge.models import ImportState, KnowledgeEntry, KnowledgeImport, KnowledgePack, PackVersion
from tests.knowledge.factories import fixture_pack, pack_bytes, pack_dict

pytestmark = pytest.mark.django_db


def titles() -> list[str]:
    return [item["title"] for item in selectors.knowledge_entries_list()["items"]]


def test_queued_job_cancelled_never_lands():
    job = services.knowledge_import_submit(raw=pack_bytes(fixture_pack()))
    assert job["state"] == "queued"
    assert services.knowledge_import_cancel(job_id=job["job_id"]) is True
    row = KnowledgeImport.objects.get(job_id=job["job_id"])
    assert services.knowledge_import_run(import_id=row.pk) == "busy"
    assert KnowledgePack.objects.count() == 0 and PackVersion.objects.count() == 0
    assert [j["state"] for j in selectors.knowledge_jobs_list()] == ["cancelled"]
    assert row.__class__.objects.get(pk=row.pk).staged is None
    # Cancel only before the switch; discard only a finished job.
    assert services.knowledge_import_cancel(job_id=job["job_id"]) is False
    assert services.knowledge_import_discard(job_id=job["job_id"]) is True


def test_running_job_cannot_be_discarded_and_finished_cannot_be_cancelled():
    job = services.knowledge_import_submit(raw=pack_bytes(fixture_pack()))
    assert services.knowledge_import_discard(job_id=job["job_id"]) is False
    row = KnowledgeImport.objects.get(job_id=job["job_id"])
    assert services.knowledge_import_run(import_id=row.pk) == ImportState.ACTIVE
    assert services.knowledge_import_cancel(job_id=job["job_id"]) is False
    assert titles() == ["芝士雪豹", "Rickroll"]


def test_failed_import_keeps_the_previous_version():
    first = services.knowledge_import_submit(raw=pack_bytes(fixture_pack()))
    services.knowledge_import_run(import_id=KnowledgeImport.objects.get(job_id=first["job_id"]).pk)
    installed = KnowledgePack.objects.get().version_id
    changed = fixture_pack()
    changed["entries"] = changed["entries"][:1]
    second = services.knowledge_import_submit(raw=pack_bytes(changed))
    # The staged pack was damaged after it was admitted: the build refuses it.
    KnowledgeImport.objects.filter(job_id=second["job_id"]).update(staged=b'{"schema_version": 1}')
    state = services.knowledge_import_run(import_id=KnowledgeImport.objects.get(job_id=second["job_id"]).pk)
    assert state == ImportState.FAILED
    job = KnowledgeImport.objects.get(job_id=second["job_id"])
    assert job.reason == "unexpected_pack_field"
    assert KnowledgePack.objects.get().version_id == installed
    assert titles() == ["芝士雪豹", "Rickroll"]
    assert PackVersion.objects.count() == 1


def test_reimport_replaces_the_version_in_one_switch_and_bumps_the_store():
    first = services.knowledge_import_submit(raw=pack_bytes(fixture_pack()))
    services.knowledge_import_run(import_id=KnowledgeImport.objects.get(job_id=first["job_id"]).pk)
    before = selectors.knowledge_store_version()
    changed = fixture_pack()
    changed["entries"][1]["title"] = "Rick roll (prank)"
    second = services.knowledge_import_submit(raw=pack_bytes(changed))
    services.knowledge_import_run(import_id=KnowledgeImport.objects.get(job_id=second["job_id"]).pk)
    assert titles() == ["芝士雪豹", "Rick roll (prank)"]
    assert PackVersion.objects.count() == 1 and KnowledgeEntry.objects.count() == 2
    assert selectors.knowledge_store_version() != before


def test_a_version_being_built_is_invisible():
    version = PackVersion.objects.create(
        pack_id="half.built",
        sha256="0" * 64,
        canonical=b"{}",
        declared_material_type="knowledge",
        source_name="s",
    )
    KnowledgeEntry.objects.create(version=version, ordinal=0, title="Hidden", title_key="hidden", content="x")
    assert titles() == []
    assert list(search_selectors.knowledge_search_entries()) == []
    assert selectors.knowledge_availability()["tool_available"] is False


def test_capacity_is_checked_at_admission():
    job = services.knowledge_import_submit(raw=pack_bytes(pack_dict(pack_id="many.pack", entries=3)))
    assert job["chunks_total"] == 3
    answer = services.knowledge_pack_install(raw=pack_bytes(pack_dict(pack_id="other.pack")))
    assert answer.version is not None and answer.version.entries_total == 2


def test_install_keeps_the_given_state_and_search_entries_skip_disabled():
    state = services.PackState(material_type_override="corpus", disabled_titles=("Rickroll",))
    pack = services.knowledge_pack_install(raw=pack_bytes(fixture_pack()), state=state)
    assert pack.effective_material_type == "corpus" and pack.disabled_titles == ["rickroll"]
    found = list(search_selectors.knowledge_search_entries())
    assert [entry.title for entry in found] == ["芝士雪豹"]
    assert found[0].material_type == "corpus" and found[0].aliases == ("雪豹闭嘴",)
    assert found[0].card_id == "memes.test/芝士雪豹"
    records = selectors.knowledge_pack_records()
    assert records[0].disabled_titles == ("rickroll",) and records[0].canonical.startswith(b"{")


def test_the_tick_reenqueues_a_lost_import_and_drops_an_abandoned_build():
    from datetime import timedelta

    from django.utils import timezone

    job = services.knowledge_import_submit(raw=pack_bytes(fixture_pack()))
    # Its on-commit enqueue never ran (a broker outage): the tick's sweep finds it a minute later.
    long_ago = timezone.now() - timedelta(hours=2)
    KnowledgeImport.objects.filter(job_id=job["job_id"]).update(updated_at=long_ago)
    abandoned = PackVersion.objects.create(
        pack_id="gone.pack",
        sha256="1" * 64,
        canonical=b"{}",
        declared_material_type="corpus",
        source_name="s",
    )
    PackVersion.objects.filter(pk=abandoned.pk).update(created_at=long_ago)
    report = services.knowledge_tick()
    assert report["imports"] == 1
    assert KnowledgeImport.objects.get(job_id=job["job_id"]).state == ImportState.ACTIVE
    assert not PackVersion.objects.filter(pk=abandoned.pk).exists()
    assert titles() == ["芝士雪豹", "Rickroll"]
