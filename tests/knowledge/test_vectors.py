"""The background vector fill: small batches from the kernel's model, never a load of its own."""

from __future__ import annotations

import pytest

from knowledge import search_selectors, selectors, services
from knowledge.models import IndexBatch, KnowledgeChunk, KnowledgeImport
from nekomem.embeddings import get_embedder
from tests.knowledge.factories import fixture_pack, pack_bytes

pytestmark = pytest.mark.django_db


def install() -> None:
    job = services.knowledge_import_submit(raw=pack_bytes(fixture_pack()))
    services.knowledge_import_run(import_id=KnowledgeImport.objects.get(job_id=job["job_id"]).pk)


def test_fill_stores_vectors_in_batches_and_records_them():
    install()
    embedder = get_embedder()
    assert embedder is not None, "the test model is needed"
    before = selectors.knowledge_store_version()
    tried = services.knowledge_vectors_fill(batch=1)
    assert tried == KnowledgeChunk.objects.count() == 2
    assert IndexBatch.objects.count() == 2
    assert set(IndexBatch.objects.values_list("stored", flat=True)) == {1}
    pack = selectors.knowledge_packs_list()[0]
    assert (pack["chunks_ready"], pack["vector_state"]) == (2, "complete")
    assert selectors.knowledge_store_version() != before
    assert selectors.knowledge_status()["indexed_percent"] == 100.0
    entries = list(search_selectors.knowledge_search_entries())
    assert all(chunk.vector is not None for entry in entries for chunk in entry.chunks)
    answer = services.knowledge_query(query="a prank with a music video", budget_ms=5000, language="en")
    assert answer["retrieval_mode"] == "hybrid"
    # Nothing is left to fill.
    assert services.knowledge_vectors_fill() == 0


def test_pack_with_local_embedding_off_is_skipped_and_turning_it_on_resets_failures():
    install()
    get_embedder()
    services.knowledge_pack_local_embedding_set(pack_id="memes.test", enabled=False)
    assert services.knowledge_vectors_fill() == 0
    assert selectors.knowledge_packs_list()[0]["vector_state"] == "off"
    KnowledgeChunk.objects.update(attempts=3, failed=True)
    services.knowledge_pack_local_embedding_set(pack_id="memes.test", enabled=True)
    assert not KnowledgeChunk.objects.filter(failed=True).exists()
    assert services.knowledge_vectors_fill() == 2


def test_fill_waits_while_knowledge_is_switched_off():
    install()
    get_embedder()
    services.knowledge_enabled_set(enabled=False)
    assert services.knowledge_vectors_fill() == 0
    assert selectors.knowledge_packs_list()[0]["vector_state"] == "paused"


def test_a_fill_moves_only_the_vectors_part_of_the_store_version():
    install()
    get_embedder()
    entries_part = selectors.knowledge_store_version().split("#")[0]
    services.knowledge_vectors_fill()
    after = selectors.knowledge_store_version()
    assert after.split("#")[0] == entries_part and after.split("#")[1] != "0"


def test_the_fill_task_goes_on_past_one_round_until_every_chunk_has_its_vector():
    install()
    tried = services.knowledge_vectors_fill_until_done(round_chunks=1)
    assert tried == KnowledgeChunk.objects.count() == 2
    assert selectors.knowledge_packs_list()[0]["vector_state"] == "complete"
