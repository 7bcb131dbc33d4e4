"""history.ndjson (history/portability.py): read for what this server knows of it."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from history.portability import read_history
from nekomem.portability import MalformedFile

pytestmark = pytest.mark.django_db


def write_ndjson(path: Path, lines: list[dict]) -> None:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")


def test_a_history_line_a_newer_server_wrote_is_read_for_what_this_one_knows(tmp_path: Path):
    path = tmp_path / "history.ndjson"
    event_id = str(uuid.uuid4())
    write_ndjson(path, [{"event_id": event_id, "seed": True, "a_field_from_later": 1}])
    [line] = read_history(path)
    assert (str(line.event_id), line.fields) == (event_id, {"seed": True})
    write_ndjson(path, [{"event_id": event_id, "seed": "sometimes"}])
    with pytest.raises(MalformedFile, match="line 1"):
        read_history(path)
