"""The index reads the store a few entries at a time (so a background build pauses between reads), each
entry with its own chunks, in order, disabled entries left out."""

from __future__ import annotations

import pytest

from knowledge import search_selectors, services
from knowledge.search import entry_chunks
from knowledge.search.types import ENTRIES_PER_READ
from tests.knowledge.factories import pack_bytes, pack_dict

pytestmark = pytest.mark.django_db

COUNT = ENTRIES_PER_READ * 2 + 7  # three reads, the last one short


def _content(at: int) -> str:
    # Long enough for several chunks, every word naming its entry.
    paragraphs = (" ".join(f"w{at}x{word}" for word in range(part, part + 60)) for part in range(0, 480, 60))
    return "\n\n".join(paragraphs)


def test_entries_read_in_blocks_keep_their_own_chunks_in_order_and_leave_disabled_ones_out() -> None:
    pack = pack_dict(pack_id="blocks.test", entries=COUNT)
    for at, entry in enumerate(pack["entries"]):
        entry["content"] = _content(at)
    services.knowledge_pack_install(raw=pack_bytes(pack))
    # The first entry of the second read, and the last entry of all.
    for at in (ENTRIES_PER_READ, COUNT - 1):
        services.knowledge_entry_disabled_set(pack_id="blocks.test", title=f"Entry {at}", disabled=True)
    entries = list(search_selectors.knowledge_search_entries())
    kept = [at for at in range(COUNT) if at not in (ENTRIES_PER_READ, COUNT - 1)]
    assert [entry.title for entry in entries] == [f"Entry {at}" for at in kept]
    for at, entry in zip(kept, entries, strict=True):
        expected = entry_chunks(title=entry.title, summary=entry.summary, content=_content(at))
        assert len(expected) > 1
        assert [chunk.ordinal for chunk in entry.chunks] == list(range(len(expected)))
        assert [chunk.text for chunk in entry.chunks] == expected
