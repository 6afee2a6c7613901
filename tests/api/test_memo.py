"""IdentityMemo: a value comes back only for the very objects it was computed from."""

from __future__ import annotations

from rollwise.api.memo import IdentityMemo


def test_the_same_objects_find_the_value() -> None:
    memo: IdentityMemo[str] = IdentityMemo()
    spec = {"replicas": 3}
    memo.put((spec,), "web", "computed")
    assert memo.get((spec,), "web") == "computed"


def test_an_equal_but_different_object_misses() -> None:
    memo: IdentityMemo[str] = IdentityMemo()
    memo.put(({"replicas": 3},), None, "computed")
    assert memo.get(({"replicas": 3},), None) is None


def test_a_different_extra_misses() -> None:
    memo: IdentityMemo[str] = IdentityMemo()
    spec = {"replicas": 3}
    memo.put((spec,), ("web", "rev-1"), "computed")
    assert memo.get((spec,), ("web", "rev-2")) is None


def test_an_entry_keeps_its_objects_alive_so_an_id_is_never_reused() -> None:
    memo: IdentityMemo[int] = IdentityMemo()
    for n in range(100):
        memo.put(({"n": n},), None, n)  # each dict would be freed at once if the memo did not hold it
    held = [anchors[0] for anchors, _ in memo._entries.values()]
    assert sorted(d["n"] for d in held) == list(range(100))


def _computations(extra: object, calls: int) -> int:
    """How many times ``cached`` computed the value over ``calls`` calls for one spec and ``extra``."""
    memo: IdentityMemo[int] = IdentityMemo()
    computed: list[int] = []

    def compute() -> int:
        computed.append(1)
        return 7

    spec = {"replicas": 3}
    for _ in range(calls):
        assert memo.cached((spec,), extra, compute) == 7
    return len(computed)


def test_cached_computes_once() -> None:
    assert _computations(None, 3) == 1


def test_an_unhashable_extra_is_computed_every_time_and_never_raises() -> None:
    assert _computations(["a", "list"], 2) == 2


def test_a_full_memo_starts_over() -> None:
    memo: IdentityMemo[int] = IdentityMemo(limit=2)
    a: dict[str, int] = {}
    b: dict[str, int] = {}
    c: dict[str, int] = {}
    memo.put((a,), None, 1)
    memo.put((b,), None, 2)
    memo.put((c,), None, 3)
    assert memo.get((a,), None) is None
    assert memo.get((c,), None) == 3
