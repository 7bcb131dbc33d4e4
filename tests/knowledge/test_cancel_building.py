"""A cancel while the import builds: the switch never happens and the previous version keeps answering."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections

from knowledge import selectors, services
from knowledge.models import ImportState, KnowledgeImport, PackVersion
from nekomem.characters.locks import store_lock
from tests.knowledge.factories import fixture_pack, pack_bytes

pytestmark = pytest.mark.django_db(transaction=True)


def test_cancel_during_building_drops_the_new_rows():
    services.knowledge_pack_install(raw=pack_bytes(fixture_pack()))
    installed = PackVersion.objects.get().pk
    changed = fixture_pack()
    changed["entries"][0]["content"] = "A new explanation."
    # Queued as the import route queues it, but not run at once by the test's inline broker.
    prepared = services.pack_prepare(raw=pack_bytes(changed))
    queued = KnowledgeImport.objects.create(
        pack_id="memes.test",
        entries_total=2,
        chunks_total=prepared.chunks_total,
        staged=prepared.canonical,
        staged_sha256=prepared.sha256,
        staged_bytes=len(prepared.canonical),
    )
    import_id, job = queued.pk, {"job_id": queued.job_id}
    outcome: list[str] = []

    def run() -> None:
        try:
            outcome.append(services.knowledge_import_run(import_id=import_id))
        finally:
            connections.close_all()

    # Holding the store keeps the finished build waiting at its switch, in state "building".
    with store_lock("knowledge", timeout=5) as held:
        assert held
        runner = threading.Thread(target=run)
        runner.start()
        deadline = time.monotonic() + 30
        while not KnowledgeImport.objects.filter(pk=import_id, building__isnull=False).exists():
            assert time.monotonic() < deadline, "the build never reached its switch"
            time.sleep(0.01)
        assert KnowledgeImport.objects.get(pk=import_id).state == ImportState.BUILDING
        assert services.knowledge_import_cancel(job_id=job["job_id"]) is True
    runner.join(60)
    assert outcome == [ImportState.CANCELLED]
    assert list(PackVersion.objects.values_list("pk", flat=True)) == [installed]
    entry = selectors.knowledge_entry_get(pack_id="memes.test", title="芝士雪豹")
    assert entry is not None and entry["content"].startswith("芝士雪豹是")
    assert selectors.knowledge_jobs_list()[0]["state"] == "cancelled"
