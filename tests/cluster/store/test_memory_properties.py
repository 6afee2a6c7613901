"""Properties of MemoryCluster over random write sequences: the collector leaves no garbage, reads never change,
the change feed and the store agree."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from rollwise.api.errors import ApiStatusError
from rollwise.api.meta import Obj
from rollwise.cluster.store.memory import MemoryCluster

NAMES = ["a", "b", "c", "d", "e"]
KINDS = ["Pod", "PersistentVolumeClaim"]

create_op = st.tuples(
    st.just("create"), st.sampled_from(KINDS), st.sampled_from(NAMES),
    st.lists(st.tuples(st.sampled_from([*KINDS, "stale"]), st.sampled_from(NAMES), st.booleans()), max_size=3),
    st.booleans(),  # with a finalizer
)
delete_op = st.tuples(
    st.just("delete"), st.sampled_from(KINDS), st.sampled_from(NAMES),
    st.sampled_from(["Background", "Foreground", "Orphan"]), st.sampled_from([None, 0, 5]),
)
unfinalize_op = st.tuples(st.just("unfinalize"), st.sampled_from(KINDS), st.sampled_from(NAMES))
operations = st.lists(st.one_of(create_op, delete_op, unfinalize_op), max_size=40)


def _apply(cluster: MemoryCluster, op: tuple[Any, ...]) -> Obj | None:
    verb, kind, name = op[:3]
    if verb == "create":
        refs = []
        for owner_kind, owner_name, block in op[3]:
            if owner_kind == "stale":
                refs.append({"kind": "Pod", "name": owner_name, "uid": f"gone-{owner_name}",
                             "blockOwnerDeletion": block})
                continue
            owner = next((o for o in cluster.list(owner_kind) if o["metadata"]["name"] == owner_name), None)
            if owner is not None:
                refs.append({"kind": owner_kind, "name": owner_name, "uid": owner["metadata"]["uid"],
                             "blockOwnerDeletion": block})
        meta: dict[str, Any] = {"name": name, "ownerReferences": refs}
        if op[4]:
            meta["finalizers"] = ["example.com/hold"]
        return cluster.create({"kind": kind, "metadata": meta, "spec": {}})
    if verb == "delete":
        return cluster.delete(kind, "default", name, propagation=op[3], grace_period_seconds=op[4])
    return cluster.patch(kind, "default", name, {"metadata": {"finalizers": None}})


def _is_waiting(o: Obj) -> bool:
    return o["metadata"].get("deletionTimestamp") is not None and "foregroundDeletion" in (
        o["metadata"].get("finalizers") or ())


@pytest.mark.parametrize("n", examples(100, 300))
def test_random_writes_leave_no_garbage_and_never_change_returned_objects(n: int) -> None:
    @settings(max_examples=n, deadline=None)
    @given(operations)
    def check(ops: list[tuple[Any, ...]]) -> None:
        cluster = MemoryCluster(clock=lambda: 1.0)
        returned: list[tuple[Obj, Obj]] = []
        for op in ops:
            try:
                result = _apply(cluster, op)
            except ApiStatusError:
                continue
            if result is not None:
                returned.append((result, copy.deepcopy(result)))
            for o in cluster.objects():
                returned.append((o, copy.deepcopy(o)))

            live = {o["metadata"]["uid"]: o for o in cluster.objects()}
            for o in live.values():
                if o["metadata"].get("deletionTimestamp") is not None:
                    continue
                for r in o["metadata"].get("ownerReferences") or ():
                    assert r["uid"] in live, f"{o['metadata']['name']} points at a gone owner"
                    assert not _is_waiting(live[r["uid"]]), f"{o['metadata']['name']} outlives a foreground delete"
            for o in live.values():
                if _is_waiting(o):  # a foreground owner waits only for dependents that block it
                    assert any(r.get("uid") == o["metadata"]["uid"] and r.get("blockOwnerDeletion")
                               for d in live.values() for r in d["metadata"].get("ownerReferences") or ())

        assert all(obj == snapshot for obj, snapshot in returned)
        assert len(cluster) == sum(1 for _ in cluster.objects())
        changes, _ = cluster.changes_since(0)
        assert [c.obj["metadata"]["resourceVersion"] for c in changes] == [str(i) for i in range(1, len(changes) + 1)]
        replay: dict[tuple[str, str], Obj] = {}
        for c in changes:
            if c.type == "DELETED":
                del replay[(c.kind, c.name)]
            else:
                replay[(c.kind, c.name)] = c.obj
        assert sorted(replay) == sorted((o["kind"], o["metadata"]["name"]) for o in cluster.objects())
        assert all(cluster.get(kind, "default", name) is o for (kind, name), o in replay.items())

    check()
