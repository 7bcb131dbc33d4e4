"""The pure part of refine (reference §3.8): clusters by cosine ≥ 0.82 with their caps and the 30-day
revisit rule, and the parsing of the model's action list."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from reflections.refine import (
    CLUSTERS_PER_PASS,
    MAX_MEMBERS,
    RefineItem,
    cluster_hash,
    refine_actions,
    refine_clusters,
)

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)
DIM = 16


def axis(k: int, wobble: float = 0.0, j: int = 15) -> np.ndarray:
    """Unit vector ``k``, tilted towards axis ``j`` by ``wobble`` (cosine with axis ``k`` ≈ 1 - wobble²/2)."""
    v = np.zeros(DIM, dtype=np.float32)
    v[k] = 1.0
    v[j] += wobble
    return v


def items(*vectors: np.ndarray) -> list[RefineItem]:
    return [RefineItem(key=f"e{i}", vector=v) for i, v in enumerate(vectors)]


def test_only_items_at_or_above_the_threshold_cluster():
    found = refine_clusters(items(axis(0), axis(0, 0.3), axis(1), axis(0, 1.0)), now=NOW)
    # cos(axis0, axis0+1.0·axis15) ≈ 0.71 < 0.82: the fourth stays out; axis 1 is unrelated.
    assert [c.keys for c in found] == [("e0", "e1")]
    assert found[0].hash == cluster_hash(["e1", "e0"])


def test_a_cluster_holds_at_most_six_members_and_the_rest_seed_another():
    eight = items(*(axis(0, 0.01 * n) for n in range(8)))
    found = refine_clusters(eight, now=NOW)
    assert [len(c.keys) for c in found] == [MAX_MEMBERS, 2]
    assert set(found[0].keys).isdisjoint(found[1].keys)


def test_at_most_three_clusters_a_pass():
    pairs = [v for k in range(5) for v in (axis(k), axis(k, 0.1))]
    found = refine_clusters(items(*pairs), now=NOW)
    assert len(found) == CLUSTERS_PER_PASS
    assert [c.keys for c in found] == [("e0", "e1"), ("e2", "e3"), ("e4", "e5")]


def test_a_cluster_refined_within_30_days_is_left_alone_until_then():
    digest = cluster_hash(["e0", "e1"])
    stamped = [
        RefineItem(key="e0", vector=axis(0), last_hash=digest, last_at=NOW - timedelta(days=29)),
        RefineItem(key="e1", vector=axis(0, 0.1), last_hash=digest, last_at=NOW - timedelta(days=29)),
        RefineItem(key="e2", vector=axis(1)),
        RefineItem(key="e3", vector=axis(1, 0.1)),
    ]
    assert [c.keys for c in refine_clusters(stamped, now=NOW)] == [("e2", "e3")]
    later = NOW + timedelta(days=2)
    assert [c.keys for c in refine_clusters(stamped, now=later)] == [("e0", "e1"), ("e2", "e3")]
    # A new member makes it another cluster: asked at once.
    grown = [*stamped[:2], RefineItem(key="e9", vector=axis(0, 0.2))]
    assert [c.keys for c in refine_clusters(grown, now=NOW)] == [("e0", "e1", "e9")]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(-1, 1, width=32), min_size=4, max_size=4), min_size=0, max_size=20))
def test_clusters_respect_every_cap_whatever_the_vectors(raw):
    vectors = [np.asarray(v, dtype=np.float32) for v in raw]
    found = refine_clusters([RefineItem(key=str(i), vector=v) for i, v in enumerate(vectors)], now=NOW)
    seen: set[str] = set()
    assert len(found) <= CLUSTERS_PER_PASS
    for cluster in found:
        assert 2 <= len(cluster.keys) <= MAX_MEMBERS
        assert seen.isdisjoint(cluster.keys)
        seen.update(cluster.keys)
        seed = vectors[int(cluster.keys[0])]
        for key in cluster.keys[1:]:
            other = vectors[int(key)]
            cosine = float(seed @ other) / (float(np.linalg.norm(seed) * np.linalg.norm(other)) or 1.0)
            assert cosine >= 0.82 - 1e-5


def test_actions_are_parsed_and_each_member_used_once():
    reply = [
        {"action": "merge", "ids": [0, 1], "text": " 合并后 "},
        {"action": "modify", "id": 1, "text": "ignored: 1 is taken"},
        {"action": "split", "id": 2, "texts": ["甲", "乙"]},
        {"action": "discard", "id": 3},
        {"action": "modify", "id": 4, "text": "改写"},
        {"action": "merge", "ids": [5], "text": "one id is no merge"},
        {"action": "split", "id": 5, "texts": ["only one part"]},
        {"action": "explode", "id": 5},
        {"action": "discard", "id": 9},
    ]
    actions = refine_actions(reply, 6)
    assert actions is not None
    assert [(a.action, a.members, a.texts) for a in actions] == [
        ("merge", (0, 1), ("合并后",)),
        ("split", (2,), ("甲", "乙")),
        ("discard", (3,), ()),
        ("modify", (4,), ("改写",)),
    ]


def test_an_empty_list_keeps_the_cluster_and_only_invalid_actions_are_a_failure():
    assert refine_actions([], 3) == []
    assert refine_actions({"actions": []}, 3) == []
    assert refine_actions([{"action": "keep"}], 3) == []
    assert refine_actions([{"action": "discard", "id": 7}], 3) is None
    assert refine_actions("discard everything", 3) is None


def test_neighbours_are_found_across_row_blocks():
    rng = np.random.default_rng(7)
    far = rng.normal(size=(300, 64)).astype(np.float32)  # random 64-d directions: cosine well below 0.82
    far[299] = far[0] + 0.01
    far[280] = far[270] + 0.01
    found = refine_clusters([RefineItem(key=str(i), vector=v) for i, v in enumerate(far)], now=NOW, limit=10)
    assert [c.keys for c in found] == [("0", "299"), ("270", "280")]
