"""Saved indexes: the file holds the index as it was when the save took it, whatever changes come
after, and the index's lock is held only for that moment (a fork), not for the pickling and writing."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from recall import snapshots
from recall.engine import Candidate, RecallIndex
from recall.snapshots import snapshot_read, snapshot_write

POOL = "p"


def index_of(n: int) -> RecallIndex:
    rows = [
        Candidate(
            id=f"f{i}",
            text=f"主人喜欢第{i}种茶 tea number {i}",
            tier="fact",
            pool=POOL,
            key=i,
            vector=np.eye(4)[i % 4],
        )
        for i in range(n)
    ]
    return RecallIndex(rows, dim=4)


def ids(index: RecallIndex, query: str) -> list[str]:
    return [h.candidate.id for h in index.search(query)]


# Changes a test wants made in the parent right after the fork (while the save still holds the lock).
_after_fork_in_parent: list = []
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_parent=lambda: [change() for change in _after_fork_in_parent])


@pytest.mark.skipif(not snapshots.FORK_SAVES, reason="no fork here: saves copy under the lock")
def test_a_change_made_the_moment_after_the_fork_is_not_in_the_file(tmp_path) -> None:
    index = index_of(40)
    path = tmp_path / "index.snapshot"
    _after_fork_in_parent.append(lambda: index.apply(pool=POOL, removed=[3]))
    try:
        assert snapshot_write(path, version=5, index=index)
    finally:
        _after_fork_in_parent.clear()
    saved = snapshot_read(path)
    assert saved is not None and saved[0] == 5
    assert "f3" in ids(saved[1], "第3种茶")  # the file: before the delete
    assert "f3" not in ids(index, "第3种茶")  # the process: after it


@pytest.mark.skipif(not snapshots.FORK_SAVES, reason="no fork here: saves copy under the lock")
def test_the_lock_is_free_while_the_child_writes(tmp_path, monkeypatch) -> None:
    index = index_of(2000)
    real_waitpid = os.waitpid
    free: list[bool] = []

    def waitpid(pid: int, options: int):
        # While the saving thread waits for its child, a query's thread must get the index.
        def query() -> None:
            got = index.lock.acquire(timeout=2)
            free.append(got)
            if got:
                index.lock.release()

        taker = threading.Thread(target=query)
        taker.start()
        taker.join()
        return real_waitpid(pid, options)

    monkeypatch.setattr(os, "waitpid", waitpid)
    assert snapshot_write(tmp_path / "index.snapshot", version=1, index=index)
    assert free == [True]
    saved = snapshot_read(tmp_path / "index.snapshot")
    assert saved is not None and len(saved[1]) == 2000


def test_without_fork_the_save_copies_under_the_lock_and_writes_the_same_file(tmp_path, monkeypatch) -> None:
    index = index_of(40)
    forked, copied = tmp_path / "forked.snapshot", tmp_path / "copied.snapshot"
    assert snapshot_write(forked, version=2, index=index)
    monkeypatch.setattr(snapshots, "FORK_SAVES", False)
    assert snapshot_write(copied, version=2, index=index)
    assert forked.read_bytes() == copied.read_bytes()


def test_an_unwritable_folder_is_no_save_and_no_error(tmp_path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert snapshot_write(blocked / "index.snapshot", version=1, index=index_of(4)) is False
    assert not list(tmp_path.glob("**/*.tmp"))


def test_a_removed_row_leaves_no_text_in_the_index_or_its_snapshot(tmp_path) -> None:
    index = index_of(70)  # three blocks of the string column: first, middle and the open last one
    for key in (3, 40, 69):
        index.apply(pool=POOL, removed=[key])
    texts = list(index.rows.strings.column(1))
    assert [t for t in texts if "第3种" in t or "第40种" in t or "第69种" in t] == []
    assert texts[4] == "主人喜欢第4种茶 tea number 4" and texts[41] == "主人喜欢第41种茶 tea number 41"
    assert "f41" in ids(index, "第41种茶")
    path = tmp_path / "index.snapshot"
    assert snapshot_write(path, version=2, index=index)
    saved = snapshot_read(path)
    assert saved is not None
    assert not [t for t in saved[1].rows.strings.column(1) if "第40种" in t]
    assert "f68" in ids(saved[1], "第68种茶")
